#include "models/analytic/minblock.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "models/core/errors.hpp"

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

MinblockColumns minblock_columns(double flops, double eff, double bw, double lat, const Workload& w,
                                 const ComputeModel& cm) {
  const auto& s = w.shape;
  MinblockColumns c;
  c.paper = paper_min_block(flops, bw);
  c.gqa = min_block_closed_form(flops, bw, 0, s.heads, s.kv_heads, s.head_dim, 2, false, 1.0);
  c.causal = min_block_closed_form(flops, bw, 0, s.heads, s.heads, s.head_dim, 2, false, 0.5);
  c.backward = min_block_closed_form(flops, bw, 0, s.heads, s.heads, s.head_dim, 2, true, 1.0);
  c.efficiency =
      min_block_closed_form(flops * eff, bw, 0, s.heads, s.heads, s.head_dim, 2, false, 1.0);
  Hardware hw;
  hw.flops = flops;
  hw.efficiency = eff;
  hw.platform = Platform::Flat;
  hw.bandwidth_override = true;
  hw.intra_bw = hw.inter_bw = bw;
  hw.intra_lat = hw.inter_lat = lat;
  c.combined = min_block_for(w, hw, cm);
  return c;
}

std::string minblock_assumptions(const Workload& w, bool from_profile) {
  return fmt::format(
      "paper: MHA, bf16, forward, peak FLOP/s, c >= F/B | gqa: {} ({} of {} KV heads) | causal: a "
      "causal mask (the lightest step does half a block) | backward: K,V,dK,dV (fp32 grads), 2.5x "
      "compute | efficiency: catalog kernel fraction | combined: {} layout, {}, {}, {}, GQA, "
      "efficiency{}, link latency",
      w.shape.name, w.shape.kv_heads, w.shape.heads, to_string(w.layout),
      w.causal ? "causal" : "non-causal", to_string(w.pass), to_string(w.dtype),
      from_profile ? " from the profile" : "");
}

std::vector<MinblockRow> minblock_rows(
    const Catalog& cat, const Workload& w, DType dtype,
    const std::function<std::unique_ptr<ComputeModel>(const Hardware&)>& model) {
  std::vector<MinblockRow> rows;
  for (const auto& d : cat.devices()) {
    const double F = d.peak(dtype);
    if (F <= 0) continue;
    std::set<std::string> links{d.default_intra, d.default_inter};
    for (const auto& ln : links) {
      const auto& ic = cat.interconnect(ln);
      Hardware hw;
      hw.flops = F;
      hw.efficiency = d.attention_efficiency;
      const auto cm = model(hw);
      rows.push_back(
          {d.name, ic.name, F, ic.bandwidth,
           minblock_columns(F, d.attention_efficiency, ic.bandwidth, ic.latency, w, *cm)});
    }
  }
  return rows;
}

}  // namespace ringsim
