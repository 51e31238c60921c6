#include "models/kernel/kernel_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ringsim {

KernelModel::KernelModel(const KernelSpec& spec, KernelCurves curves, int sm_count,
                         std::string device)
    : spec_(spec), curves_(std::move(curves)), sms_(sm_count), device_(std::move(device)) {}

std::string KernelModel::name() const {
  return fmt::format("{} ({})", spec_.name,
                     curves_.published() ? "published curves of " + curves_.curve_device()
                                         : "catalog prior, no published curve for " + device_);
}

TileSize KernelModel::tile(bool backward, CallMask mask, int head_dim) const {
  const std::string pass = backward ? "bwd" : "fwd";
  const KernelTiles* best = nullptr;
  for (const auto& t : spec_.tiles) {
    if (t.pass != pass) continue;
    if (t.head_dim == head_dim) {
      best = &t;
      break;
    }
    // Nearest head dim; a head_dim 0 entry stands for any.
    if (!best || t.head_dim == 0 ||
        (best->head_dim != 0 &&
         std::abs(t.head_dim - head_dim) < std::abs(best->head_dim - head_dim)))
      best = &t;
  }
  if (!best) return {};
  return mask == CallMask::Full ? best->full : best->causal;
}

double KernelModel::occupancy(double ctas) const {
  if (sms_ <= 0 || ctas <= 0) return 1;
  const double waves = std::ceil(ctas / sms_);
  return ctas / (waves * sms_);
}

double KernelModel::call_ctas(const KernelCall& c, bool backward, int head_dim) const {
  const auto t = tile(backward, c.mask, head_dim);
  const auto n = backward ? c.k : c.q;
  const auto per = backward ? t.k : t.q;
  if (per <= 0 || n <= 0) return 0;
  // Forward: one thread block per query tile and head; backward: per key tile.
  return std::ceil(static_cast<double>(n) / static_cast<double>(per)) *
         static_cast<double>(c.heads);
}

// The published rate at the call's loop length, corrected for how the
// launch's thread blocks fill the SMs against how the benchmark's did.
// `launch_ctas` < 0: the call is its own launch (its part's own blocks).
double KernelModel::loop_rate(bool backward, CallMask mask, int head_dim, const KernelCall& c,
                              double launch_ctas) const {
  const double L = static_cast<double>(backward ? c.q : c.k);
  const double r = curves_.rate(backward, mask, head_dim, L);
  const auto t = tile(backward, mask, head_dim);
  if (sms_ <= 0 || t.q <= 0) return r;
  double ctas = launch_ctas;
  if (ctas < 0) {
    const double tiles_call = std::ceil(static_cast<double>(backward ? c.k : c.q) /
                                        static_cast<double>(backward ? t.k : t.q));
    ctas = tiles_call * static_cast<double>(c.heads);
  }
  // FlashAttention-2/-3 benchmarks: batch = 16384 / L sequences, 2048 / d heads.
  const double batch = std::max(1.0, 16384.0 / L), heads = std::max(1.0, 2048.0 / head_dim);
  const double bench_ctas =
      std::ceil(L / static_cast<double>(backward ? t.k : t.q)) * batch * heads;
  return r * occupancy(ctas) / occupancy(bench_ctas);
}

std::uint64_t KernelModel::executed_pairs(const KernelCall& c, int head_dim, bool backward) const {
  const auto parts = split_call(c);
  const auto t = tile(backward, CallMask::Causal, head_dim);
  return call_pairs(parts.full) + call_tile_pairs(parts.causal, t.q, t.k);
}

double KernelModel::call_seconds(const KernelCall& c, int head_dim, bool backward) const {
  return timed(c, head_dim, backward, -1);
}

double KernelModel::launch_seconds(const std::vector<KernelCall>& calls, int head_dim,
                                   bool backward) const {
  // One varlen launch: every call's thread blocks fill the GPU's waves
  // together, while each block still walks its own call's keys (so each call
  // keeps the rate of its own loop length and is charged its own tiles).
  double ctas = 0;
  for (const auto& c : calls) ctas += call_ctas(c, backward, head_dim);
  double s = 0;
  for (const auto& c : calls) s += timed(c, head_dim, backward, ctas);
  return s;
}

double KernelModel::timed(const KernelCall& c, int head_dim, bool backward,
                          double launch_ctas) const {
  const double fpe = flops_per_entry(head_dim, backward);
  const auto parts = split_call(c);
  double s = 0;
  if (const auto e = call_pairs(parts.full); e > 0)
    s += static_cast<double>(e) * fpe /
         loop_rate(backward, CallMask::Full, head_dim, parts.full, launch_ctas);
  if (const auto e = call_pairs(parts.causal); e > 0) {
    const auto& sq = parts.causal;
    const auto t = tile(backward, CallMask::Causal, head_dim);
    // Per executed FLOP, a causal square of L = q runs at r_causal(L) x
    // tiles(L) / useful(L); this call is charged its own tiles at that rate.
    const KernelCall ref{sq.q, sq.q, CallMask::Causal, 0, 1};
    const double ref_tiles = static_cast<double>(call_tile_pairs(ref, t.q, t.k));
    const double ref_useful = static_cast<double>(call_pairs(ref));
    const double r =
        loop_rate(backward, CallMask::Causal, head_dim, sq, launch_ctas) * ref_tiles / ref_useful;
    s += static_cast<double>(call_tile_pairs(sq, t.q, t.k)) * fpe / r;
  }
  return s;
}

double KernelModel::seconds(std::uint64_t entries, std::int64_t block, int head_dim, bool backward,
                            bool partial_mask) const {
  if (entries == 0) return 0;
  const auto mask = partial_mask ? CallMask::Causal : CallMask::Full;
  return static_cast<double>(entries) * flops_per_entry(head_dim, backward) /
         curves_.rate(backward, mask, head_dim, static_cast<double>(block));
}

double KernelModel::nominal_flops(std::int64_t length, int head_dim, bool backward) const {
  return curves_.rate(backward, CallMask::Full, head_dim, static_cast<double>(length));
}

}  // namespace ringsim
