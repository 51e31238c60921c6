// `ringsim run --scope layer` on a mixture-of-experts model
// (models/analytic/moe.hpp, layer_moe): the experts replace the dense MLP in
// the layer's compute, and with --ep the dispatch and combine all-to-alls are
// added, exposed. Hand-computed on a flat ring with a roofline GEMM (no SM
// tiles) and HBM fast enough that every GEMM is compute-bound.
#include <gtest/gtest.h>

#include <cmath>

#include "helpers.hpp"
#include "models/analytic/analytic.hpp"
#include "models/analytic/moe.hpp"
#include "models/analytic/tp_collectives.hpp"

using namespace ringsim;
using ringsim::testing::flat;
using ringsim::testing::make_workload;

namespace {

constexpr double kFlops = 1e15, kBw = 1e11;

// D 1024, 8 experts of width 2048, 2 per token, gated (swiglu): gate and up
// fused into one GEMM of width 4096, then down.
ModelShape small_moe() {
  auto s = ringsim::testing::llama3_heads();
  s.name = "small-moe";
  s.d_model = 1024;
  s.experts = 8;
  s.experts_per_token = 2;
  s.expert_ffn = 2048;
  s.ffn = 2 * 2048;
  s.layers = 1;
  return s;
}

Hardware hw() {
  auto h = flat(kFlops, kBw);
  h.hbm_bandwidth = 1e18;  // every GEMM compute-bound: the hand sums below are FLOPs
  return h;
}

Workload moe_layer(std::int64_t ep, Pass p = Pass::Fwd) {
  auto w = make_workload(4, 4096, Layout::Ring, true, p);
  w.shape = small_moe();
  w.scope = Scope::Layer;
  w.ep = ep;
  return w;
}

// One forward of the experts on one GPU: the router (4096 x 8 x 1024), and
// each local expert's rows through 4096-wide fused gate/up and the down
// projection (6 x rows x 2048 x 1024 FLOPs).
double experts_fwd_by_hand(std::int64_t ep, std::uint64_t seed) {
  const double router = 2.0 * 4096 * 8 * 1024 / kFlops;
  const double u = routing_imbalance(4096, 2, ep, 0, seed);
  const auto rows = static_cast<std::int64_t>(u * static_cast<double>(ep) * 4096 * 2 / 8 + 0.5);
  const double expert = 6.0 * static_cast<double>(rows) * 2048 * 1024 / kFlops;
  return router + static_cast<double>(8 / ep) * expert;
}

}  // namespace

TEST(RunMoe, TheExpertsTakeTheDenseMlpsPlaceByHand) {
  const auto w = moe_layer(1);
  // The dense part keeps the attention projections only: 4096 x (2 x 1024 x
  // (32 + 16) x 128 + 2 x 32 x 128 x 1024) FLOPs.
  const double proj = 4096.0 * (2.0 * 1024 * 48 * 128 + 2.0 * 32 * 128 * 1024);
  EXPECT_DOUBLE_EQ(other_layer_flops(w, false), proj);
  const auto m = layer_moe(w, hw());
  // EP 1: every GPU holds all 8 experts, 1,024 rows each; no dispatch.
  EXPECT_DOUBLE_EQ(m.imbalance, 1.0);
  EXPECT_NEAR(m.compute_s[0], experts_fwd_by_hand(1, 1), 1e-6 * m.compute_s[0]);
  EXPECT_DOUBLE_EQ(m.comm_s[0], 0.0);
  // Backward: each GEMM twice (input and weight gradients).
  EXPECT_NEAR(m.compute_s[1], 2 * m.compute_s[0], 1e-6 * m.compute_s[0]);
}

TEST(RunMoe, ExpertParallelismAddsTwoAllToAllsPerPassByHand) {
  auto w = moe_layer(4, Pass::FwdBwd);
  w.layers = 3;
  const auto m = layer_moe(w, hw());
  // A dispatch: 4096 tokens x 2 copies x 1024 x 2 B = 16 MiB per GPU; a
  // staged all-to-all of 4 ranks sends 3 quarters at 1e11 B/s.
  EXPECT_DOUBLE_EQ(m.a2a_bytes, 16777216.0);
  const double one = 3 * (16777216.0 / 4 / kBw);
  EXPECT_NEAR(m.comm_s[0], 2 * one, 1e-15);
  EXPECT_NEAR(m.comm_s[1], 2 * one, 1e-15);
  // Two local experts on the slowest rank's rows.
  EXPECT_GT(m.imbalance, 1.0);
  EXPECT_NEAR(m.compute_s[0], experts_fwd_by_hand(4, 1), 0.01 * m.compute_s[0]);
  // In the time, exposed: the layer's attention-only time + (projections +
  // experts) + the all-to-alls, forward and backward, 3 layers.
  auto attention = w;
  attention.scope = Scope::Attention;
  attention.ep = 1;
  const auto a = analyze(attention, hw());
  const auto s = analyze(w, hw());
  const double proj = (other_layer_flops(w, false) + other_layer_flops(w, true)) / kFlops;
  // The memory-bound ops, forward and twice that backward, 3 layers.
  EXPECT_NEAR(s.pointwise_s, 3 * 3 * layer_pointwise_seconds(w, hw(), false), 1e-15);
  EXPECT_NEAR(s.other_s, 3 * (proj + m.compute_s[0] + m.compute_s[1]) + s.pointwise_s, 1e-12);
  EXPECT_NEAR(s.moe_compute_s, 3 * (m.compute_s[0] + m.compute_s[1]), 1e-12);
  EXPECT_NEAR(s.ep_comm_s, 3 * 4 * one, 1e-12);
  EXPECT_NEAR(s.time_s, a.time_s + s.other_s + s.ep_comm_s, 1e-9 * s.time_s);
  EXPECT_NEAR(s.exposed_comm_s, a.exposed_comm_s + s.ep_comm_s, 1e-9 * s.time_s);
  EXPECT_NEAR(s.verdict.exposed_by_source.at(kSourceEp), s.ep_comm_s, 1e-9 * s.time_s);
  EXPECT_FALSE(s.verdict.hidden);
}

// Multi-head latent attention's projections (DeepSeek-V2/V3) per token on a
// GPU with 4 heads: D 64, query latent 8, KV latent 24, RoPE 4, query/key
// 12, value 8: 2 x (64 x 8 + 8 x 4 x 12 + 64 x 28 + 24 x 4 x 16 + 4 x 8 x 64)
// = 2 x (512 + 384 + 1792 + 1536 + 2048) = 12544 FLOPs; the down projections
// stay whole when TP halves the heads: 2 x (512 + 192 + 1792 + 768 + 1024).
TEST(RunMoe, LatentAttentionsProjectionsByHand) {
  ModelShape s;
  s.d_model = 64;
  s = ringsim::testing::with_small_mla(s);
  EXPECT_DOUBLE_EQ(attention_projection_flops(s, 4), 12544);
  EXPECT_DOUBLE_EQ(attention_projection_flops(s, 2), 2.0 * (512 + 192 + 1792 + 768 + 1024));
  // Grouped-query attention: 2 D (H + 2 kvh) d + 2 H d D.
  s.kv_lora_rank = 0;
  s.kv_heads = 2;
  EXPECT_DOUBLE_EQ(attention_projection_flops(s, 4), 2.0 * 64 * (4 + 4) * 10 + 2.0 * 4 * 10 * 64);
}

TEST(RunMoe, TheTokensMovedAreTheRunsDtype) {
  // --dtype fp32: 4 B an element, twice the bf16 dispatch (and twice its time).
  auto w = moe_layer(4);
  const auto bf16 = layer_moe(w, hw());
  w.dtype = DType::FP32;
  const auto fp32 = layer_moe(w, hw());
  EXPECT_DOUBLE_EQ(fp32.a2a_bytes, 2 * bf16.a2a_bytes);
  EXPECT_NEAR(fp32.comm_s[0], 2 * bf16.comm_s[0], 1e-15);
}

TEST(RunMoe, TheSeedMovesTheSlowestRankAndNothingElse) {
  auto a = moe_layer(4);
  auto b = a;
  b.routing_seed = 7;
  const auto x = layer_moe(a, hw()), y = layer_moe(b, hw());
  EXPECT_EQ(x.comm_s, y.comm_s);
  EXPECT_DOUBLE_EQ(x.imbalance, routing_imbalance(4096, 2, 4, 0, 1));
  EXPECT_DOUBLE_EQ(y.imbalance, routing_imbalance(4096, 2, 4, 0, 7));
  EXPECT_EQ(layer_moe(a, hw()).compute_s, x.compute_s);  // the same seed, the same draw
  // Seeds 1 and 7 draw different slowest ranks, whose rows differ.
  EXPECT_NE(x.imbalance, y.imbalance);
}

TEST(RunMoe, ATpRanksWorkloadKeepsTheExpertsSplit) {
  // TP 2: each GPU runs the experts at width 1024; the TP rank's workload
  // (tp 1, heads halved) charges the same experts.
  auto w = moe_layer(2);
  w.tp = 2;
  const auto rank = tp_rank_workload(w);
  EXPECT_EQ(rank.tp, 1);
  EXPECT_EQ(rank.expert_tp, 2);
  EXPECT_EQ(layer_moe(rank, hw()).compute_s, layer_moe(w, hw()).compute_s);
}

TEST(RunMoe, NothingForADenseModelOrTheAttentionScope) {
  auto w = moe_layer(4);
  w.scope = Scope::Attention;
  EXPECT_EQ(layer_moe(w, hw()).compute_s[0], 0.0);
  auto d = make_workload(4, 4096, Layout::Ring, true);
  d.scope = Scope::Layer;
  EXPECT_EQ(layer_moe(d, hw()).compute_s[0], 0.0);
  EXPECT_EQ(analyze(d, hw()).ep_comm_s, 0.0);
}

TEST(RunMoe, AMoeLayersTpCollectivesAreAttentionsTwo) {
  // Sequence parallel, TP 2: a dense layer all-gathers and reduce-scatters
  // around attention and around the MLP (4 per pass); a MoE layer around
  // attention only (its routed tokens' gather and scatter are the dispatch's).
  auto w = moe_layer(1);
  w.tp = 2;
  auto dense = w;
  dense.shape.experts = 0;
  EXPECT_EQ(tp_ring_collectives_per_pass(dense), 4);
  EXPECT_EQ(tp_ring_collectives_per_pass(w), 2);
  EXPECT_NEAR(tp_pass_seconds(w, hw()), 0.5 * tp_pass_seconds(dense, hw()), 1e-18);
  EXPECT_GT(tp_pass_seconds(w, hw()), 0);
  // At --ep 1 the experts' TP group still gathers and scatters the routed
  // rows: 4096 x 2 copies x imbalance 1 x 1024 x 2 B, an all-gather and a
  // reduce-scatter per pass, charged as the dispatch.
  EXPECT_GT(layer_moe(w, hw()).comm_s[0], 0);
  w.scope = Scope::Attention;
  EXPECT_EQ(tp_ring_collectives_per_pass(w), 0);
}
