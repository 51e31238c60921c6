#pragma once
// Minimum block size for transfers to hide behind compute. Ring Attention
// (arXiv 2310.01889) sec. 3: a step computes 4dc^2 FLOPs per head and sends
// K and V (4cd bytes in bf16), so overlap needs 4dc^2/F >= 4cd/B, c >= F/B.
// The general form drops each of the paper's assumptions:
//   work per step  = kappa * c^2 * H_local * flops_per_entry / F_eff(c)
//   bytes per step = c * kv_heads_local * d * (2b fwd | 2b + 2*4 bwd)
// kappa = 1 without a mask, 1/2 with a causal mask (the lightest step's
// busiest device: the diagonal step of a contiguous ring, every step of
// striped and zigzag), so that every step's transfer hides.
#include <cstdint>

#include "models/profile.hpp"
#include "models/workload.hpp"

namespace ringsim {

// Smallest block (tokens per device) whose step compute covers its transfer
// (bandwidth + latency) for this workload's layout, pass, dtype and heads;
// 0 when the layout does not overlap (ulysses, allgather).
std::int64_t min_block_for(const Workload& w, const Hardware& hw, const ComputeModel& cm);

// Real-valued solution of kappa*a*c^2 = beta*c + L (roofline, no profile).
double min_block_closed_form(double flops_eff, double bandwidth, double latency, int heads,
                             int kv_heads, int head_dim, int dtype_bytes, bool backward,
                             double kappa);

// The paper's c = F/B and its minimum sequence per device 6c (Table 2).
inline double paper_min_block(double flops, double bandwidth) {
  return flops / bandwidth;
}
inline double paper_min_seq(double flops, double bandwidth) {
  return 6.0 * flops / bandwidth;
}

}  // namespace ringsim
