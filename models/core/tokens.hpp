#pragma once
// The layout-to-token map, defined once: which tokens device i of an n-device
// context-parallel ring holds, and whose K/V block it sees at each step.
// Header-only, so the CUDA kernels' stand-alone build uses this same map.
//   ring:    contiguous block i of c tokens (Ring Attention, Liu et al. 2023);
//   striped: tokens i, i+n, i+2n, ... (Striped Attention, Brandon et al. 2023);
//   zigzag:  chunks i and 2n-1-i of c/2 tokens each, which balances causal
//            work (Megatron-LM context parallelism; Llama 3's all-gather CP
//            shards its queries the same way).
// Every list is ascending, as the kernels' tile skipping requires.
#include <cstdint>
#include <vector>

#include "models/core/workload.hpp"

namespace ringsim {

inline std::vector<std::int64_t> device_tokens(Layout layout, std::int64_t n, std::int64_t c,
                                               std::int64_t i) {
  std::vector<std::int64_t> t;
  t.reserve(static_cast<std::size_t>(c));
  switch (layout) {
    case Layout::Striped:
      for (std::int64_t a = 0; a < c; ++a) t.push_back(i + n * a);
      break;
    case Layout::Zigzag:
    case Layout::Allgather: {
      const auto h = c / 2;
      for (std::int64_t a = 0; a < h; ++a) t.push_back(i * h + a);
      for (std::int64_t a = 0; a < h; ++a) t.push_back((2 * n - 1 - i) * h + a);
      break;
    }
    default:
      for (std::int64_t a = 0; a < c; ++a) t.push_back(i * c + a);
  }
  return t;
}

// At step s of an n-device ring, device i holds the K/V block that started on
// device (i - s) mod n.
inline std::int64_t ring_kv_source(std::int64_t n, std::int64_t i, std::int64_t s) {
  return ((i - s) % n + n) % n;
}

}  // namespace ringsim
