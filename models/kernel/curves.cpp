#include "models/kernel/curves.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace ringsim {

double interpolate_log(const std::vector<double>& xs, const std::vector<double>& ys, double x) {
  if (x <= xs.front()) return ys.front();
  if (x >= xs.back()) return ys.back();
  const auto hi = std::upper_bound(xs.begin(), xs.end(), x) - xs.begin();
  const auto lo = hi - 1;
  const double t = (std::log(x) - std::log(xs[lo])) / (std::log(xs[hi]) - std::log(xs[lo]));
  return ys[lo] + t * (ys[hi] - ys[lo]);
}

KernelCurves::KernelCurves(const KernelSpec& spec, const KernelSpec* from,
                           const std::string& device, double prior_flops, double clock_scale)
    : prior_(prior_flops), scale_(clock_scale * spec.rate_scale), rate_scale_(spec.rate_scale) {
  const auto& src = from ? *from : spec;
  std::string dev = device;
  for (const auto* k : {&spec, from})
    if (k && k->curves_from_device.count(device)) {
      dev = k->curves_from_device.at(device);
      break;
    }
  for (const auto& c : src.curves)
    if (c.device == dev) curves_.push_back(c);
  if (!curves_.empty()) curve_device_ = dev;
}

std::vector<int> KernelCurves::head_dims() const {
  std::set<int> s;
  for (const auto& c : curves_) s.insert(c.head_dim);
  return {s.begin(), s.end()};
}

int KernelCurves::nearest_head_dim(int head_dim) const {
  int best = 0;
  for (int d : head_dims())
    if (best == 0 || std::abs(d - head_dim) < std::abs(best - head_dim) ||
        (std::abs(d - head_dim) == std::abs(best - head_dim) && d > best))
      best = d;
  return best;
}

const KernelCurve* KernelCurves::find(const std::string& pass, CallMask mask, int hd) const {
  for (const auto& c : curves_)
    if (c.pass == pass && c.mask == mask && c.head_dim == hd) return &c;
  return nullptr;
}

// TFLOP/s in the curves; FLOP/s out.
std::optional<double> KernelCurves::direct(const std::string& pass, CallMask mask, int hd,
                                           double L) const {
  const auto* c = find(pass, mask, hd);
  if (!c) return std::nullopt;
  return 1e12 * scale_ * interpolate_log(c->lengths, c->tflops, L);
}

std::optional<double> KernelCurves::pass_rate(bool backward, CallMask mask, int hd,
                                              double L) const {
  const auto f = direct("fwd", mask, hd, L), fb = direct("fwdbwd", mask, hd, L);
  if (!backward) return f ? f : fb;
  if (auto b = direct("bwd", mask, hd, L)) return b;
  if (f && fb) {
    const double inv = 3.5 / *fb - 1.0 / *f;
    if (inv > 0) return 2.5 / inv;
  }
  return fb;
}

double KernelCurves::rate(bool backward, CallMask mask, int head_dim, double L) const {
  if (curves_.empty()) return prior_;
  const int hd = nearest_head_dim(head_dim);
  if (auto r = pass_rate(backward, mask, hd, L)) return *r;
  // A causal curve missing for this pass: scale its full curve by the other
  // pass's causal/full ratio. (A full curve missing: the same, inverted.)
  const CallMask other = mask == CallMask::Full ? CallMask::Causal : CallMask::Full;
  const auto same_other = pass_rate(backward, other, hd, L);
  const auto x_mask = pass_rate(!backward, mask, hd, L),
             x_other = pass_rate(!backward, other, hd, L);
  if (same_other && x_mask && x_other) return *same_other * *x_mask / *x_other;
  if (same_other) return *same_other;
  if (x_mask) return *x_mask;
  return prior_;
}

std::string KernelCurves::describe(int head_dim) const {
  if (curves_.empty())
    return fmt::format("no published curve for this device: catalog prior {:.0f} TFLOP/s, flat",
                       prior_ / 1e12);
  const double clock = scale_ / rate_scale_;
  auto at = clock < 1 ? fmt::format(", x{:.3f} for the power limit", clock) : "";
  if (rate_scale_ != 1) at += fmt::format(", x{:g} (rate_scale, moved by --set)", rate_scale_);
  return fmt::format("published curves of {} at head dim {} (asked {}), log-linear in length{}",
                     curve_device_, nearest_head_dim(head_dim), head_dim, at);
}

}  // namespace ringsim
