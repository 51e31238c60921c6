#pragma once
// Merging partial attention results between ring steps. For one query row, two
// partial results over disjoint key sets, (O_a, LSE_a) and (O_b, LSE_b), combine as
//   LSE = log(exp(LSE_a) + exp(LSE_b)),  O = exp(LSE_a - LSE) O_a + exp(LSE_b - LSE) O_b
// (Liu et al. 2023, "Ring Attention", and the blockwise softmax of Rabe & Staats
// 2021), computed around max(LSE_a, LSE_b) so nothing overflows. A side that saw no
// key has LSE = -inf and weight 0; if neither did, O = 0 and LSE = -inf.
#include <cmath>
#include <cstdint>

#include "kernels/cuda/device_ops.cuh"

namespace ringsim::kernels::cuda {

// acc <- acc (+) part, in place; rows = tokens x heads, each row d floats.
// One warp per row: all lanes read the old LSE before lane 0 overwrites it.
RS_KERNEL void RS_LAUNCH_BOUNDS(256)
    lse_merge_kernel(float* acc_o, float* acc_lse, const float* part_o, const float* part_lse,
                     std::int64_t rows, int d) {
  using namespace dev;
  const std::int64_t row = static_cast<std::int64_t>(bid_x()) * 8 + warp();
  const bool valid = row < rows;
  const float a = valid ? acc_lse[row] : -INFINITY, b = valid ? part_lse[row] : -INFINITY;
  const float mx = fmaxf(a, b);
  const float wa = a == -INFINITY ? 0.f : expf(a - mx);
  const float wb = b == -INFINITY ? 0.f : expf(b - mx);
  const float sum = wa + wb;
  const float inv = sum > 0.f ? 1.f / sum : 0.f;
  sync_warp();
  if (!valid) return;
  for (int c = static_cast<int>(lane()); c < d; c += 32) {
    float* o = acc_o + row * d + c;
    *o = (wa * *o + wb * part_o[row * d + c]) * inv;
  }
  if (lane() == 0) acc_lse[row] = sum > 0.f ? mx + logf(sum) : -INFINITY;
}

// fp32 -> storage type, elementwise (the ring's final output).
template <bool kBf16>
RS_KERNEL void RS_LAUNCH_BOUNDS(256)
    to_storage_kernel(std::uint16_t* dst, const float* src, std::int64_t n) {
  using namespace dev;
  const std::int64_t i = static_cast<std::int64_t>(bid_x()) * 256 + tid();
  if (i < n) dst[i] = from_float<kBf16>(src[i]);
}

}  // namespace ringsim::kernels::cuda
