#include "models/kernel/gemm.hpp"

#include <algorithm>
#include <cmath>

namespace ringsim {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

GemmRates bf16_gemm_rates(const Hardware& hw) {
  GemmRates r;
  r.peak = hw.flops * hw.gemm_throttle;
  r.efficiency = hw.gemm_efficiency > 0 ? hw.gemm_efficiency : hw.efficiency;
  r.hbm = hw.hbm_achievable();
  r.sms = hw.sm_count;
  r.tiles = hw.gemm_tiles;
  r.fill = hw.gemm_fill_bf16;
  return r;
}

GemmRates fp8_gemm_rates(const Hardware& hw, double fp8_peak, double fp8_efficiency) {
  auto r = bf16_gemm_rates(hw);
  r.peak = fp8_peak * hw.gemm_throttle_fp8;
  r.efficiency = fp8_efficiency;
  r.in_bytes = 1;
  r.fill = hw.gemm_fill_fp8;
  return r;
}

GemmTime grouped_gemm_time(const std::int64_t* rows, std::size_t groups, std::int64_t n,
                           std::int64_t k, const GemmRates& r) {
  GemmTime t;
  std::int64_t m_all = 0, used = 0;
  for (std::size_t i = 0; i < groups; ++i)
    if (rows[i] > 0) {
      m_all += rows[i];
      ++used;
    }
  if (m_all <= 0 || n <= 0 || k <= 0) return t;
  const double rate = r.peak * r.efficiency * r.fill.factor(static_cast<double>(k));
  if (r.sms <= 0 || r.tiles.empty()) {
    t.compute_s = 2.0 * static_cast<double>(m_all) * n * k / rate;
  } else {
    const double per_sm = rate / r.sms;
    for (const auto& [tm, tn] : r.tiles) {
      std::int64_t tiles = 0;
      for (std::size_t i = 0; i < groups; ++i)
        if (rows[i] > 0) tiles += ceil_div(rows[i], tm) * ceil_div(n, tn);
      const auto waves = ceil_div(tiles, r.sms);
      const double s = static_cast<double>(waves) * 2.0 * tm * tn * static_cast<double>(k) / per_sm;
      if (t.tile_m == 0 || s < t.compute_s) {
        t.compute_s = s;
        t.tiles = tiles;
        t.waves = waves;
        t.tile_m = tm;
        t.tile_n = tn;
      }
    }
  }
  // Each group reads its own B (an expert's weights); A and C are the rows'.
  const double m = static_cast<double>(m_all), nn = static_cast<double>(n),
               kk = static_cast<double>(k);
  const double b = static_cast<double>(used) * kk * nn;
  t.memory_s = r.hbm > 0 ? ((m * kk + b) * r.in_bytes + m * nn * r.out_bytes) / r.hbm : 0;
  t.seconds = std::max(t.compute_s, t.memory_s);
  return t;
}

GemmTime gemm_time(const GemmShape& g, const GemmRates& r) {
  return grouped_gemm_time(&g.m, 1, g.n, g.k, r);
}

std::pair<GemmShape, GemmShape> backward_gemms(const GemmShape& f) {
  return {GemmShape{f.m, f.k, f.n}, GemmShape{f.k, f.n, f.m}};
}

double linears_seconds(const std::vector<GemmShape>& fwd, const GemmRates& r, bool backward) {
  double t = 0;
  for (const auto& g : fwd) {
    if (!backward) {
      t += gemm_time(g, r).seconds;
    } else {
      const auto [dx, dw] = backward_gemms(g);
      t += gemm_time(dx, r).seconds + gemm_time(dw, r).seconds;
    }
  }
  return t;
}

}  // namespace ringsim
