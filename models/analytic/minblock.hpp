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
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/core/catalog.hpp"
#include "models/core/profile.hpp"
#include "models/core/workload.hpp"
#include "models/kernel/implementation.hpp"

namespace ringsim {

// Smallest block (tokens per device) whose every step's device work (the
// kernel calls and merge, slowed by interference while the transfer runs;
// not launch stalls) covers its transfer (bandwidth + latency), for this
// workload's layout, pass, dtype, heads and implementation; 0 when the layout
// does not overlap (ulysses, allgather); -1 when no block hides it. Layouts
// that halve blocks (zigzag, allgather, hybrid with an odd Ulysses degree)
// answer an even block.
// fwdbwd: the larger of the forward and backward answers (-1 if either never hides).
std::int64_t min_block_for(const Workload& w, const Hardware& hw, const Implementation& im);
// One pass of the workload's ring (forward, or backward with dK/dV).
std::int64_t min_block_for_pass(const Workload& w, const Hardware& hw, const Implementation& im,
                                bool backward);
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

// The minimum block with the paper's assumptions dropped one at a time (MHA,
// non-causal ring, forward, peak FLOP/s), and all of them for this workload
// (`combined`: its GQA, layout, mask, pass, dtype, the kernel's rate, the
// link's latency; 0 when it never hides).
struct MinblockColumns {
  double paper = 0, gqa = 0, causal = 0, backward = 0, efficiency = 0;
  std::int64_t combined = 0;
  // Forward ring bytes per token of block, as run and plan send them
  // (pass_bytes with the implementation: its grouped or expanded K/V).
  double ring_bytes_per_token = 0;
  double ring_bandwidth = 0;  // bytes/s per direction `combined` charges a ring step at
};
// `hw`: the device (flops, efficiency) on a flat ring of one link (intra_bw,
// intra_lat, intra_kind).
// `nominal_bw`: the link's catalog bandwidth, which the paper-style columns
// use (0: hw.intra_bw); `combined` uses the rate a ring step gets, hw.intra_bw.
MinblockColumns minblock_columns(const Hardware& hw, const Workload& w, const Implementation& im,
                                 double nominal_bw = 0);

// What each column assumes, in one line (`from_profile`: the kernel rate is a
// measured profile's).
std::string minblock_assumptions(const Workload& w, bool from_profile);

// One catalog device on one of its default interconnects.
struct MinblockRow {
  std::string device, interconnect;
  double flops = 0, bandwidth = 0;
  MinblockColumns columns;
  std::string compute_model;  // the implementation's rates (ComputeModel::name)
};
// Every catalog device with a peak for `dtype`, on each of its default
// interconnects; `model` gives the implementation on a device's hardware.
// `only_device` keeps one device (refused without a peak for `dtype`);
// `links` replaces the default interconnects (unknown names are refused).
// Each device runs at its power as deployed (Device::deploy), or at
// `only_device_watts` when it is above 0 (the --power-limit of the one device
// kept), with `only_device_hbm` as its HBM rate when above 0
// (--hbm-bandwidth).
std::vector<MinblockRow> minblock_rows(
    const Catalog& cat, const Workload& w, DType dtype,
    const std::function<std::shared_ptr<const Implementation>(const Hardware&)>& model,
    const std::string& only_device = "", const std::vector<std::string>& links = {},
    double only_device_watts = 0, double only_device_hbm = 0);
// The flat one-link hardware of a device running at `watts` (Device::deploy)
// on an interconnect.
Hardware flat_link_hardware(const Device& d, const Interconnect& ic, DType dtype, double watts);

}  // namespace ringsim
