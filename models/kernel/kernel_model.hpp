#pragma once
// The compute model of a kernel implementation with published curves
// (models/kernel/curves.hpp): a call's time from its shape, mask and tiles.
//   - Full calls: executed = visible pairs, at the full-mask rate of the
//     call's loop length (forward: its keys, which each query tile walks;
//     backward: its queries, which each key tile walks).
//   - Causal calls: split into a full rectangle and the causal square
//     (split_call). The square runs at the published causal rate per useful
//     FLOP of a square of its size; per executed FLOP that rate is
//     r_causal(L) x tiles(L) / useful(L), and a square whose tiles differ (a
//     strict diagonal) is charged its own executed tiles at that rate.
//   - Wave quantization: a call of few tiles x heads leaves SMs idle in its
//     last wave; the rate scales by its occupancy over the benchmark's (the
//     published runs keep batch x length = 16k, hidden 2048).
//   - Varlen launches (packed documents, launch_seconds): one launch runs
//     every document's calls; the occupancy is that of all their thread
//     blocks together, while each call keeps its own loop length's rate.
#include <string>

#include "models/core/kernel_spec.hpp"
#include "models/core/profile.hpp"
#include "models/kernel/curves.hpp"

namespace ringsim {

class KernelModel final : public ComputeModel {
 public:
  KernelModel(const KernelSpec& spec, KernelCurves curves, int sm_count, std::string device);

  // A square call of `block` tokens (entries as given), for the legacy callers.
  double seconds(std::uint64_t entries, std::int64_t block, int head_dim, bool backward,
                 bool partial_mask) const override;
  double call_seconds(const KernelCall& c, int head_dim, bool backward) const override;
  double launch_seconds(const std::vector<KernelCall>& calls, int head_dim,
                        bool backward) const override;
  std::uint64_t executed_pairs(const KernelCall& c, int head_dim, bool backward) const override;
  double nominal_flops(std::int64_t length, int head_dim, bool backward) const override;
  std::string name() const override;

  TileSize tile(bool backward, CallMask mask, int head_dim) const;
  const KernelCurves& curves() const { return curves_; }
  // Fraction of the SMs busy over the waves of `ctas` thread blocks (1 without an SM count).
  double occupancy(double ctas) const;

 private:
  KernelSpec spec_;
  KernelCurves curves_;
  int sms_;
  std::string device_;

  // Thread blocks the call launches (its mask's tiles over its rows x heads).
  double call_ctas(const KernelCall& c, bool backward, int head_dim) const;
  double loop_rate(bool backward, CallMask mask, int head_dim, const KernelCall& c,
                   double launch_ctas) const;
  // The call's seconds when its launch runs `launch_ctas` thread blocks
  // (< 0: the call alone).
  double timed(const KernelCall& c, int head_dim, bool backward, double launch_ctas) const;
};

}  // namespace ringsim
