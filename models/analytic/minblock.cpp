#include "models/analytic/minblock.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "models/analytic/analytic.hpp"
#include "models/core/errors.hpp"
#include "models/core/work.hpp"

namespace ringsim {

double min_block_closed_form(double flops_eff, double bandwidth, double latency, int heads,
                             int kv_heads, int head_dim, int dtype_bytes, bool backward,
                             double kappa) {
  const double a = kappa * heads * flops_per_entry(head_dim, backward) / flops_eff;
  const double beta =
      kv_heads * head_dim * (2.0 * dtype_bytes + (backward ? 8.0 : 0.0)) / bandwidth;
  return (beta + std::sqrt(beta * beta + 4 * a * latency)) / (2 * a);
}

std::int64_t min_block_for(const Workload& w, const Hardware& hw, const ComputeModel& cm) {
  return min_block_for(
      w, hw, Implementation(std::shared_ptr<const ComputeModel>(&cm, [](const ComputeModel*) {})));
}

std::int64_t min_block_for(const Workload& w, const Hardware& hw, const Implementation& im) {
  // The whole pass: fwdbwd needs the larger of the two (backward moves dK/dV
  // too, so its bytes grow faster than its compute); "never" wins.
  std::int64_t m = 0;
  for (bool bwd : {false, true}) {
    if ((bwd && w.pass == Pass::Fwd) || (!bwd && w.pass == Pass::Bwd)) continue;
    const auto p = min_block_for_pass(w, hw, im, bwd);
    if (p < 0) return p;
    m = std::max(m, p);
  }
  return m;
}

std::int64_t min_block_for_pass(const Workload& w, const Hardware& hw, const Implementation& im,
                                bool backward) {
  if (w.layout == Layout::Ulysses || w.layout == Layout::Allgather) return 0;
  const bool halves =
      w.layout == Layout::Zigzag || (w.layout == Layout::Hybrid && w.ulysses() % 2 != 0);
  const std::int64_t unit = halves ? 2 : 1;
  // Steps 1.. are alike (models/analytic/analytic.cpp, step_groups): step 0
  // (the diagonal) and step 1 stand for all; a 2-device ring sends at step 0 only.
  const auto steps = std::max<std::int64_t>(2, num_steps(w));
  auto hides = [&](std::int64_t k) {
    auto wc = w;
    wc.block = k * unit;
    if (wc.devices < 2) wc.devices = 2;
    for (std::int64_t st = 0; st < 2 && st + 1 < steps; ++st) {
      const auto slot = step_slot(wc, hw, im, backward, st);
      if (slot.sends && slot.work_slowed_s < slot.comm_s) return false;
    }
    return true;
  };
  const std::int64_t floor_k =
      std::max<std::int64_t>(1, (im.rates().min_block() + unit - 1) / unit);
  // nullopt: a step of this block cannot be counted (its pairs overflow 64 bits).
  auto hides_at = [&](std::int64_t k) -> std::optional<bool> {
    try {
      return hides(k);
    } catch (const InputError&) {
      return std::nullopt;
    }
  };
  // Settled: the block hides, or a step of it cannot be counted. Both hold
  // from some block on, so one search finds the first block that settles: the
  // minimum block if it hides, "never" if it overflows (every countable block
  // below it is exposed; F/B near 1e9 tokens puts the hiding block just below
  // that edge, where doubling alone would overshoot it).
  auto settles = [&](std::int64_t k) {
    const auto h = hides_at(k);
    return !h || *h;
  };
  std::int64_t lo = floor_k, hi = floor_k;
  // Below a profile's measured range there is no rate: search inside it.
  while (!settles(hi)) {
    if (hi > (std::int64_t{1} << 40)) return -1;  // never hides (a profile can flatten out)
    lo = hi;
    hi *= 2;
  }
  while (lo + 1 < hi) {
    const auto mid = lo + (hi - lo) / 2;
    (settles(mid) ? hi : lo) = mid;
  }
  return hides_at(hi).value_or(false) ? hi * unit : -1;
}

Hardware flat_link_hardware(const Device& d, const Interconnect& ic, DType dtype, double watts) {
  Hardware hw;
  d.deploy(hw, dtype, watts);  // as run and plan resolve it: its power, clock and settled shares
  hw.platform = Platform::Flat;
  hw.bandwidth_override = true;
  hw.intra_name = hw.inter_name = ic.name;
  hw.intra_kind = hw.inter_kind = ic.kind;
  // The rate a ring step gets, as run and plan charge it (Interconnect::p2p_bandwidth).
  hw.intra_bw = hw.inter_bw = ic.p2p_bandwidth();
  hw.intra_lat = hw.inter_lat = ic.latency;
  return hw;
}

MinblockColumns minblock_columns(const Hardware& hw, const Workload& w, const Implementation& im,
                                 double nominal_bw) {
  const auto& s = w.shape;
  const double flops = hw.flops, eff = hw.efficiency,
               bw = nominal_bw > 0 ? nominal_bw : hw.intra_bw;
  MinblockColumns c;
  c.paper = paper_min_block(flops, bw);
  c.gqa = min_block_closed_form(flops, bw, 0, s.heads, s.kv_heads, s.head_dim, 2, false, 1.0);
  c.causal = min_block_closed_form(flops, bw, 0, s.heads, s.heads, s.head_dim, 2, false, 0.5);
  c.backward = min_block_closed_form(flops, bw, 0, s.heads, s.heads, s.head_dim, 2, true, 1.0);
  c.efficiency =
      min_block_closed_form(flops * eff, bw, 0, s.heads, s.heads, s.head_dim, 2, false, 1.0);
  c.combined = min_block_for(w, hw, im);
  c.ring_bandwidth = hw.intra_bw;
  if (w.block > 0)
    c.ring_bytes_per_token =
        static_cast<double>(pass_bytes(w, false, im, hw).ring) / static_cast<double>(w.block);
  return c;
}

std::string minblock_assumptions(const Workload& w, bool from_profile) {
  return fmt::format(
      "paper: MHA, bf16, forward, peak FLOP/s as deployed, c >= F/B | gqa: {} ({} of {} KV heads) "
      "| causal: a "
      "causal mask (the lightest step does half a block) | backward: K,V,dK,dV (fp32 grads), 2.5x "
      "compute | efficiency: catalog kernel fraction | combined: {} layout, {}, {}, {}, K/V as "
      "the kernel's ring passes them (grouped, or expanded to every query head under PyTorch "
      "context_parallel), efficiency{}, the rate a ring step gets on the link (one ICI link on a "
      "TPU), link latency",
      w.shape.name, w.shape.kv_heads, w.shape.heads, to_string(w.layout),
      w.causal ? "causal" : "non-causal", to_string(w.pass), to_string(w.dtype),
      from_profile ? " from the profile" : "");
}

std::vector<MinblockRow> minblock_rows(
    const Catalog& cat, const Workload& w, DType dtype,
    const std::function<std::shared_ptr<const Implementation>(const Hardware&)>& model,
    const std::string& only_device, const std::vector<std::string>& only_links,
    double only_device_watts, double only_device_hbm) {
  std::vector<MinblockRow> rows;
  for (const auto& ln : only_links) cat.interconnect(ln);  // an unknown name is refused
  if (!only_device.empty() && cat.device(only_device).peak(dtype) <= 0)
    throw InputError(fmt::format("--gpu {}: has no {} peak in the catalog; pass another --dtype",
                                 only_device, to_string(dtype)));
  for (const auto& d : cat.devices()) {
    if (d.peak(dtype) <= 0 || (!only_device.empty() && d.name != only_device)) continue;
    std::set<std::string> links{d.default_intra, d.default_inter};
    if (!only_links.empty()) links = {only_links.begin(), only_links.end()};
    for (const auto& ln : links) {
      const auto& ic = cat.interconnect(ln);
      const double watts = only_device_watts > 0 ? only_device_watts : d.deployed_power_w();
      auto hw = flat_link_hardware(d, ic, dtype, watts);
      if (only_device_hbm > 0) hw.hbm_bandwidth = only_device_hbm;
      const auto im = model(hw);
      rows.push_back({d.name, ic.name, hw.flops, ic.bandwidth,
                      minblock_columns(hw, w, *im, ic.bandwidth), im->name()});
    }
  }
  return rows;
}

}  // namespace ringsim
