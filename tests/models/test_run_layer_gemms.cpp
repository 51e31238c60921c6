// `ringsim run --scope layer`: the projections and the MLP, GEMM by GEMM as
// the planner times them (models/kernel/gemm.hpp: thread-block tiles in waves
// over the SMs, a tile's fill at short K, the memory floor), so `run` and
// `plan` charge one model for the same matmuls. Hand-built shapes on the
// catalog's H100 (its tiles and XLA-fitted fill) and on a flat roofline.
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "models/analytic/analytic.hpp"
#include "models/core/catalog.hpp"
#include "models/kernel/gemm.hpp"

using namespace ringsim;

namespace {

// The catalog's H100 as `run` resolves it: SMs, tile list, fill, HBM.
Hardware h100() {
  const auto cat = Catalog::embedded();
  const auto& d = cat.device("h100-sxm");
  auto hw = ringsim::testing::flat(d.peak(DType::BF16), 4.5e11);
  hw.efficiency = d.attention_efficiency;
  hw.gemm_efficiency = d.gemm_efficiency;
  hw.sm_count = d.sm_count;
  hw.gemm_tiles = d.gemm_tiles;
  hw.gemm_fill_bf16 = d.gemm_fill_bf16;
  hw.hbm_bandwidth = d.hbm_bandwidth;
  hw.hbm_efficiency = d.hbm_efficiency;
  return hw;
}

// Llama 3 8B's layer on one of TP 4's GPUs: 8 heads, 2 KV heads, MLP 3584.
Workload tp4_layer(std::int64_t block) {
  auto w = ringsim::testing::make_workload(4, block, Layout::Ring, true, Pass::Fwd);
  w.shape.d_model = 4096;
  w.shape.heads = 8;
  w.shape.kv_heads = 2;
  w.shape.head_dim = 128;
  w.shape.ffn = 3584;
  w.scope = Scope::Layer;
  return w;
}

}  // namespace

TEST(RunLayerGemms, TheLayersGemmsByShapeAsThePlannerTimesThem) {
  const auto hw = h100();
  const auto w = tp4_layer(8192);
  // Q/K/V fused (8 + 2 x 2 heads of 128 = 1536 wide), the output projection
  // (K = 1024), gate and up fused (7168 wide), down (K = 3584).
  const std::vector<GemmShape> fwd{
      {8192, 1536, 4096}, {8192, 4096, 1024}, {8192, 7168, 4096}, {8192, 4096, 3584}};
  const auto rates = bf16_gemm_rates(hw);
  EXPECT_DOUBLE_EQ(other_layer_seconds(w, hw, false), linears_seconds(fwd, rates, false));
  EXPECT_DOUBLE_EQ(other_layer_seconds(w, hw, true), linears_seconds(fwd, rates, true));
  // The output projection's K = 1024 runs below the best shape's rate (a
  // tile's fill), so the layer takes longer than its FLOPs at that rate.
  EXPECT_GT(other_layer_seconds(w, hw, false), other_layer_flops(w, false) / hw.gemm_flops());
  // And the run carries it: the layer scope adds exactly these seconds.
  auto attention = w;
  attention.scope = Scope::Attention;
  const auto s = analyze(w, hw);
  EXPECT_NEAR(s.other_s, other_layer_seconds(w, hw, false) + s.pointwise_s, 1e-15);
  EXPECT_NEAR(s.time_s, analyze(attention, hw).time_s + s.other_s, 1e-12 * s.time_s);
}

// And the layer's memory-bound ops, as the planner and `infer` charge them:
// two norms (8D) and two residual adds (12D), RoPE on Q and K (4d(H + kvh)),
// SwiGLU (6F), at the catalog's achievable HBM rate; twice in the backward.
TEST(RunLayerGemms, TheLayersMemoryBoundOpsAsThePlannerChargesThem) {
  const auto hw = h100();
  const double hbm = 3.35e12 * 0.83;  // the catalog's H100: rate x achievable share
  ASSERT_DOUBLE_EQ(hw.hbm_achievable(), hbm);
  // One TP-4 GPU's Llama 3 8B layer, 8192 tokens: 20 x 4096 + 4 x 128 x (8 +
  // 2) + 6 x 3584 = 108544 B a token.
  const auto w = tp4_layer(8192);
  const double fwd = 8192 * 108544.0 / hbm;
  EXPECT_NEAR(layer_pointwise_seconds(w, hw, false), fwd, 1e-12 * fwd);
  EXPECT_NEAR(layer_pointwise_seconds(w, hw, true), 2 * fwd, 1e-12 * fwd);
  EXPECT_NEAR(analyze(w, hw).pointwise_s, fwd, 1e-12 * fwd);
  // The whole layer on a TP group of 4: sequence parallel shards the
  // residual stream's 20D over the four GPUs (20480 + 26624 B a token);
  // without it every GPU runs it whole, as the one-GPU share above.
  auto group = w;
  group.shape = ringsim::testing::llama3_heads();
  group.shape.d_model = 4096;
  group.shape.heads = 32;
  group.shape.kv_heads = 8;
  group.shape.ffn = 14336;
  group.tp = 4;
  const double sp = 8192 * (20480.0 + 26624.0) / hbm;
  EXPECT_NEAR(layer_pointwise_seconds(tp_rank_workload(group), hw, false), sp, 1e-12 * sp);
  group.sequence_parallel = false;
  EXPECT_NEAR(layer_pointwise_seconds(tp_rank_workload(group), hw, false), fwd, 1e-12 * fwd);
}

// One device running the whole layer runs the residual stream's ops once,
// whether its TP group had sequence parallelism or not: the baseline of
// efficiency_vs_single_device does not move with the flag.
TEST(RunLayerGemms, TheOneDeviceBaselineRunsTheResidualStreamOnce) {
  const auto hw = h100();
  auto group = tp4_layer(8192);
  group.shape = ringsim::testing::llama3_heads();
  group.shape.d_model = 4096;
  group.shape.ffn = 14336;
  group.tp = 4;
  group.pass = Pass::FwdBwd;
  const auto on = analyze(group, hw);
  group.sequence_parallel = false;
  const auto off = analyze(group, hw);
  EXPECT_GT(off.pointwise_s, on.pointwise_s);
  EXPECT_NEAR(off.single_device_time_s, on.single_device_time_s, 1e-12 * on.single_device_time_s);
}

TEST(RunLayerGemms, ARooflineDeviceKeepsTheFlopCount) {
  // No SMs or tiles (a TPU, a flat test device) and HBM far ahead: the GEMMs
  // are their FLOPs at the matmul rate, as before.
  auto hw = ringsim::testing::flat(1e15, 1e11);
  hw.hbm_bandwidth = 1e18;
  const auto w = tp4_layer(4096);
  for (const bool bwd : {false, true})
    EXPECT_NEAR(other_layer_seconds(w, hw, bwd), other_layer_flops(w, bwd) / hw.gemm_flops(),
                1e-12 * other_layer_seconds(w, hw, bwd));
}
