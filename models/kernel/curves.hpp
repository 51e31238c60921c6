#pragma once
// A kernel's published throughput on one device, as a function of sequence
// length, pass, mask and head dim (docs/models.md, "Interpolation rules"):
//   - log-linear in length between published points, clamped outside them
//     (below the shortest: the shortest point's rate, stated as optimistic);
//   - the nearest published head dim (ties: the larger);
//   - a pass without its own curve: backward from forward+backward and
//     forward, r_b = 2.5 / (3.5 / r_fb - 1 / r_f) (the FLOP accounting of the
//     FlashAttention-2 benchmark: forward+backward = 3.5x forward); with only
//     forward+backward published, that rate for both passes;
//   - a causal curve missing for a pass: its full curve times the other
//     pass's causal/full ratio at the same length.
// No curve at all for the device: the catalog's attention_efficiency x peak,
// flat (the prior), and `published()` is false.
#include <optional>
#include <string>
#include <vector>

#include "models/core/kernel_spec.hpp"

namespace ringsim {

class KernelCurves {
 public:
  // The curves of `spec` (or of the kernel it takes them from, `from`) that
  // apply to `device` (directly or by curves_from_device). `prior_flops`:
  // the rate when there are none.
  // `clock_scale`: the rate the device holds over the one the published
  // curves were measured at (bursts at rated power): its peak at the power
  // limit over the rated peak, times the settled clock's share
  // (Hardware::clock_scale x attention_throttle).
  KernelCurves(const KernelSpec& spec, const KernelSpec* from, const std::string& device,
               double prior_flops, double clock_scale = 1);

  // Useful FLOP/s of a square call of `length` tokens.
  double rate(bool backward, CallMask mask, int head_dim, double length) const;
  bool published() const { return !curves_.empty(); }
  // Which device's curves are used ("" = none), and the rules applied, in words.
  const std::string& curve_device() const { return curve_device_; }
  std::string describe(int head_dim) const;
  // Head dims with a curve.
  std::vector<int> head_dims() const;

 private:
  std::vector<KernelCurve> curves_;
  std::string curve_device_;
  double prior_ = 0, scale_ = 1, rate_scale_ = 1;

  const KernelCurve* find(const std::string& pass, CallMask mask, int head_dim) const;
  int nearest_head_dim(int head_dim) const;
  std::optional<double> direct(const std::string& pass, CallMask mask, int hd, double L) const;
  std::optional<double> pass_rate(bool backward, CallMask mask, int hd, double L) const;
};

// Log-linear interpolation in x, clamped at both ends.
double interpolate_log(const std::vector<double>& xs, const std::vector<double>& ys, double x);

}  // namespace ringsim
