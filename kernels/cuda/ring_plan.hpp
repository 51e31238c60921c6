#pragma once
// Which tokens each virtual device holds under each context-parallel layout, and
// whose K/V it sees at each ring step. Plain C++, shared by the CUDA ring emulator
// and its CPU checks.
//   ring:    device r holds the contiguous chunk r of n (Liu et al. 2023).
//   zigzag:  2n chunks; device r holds chunks r and 2n-1-r, which balances causal
//            work (the layout of Megatron-LM's context parallelism).
//   striped: device r holds tokens r, r+n, r+2n, ... (Brandon et al. 2023,
//            "Striped Attention").
// Every list is ascending, as the kernels' tile skipping requires.
#include <cstdint>
#include <string>
#include <vector>

#include "models/errors.hpp"

namespace ringsim::kernels::cuda {

enum class RingLayout { kRing, kZigzag, kStriped };

inline const char* layout_name(RingLayout l) {
  return l == RingLayout::kRing ? "ring" : l == RingLayout::kZigzag ? "zigzag" : "striped";
}

inline std::vector<std::int64_t> layout_tokens(RingLayout l, std::int64_t seq, int n, int rank) {
  const int parts = l == RingLayout::kZigzag ? 2 * n : n;
  if (n < 1 || rank < 0 || rank >= n || seq % parts != 0)
    throw InputError("ring layout " + std::string(layout_name(l)) + ": seq " + std::to_string(seq) +
                     " must be a multiple of " + std::to_string(parts));
  std::vector<std::int64_t> t;
  const std::int64_t c = seq / parts;
  auto chunk = [&](std::int64_t i) {
    for (std::int64_t j = 0; j < c; ++j) t.push_back(i * c + j);
  };
  switch (l) {
    case RingLayout::kRing:
      chunk(rank);
      break;
    case RingLayout::kZigzag:
      chunk(rank);
      chunk(2 * n - 1 - rank);
      break;
    case RingLayout::kStriped:
      for (std::int64_t j = 0; j < seq / n; ++j) t.push_back(rank + j * n);
      break;
  }
  return t;
}

// At step s (0 .. n-1) device r holds the K/V that started on device (r - s) mod n.
inline int kv_source(int rank, int step, int n) {
  return ((rank - step) % n + n) % n;
}

}  // namespace ringsim::kernels::cuda
