// GEMMs by shape and hardware as deployed, worked out by hand
// (models/kernel/gemm.hpp, models/core/catalog.hpp PowerModel).
#include <gtest/gtest.h>

#include <cmath>

#include "models/core/catalog.hpp"
#include "models/kernel/gemm.hpp"

namespace ringsim {
namespace {

// 1e15 FLOP/s over 132 SMs, one 128 x 128 tile shape, no memory floor.
GemmRates rates(double hbm = 0) {
  GemmRates r;
  r.peak = 1e15;
  r.efficiency = 1;
  r.sms = 132;
  r.tiles = {{128, 128}};
  r.hbm = hbm;
  return r;
}

TEST(GemmByShape, OneFullWave) {
  // 1536 x 1408 = 12 x 11 = 132 tiles: one wave. A tile: 2 x 128 x 128 x 4096
  // = 134,217,728 FLOPs at 1e15 / 132 per SM = 17.716740096 us.
  const auto t = gemm_time({1536, 1408, 4096}, rates());
  EXPECT_EQ(t.tiles, 132);
  EXPECT_EQ(t.waves, 1);
  EXPECT_NEAR(t.seconds, 17.716740096e-6, 1e-18);
  // ... which is the FLOP roofline: the tiles fill the wave exactly.
  EXPECT_NEAR(t.seconds, 2.0 * 1536 * 1408 * 4096 / 1e15, 1e-18);
}

TEST(GemmByShape, ATileFillCostsShortInnerDimensions) {
  // fill 100, best_k 900: the best shape's K runs at 900/1000 of the
  // fill-free rate, so a GEMM at k >= 900 keeps the best-shape rate and
  // k = 100 runs at (100/200) / (900/1000) = 5/9 of it.
  auto r = rates();
  r.fill = GemmFill{100, 900};
  EXPECT_DOUBLE_EQ(r.fill.factor(900), 1.0);
  EXPECT_DOUBLE_EQ(r.fill.factor(4096), 1.0);
  EXPECT_NEAR(r.fill.factor(100), 5.0 / 9.0, 1e-15);
  // The one-wave GEMM above at k = 100: 2 x 128 x 128 x 100 FLOPs per tile
  // at 1e15 / 132 x 5/9 per SM = 0.7785 us (x 9/5 of 0.4325).
  const auto t = gemm_time({1536, 1408, 100}, r);
  EXPECT_NEAR(t.seconds, 2.0 * 128 * 128 * 100 / (1e15 / 132) * 9.0 / 5.0, 1e-18);
  // ... and at k = 4096 nothing changes.
  EXPECT_NEAR(gemm_time({1536, 1408, 4096}, r).seconds, 17.716740096e-6, 1e-18);
  // No fill given (fill_k 0): the factor is 1 at any k.
  EXPECT_DOUBLE_EQ(GemmFill{}.factor(1), 1.0);
}

TEST(GemmByShape, CatalogFillFromXlasTable) {
  // H100: bf16 fill 127 with the MAMF best shape's K 13,312; FP8 218, 14,336.
  // At Llama 3 8B's K = 4096: (4096/4223) / (13312/13439) = 0.97918 bf16,
  // (4096/4314) / (14336/14554) = 0.96390 FP8.
  const auto& h = Catalog::embedded().device("h100-sxm");
  EXPECT_NEAR(h.gemm_fill_bf16.factor(4096), (4096.0 / 4223) / (13312.0 / 13439), 1e-15);
  EXPECT_NEAR(h.gemm_fill_bf16.factor(4096), 0.97918, 1e-5);
  EXPECT_NEAR(h.gemm_fill_fp8.factor(4096), 0.96390, 1e-5);
  // B200's best shapes have K = 3072: Llama's K = 4096 keeps the best rate.
  EXPECT_DOUBLE_EQ(Catalog::embedded().device("b200").gemm_fill_bf16.factor(4096), 1.0);
  // No published table for A100: no fill.
  EXPECT_DOUBLE_EQ(Catalog::embedded().device("a100-80gb").gemm_fill_bf16.factor(64), 1.0);
}

TEST(GemmByShape, OneRowMoreCostsASecondWave) {
  // 1537 rows: 13 x 11 = 143 tiles, 2 waves: twice the time for 0.07% more work.
  const auto t = gemm_time({1537, 1408, 4096}, rates());
  EXPECT_EQ(t.tiles, 143);
  EXPECT_EQ(t.waves, 2);
  EXPECT_NEAR(t.seconds, 2 * 17.716740096e-6, 1e-18);
}

TEST(GemmByShape, ADecodeRowIsBoundByReadingTheWeights) {
  // m = 1, 4096 x 4096 bf16 weights: (4096 + 4096^2) x 2 B read + 4096 x 2 B
  // written = 33,570,816 B at 1e12 B/s = 33.570816 us, against one wave of
  // compute (17.7 us).
  const auto t = gemm_time({1, 4096, 4096}, rates(1e12));
  EXPECT_TRUE(t.memory_bound());
  EXPECT_NEAR(t.seconds, 33.570816e-6, 1e-18);
  EXPECT_NEAR(t.compute_s, 17.716740096e-6, 1e-18);
}

TEST(GemmByShape, BackwardShapes) {
  const auto [dx, dw] = backward_gemms({16384, 4096, 1024});
  EXPECT_EQ(dx.m, 16384);
  EXPECT_EQ(dx.n, 1024);
  EXPECT_EQ(dx.k, 4096);
  EXPECT_EQ(dw.m, 1024);
  EXPECT_EQ(dw.n, 4096);
  EXPECT_EQ(dw.k, 16384);
}

TEST(PowerLimit, ClockFollowsTheCubeRootOfDynamicPower) {
  // H100: 700 W TDP, 275 W static: at 500 W the clock is (225 / 425)^(1/3) =
  // 0.80897 of full, so the 989 TF/s bf16 peak becomes 799.8 TF/s, Meta's
  // "800 TF/s at 500 W" that the static power was derived from.
  PowerModel p;
  p.tdp_w = 700;
  p.static_w = 275;
  EXPECT_NEAR(p.clock_scale(500), std::cbrt(225.0 / 425.0), 1e-15);
  EXPECT_NEAR(989e12 * p.clock_scale(500), 800e12, 0.001 * 800e12);
  EXPECT_DOUBLE_EQ(p.clock_scale(700), 1.0);
  EXPECT_DOUBLE_EQ(p.clock_scale(900), 1.0);
}

// The rate the GEMM model gives (M, K, N) on `d` in a burst at its rated power.
double model_rate(const Device& d, std::int64_t m, std::int64_t k, std::int64_t n) {
  GemmRates r;
  r.peak = d.peak_bf16;
  r.efficiency = d.gemm_efficiency;
  r.sms = d.sm_count;
  r.tiles = d.gemm_tiles;
  r.fill = d.gemm_fill_bf16;
  return 2.0 * m * k * n / gemm_time({m, n, k}, r).seconds;
}

TEST(PowerLimit, CatalogGemmSustainedFromMsmf) {
  // stas00/ml-engineering's MAMF/MSMF table (branch fast-mamf, commit
  // 082816f): the sustained matmul (MSMF, saturated, settled clock) over the
  // catalog's best-shape rate, and the burst share MSMF / MAMF on one node.
  const auto& cat = Catalog::embedded();
  const auto& h200 = cat.device("h200");
  EXPECT_NEAR(h200.gemm_sustained_bf16, 708.5e12 / (h200.peak_bf16 * h200.gemm_efficiency), 5e-5);
  EXPECT_NEAR(h200.gemm_sustained_fp8, 1288.7e12 / (h200.peak_fp8 * h200.fp8_gemm_efficiency),
              5e-5);
  EXPECT_NEAR(h200.burst_sustained, 708.5 / 841.9, 5e-5);
  // The H100 die's other parts at the same 700 W: the same sustained rates
  // over their own best-shape figures.
  for (const char* n : {"h100-sxm", "h100-sxm-96gb", "h800"}) {
    const auto& d = cat.device(n);
    EXPECT_NEAR(d.gemm_sustained_bf16, 708.5e12 / (d.peak_bf16 * d.gemm_efficiency), 5e-5) << n;
    EXPECT_NEAR(d.gemm_sustained_fp8, 1288.7e12 / (d.peak_fp8 * d.fp8_gemm_efficiency), 5e-5) << n;
    EXPECT_DOUBLE_EQ(d.burst_sustained, h200.burst_sustained) << n;
  }
  const auto& b200 = cat.device("b200");
  EXPECT_NEAR(b200.gemm_sustained_bf16, 1456.3e12 / (b200.peak_bf16 * b200.gemm_efficiency), 5e-5);
  EXPECT_NEAR(b200.gemm_sustained_fp8, 2795.7e12 / (b200.peak_fp8 * b200.fp8_gemm_efficiency),
              5e-5);
  EXPECT_NEAR(b200.burst_sustained, 1456.3 / 1770.9, 5e-5);
  // GB200 carries the B200's shares (its GEMM efficiencies are burst
  // figures): by the clock law, with either static power the catalog holds,
  // its settled clock at 1200 W over the boost its 2.5 PF implies is within
  // 1.1% of the B200's 1339/1965.
  const auto& gb200 = cat.device("gb200");
  EXPECT_NEAR(gb200.gemm_sustained_bf16, 1456.3 / 1770.9, 5e-5);
  EXPECT_NEAR(gb200.gemm_sustained_fp8, 2795.7 / 3435.2, 5e-5);
  const double boost = 1965 * gb200.peak_bf16 / b200.peak_bf16;
  for (double s : {b200.power.static_w, gb200.power.static_w}) {
    const double settled = 1339 * std::cbrt((1200.0 - s) / (1000.0 - s));
    EXPECT_NEAR(settled / boost, 1339.0 / 1965, 0.011 * 1339.0 / 1965) << s;
  }
  // Unmeasured parts hold their best-shape rate.
  EXPECT_DOUBLE_EQ(cat.device("a100-80gb").gemm_sustained_bf16, 1.0);
  EXPECT_DOUBLE_EQ(cat.device("a100-80gb").burst_sustained, 1.0);
  EXPECT_DOUBLE_EQ(cat.device("tpu-v5p").gemm_sustained_bf16, 1.0);
}

TEST(PowerLimit, SustainedGemmsAt500WMatchFbgemm) {
  // FBGEMM pull request 2546, "H100 500W": bf16 (M, K, N) = 8192^3,
  // (65536, 8192, 7168), (65536, 3584, 8192) at 585.23, 575.12, 546.31
  // TFLOP/s, 0.727 of the GEMM model's best-shape rates at 700 W (784.0,
  // 789.4, 774.3; geometric mean). The sustained share (0.8921) under the
  // peak's clock law at 500 W (0.80897) gives 0.7217: within 1%, with no
  // law of the GEMMs' own.
  const auto& d = Catalog::embedded().device("h100-sxm");
  const double measured =
      std::cbrt(585.23e12 / model_rate(d, 8192, 8192, 8192) * 575.12e12 /
                model_rate(d, 65536, 8192, 7168) * 546.31e12 / model_rate(d, 65536, 3584, 8192));
  EXPECT_NEAR(model_rate(d, 8192, 8192, 8192), 784.0e12, 0.1e12);
  EXPECT_NEAR(measured, 0.727, 0.001);
  const double modelled = d.gemm_sustained_bf16 * d.power.clock_scale(500);
  EXPECT_NEAR(modelled, 0.7217, 0.0005);
  EXPECT_NEAR(modelled / measured, 1.0, 0.01);
}

TEST(PowerLimit, CatalogGrandTetonRunsAt500W) {
  const auto& d = Catalog::embedded().device("h100-sxm-96gb");
  EXPECT_DOUBLE_EQ(d.default_power_w, 500);
  EXPECT_TRUE(d.power.present());
  EXPECT_EQ(d.same_compute_as, "h100-sxm");
}

}  // namespace
}  // namespace ringsim
