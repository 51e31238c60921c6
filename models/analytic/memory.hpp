#pragma once
// Per-device working memory of one attention layer, itemised. Ring Attention
// Table 1 counts 6 blocks (query, output, current K/V, incoming K/V) for MHA
// forward; here each buffer is counted in bytes with its real dtype and heads.
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/workload.hpp"

namespace ringsim {

struct MemoryItem {
  std::string name;
  std::uint64_t bytes;
};

struct MemoryBreakdown {
  std::vector<MemoryItem> items;
  std::uint64_t total() const;
};

MemoryBreakdown attention_memory(const Workload& w);

}  // namespace ringsim
