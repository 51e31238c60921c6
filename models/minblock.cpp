#include "models/minblock.hpp"

#include <cmath>

#include "models/errors.hpp"

namespace ringsim {

namespace {
// Under a causal mask every layout has a step whose busiest device does about
// half a block: the diagonal step 0 of a contiguous ring, every step of
// striped/zigzag (c(c+1)/2 of c^2 pairs). kappa = 1/2 makes every step hide.
double kappa_of(const Workload& w) {
  return w.causal ? 0.5 : 1.0;
}
double bytes_per_token(const Workload& w, bool backward) {
  const double kv = static_cast<double>(w.local_kv_heads()) * w.shape.head_dim;
  return kv * (2.0 * dtype_bytes(w.dtype) + (backward ? 2.0 * 4 : 0.0));
}
}  // namespace

double min_block_closed_form(double flops_eff, double bandwidth, double latency, int heads,
                             int kv_heads, int head_dim, int dtype_bytes, bool backward,
                             double kappa) {
  const double a = kappa * heads * flops_per_entry(head_dim, backward) / flops_eff;
  const double beta =
      kv_heads * head_dim * (2.0 * dtype_bytes + (backward ? 8.0 : 0.0)) / bandwidth;
  return (beta + std::sqrt(beta * beta + 4 * a * latency)) / (2 * a);
}

std::int64_t min_block_for(const Workload& w, const Hardware& hw, const ComputeModel& cm) {
  if (w.layout == Layout::Ulysses || w.layout == Layout::Allgather) return 0;
  const bool backward = w.pass == Pass::Bwd;  // fwdbwd: the forward ring is the tighter one
  const double bw = hw.ring_bandwidth(w.devices), lat = hw.ring_latency(w.devices);
  const double kappa = kappa_of(w);
  const int H = w.local_heads(), d = w.shape.head_dim;
  const std::int64_t u = w.ulysses();
  // In group-block units for hybrid (the ring moves U*c tokens of H/U heads).
  auto hides = [&](std::int64_t cb) {
    const auto c = static_cast<double>(cb);
    const auto entries = static_cast<std::uint64_t>(std::llround(kappa * c * c)) * H;
    const double compute = cm.seconds(entries, cb, d, backward, kappa < 1.0);
    const double comm = c * bytes_per_token(w, backward) / bw + lat;
    return compute >= comm;
  };
  std::int64_t lo = 1, hi = 1;
  try {
    while (!hides(hi)) {
      if (hi > (std::int64_t{1} << 40)) return -1;  // never hides (a profile can flatten out)
      lo = hi;
      hi *= 2;
    }
  } catch (const InputError&) {
    // Below a profile's measured range: search only inside it.
    if (cm.min_block() > 0) {
      lo = cm.min_block();
      hi = lo;
      while (!hides(hi)) {
        if (hi > (std::int64_t{1} << 40)) return -1;
        lo = hi;
        hi *= 2;
      }
      if (hi == cm.min_block()) return (hi + u - 1) / u;
    } else {
      throw;
    }
  }
  while (lo + 1 < hi) {
    const auto mid = lo + (hi - lo) / 2;
    (hides(mid) ? hi : lo) = mid;
  }
  if (hi == 1 || hides(lo)) hi = lo;
  return (hi + u - 1) / u;  // per-device block
}

}  // namespace ringsim
