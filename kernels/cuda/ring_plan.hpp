#pragma once
// The ring's token placement for the CUDA ring emulator and its checks: the
// layout-to-token map of models/core/tokens.hpp (the one every part of
// ringsim uses), for the three ring layouts the emulator runs, with the
// divisibility the kernels need checked.
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/errors.hpp"
#include "models/core/tokens.hpp"

namespace ringsim::kernels::cuda {

// ring, zigzag or striped.
using RingLayout = ::ringsim::Layout;

inline const char* layout_name(RingLayout l) {
  return l == RingLayout::Ring ? "ring" : l == RingLayout::Zigzag ? "zigzag" : "striped";
}

// The tokens device `rank` of `n` holds of a `seq`-token sequence.
inline std::vector<std::int64_t> layout_tokens(RingLayout l, std::int64_t seq, int n, int rank) {
  const int parts = l == RingLayout::Zigzag ? 2 * n : n;
  if (n < 1 || rank < 0 || rank >= n || seq % parts != 0 ||
      (l != RingLayout::Ring && l != RingLayout::Zigzag && l != RingLayout::Striped))
    throw InputError("ring layout " + std::string(layout_name(l)) + ": seq " + std::to_string(seq) +
                     " must be a multiple of " + std::to_string(parts));
  return device_tokens(l, n, seq / n, rank);
}

// At step s (0 .. n-1) device r holds the K/V that started on device (r - s) mod n.
inline int kv_source(int rank, int step, int n) {
  return static_cast<int>(ring_kv_source(n, rank, step));
}

}  // namespace ringsim::kernels::cuda
