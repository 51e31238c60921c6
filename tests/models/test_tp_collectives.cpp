// Tensor parallelism's collectives (models/analytic/tp_collectives.hpp) and
// how the closed forms add them: hand-computed ring times on the node's link.
#include <gtest/gtest.h>

#include <string>

#include "helpers.hpp"
#include "models/analytic/analytic.hpp"
#include "models/analytic/collectives.hpp"
#include "models/analytic/tp_collectives.hpp"
#include "models/core/errors.hpp"

using namespace ringsim;
using ringsim::testing::make_workload;

namespace {

// Nodes of 8 GPUs, NVLink 1e11 B/s per direction and 1 us, network 1e10 B/s
// and 5 us: the TP ring must take the first pair.
Hardware nodes_hw() {
  Hardware hw;
  hw.flops = 1e15;
  hw.efficiency = 1.0;
  hw.platform = Platform::Nodes;
  hw.gpus_per_node = 8;
  hw.intra_bw = 1e11;
  hw.intra_lat = 1e-6;
  hw.inter_bw = 1e10;
  hw.inter_lat = 5e-6;
  return hw;
}

// 4096 tokens x d_model 4096 x 2 B (bf16) = 33,554,432 B per activation; in a
// group of 4 each GPU sends a quarter, 8,388,608 B, per ring round:
// 8,388,608 / 1e11 + 1e-6 = 84.88608 us a round, 3 rounds a reduce-scatter
// (or all-gather) = 254.65824 us.
constexpr double kRound = 8388608.0 / 1e11 + 1e-6;
constexpr double kRingCollective = 3 * kRound;

Workload tp_layer(int tp, bool sp, Pass p = Pass::Fwd) {
  auto w = make_workload(4, 4096, Layout::Ring, true, p);
  w.shape.d_model = 4096;
  w.shape.ffn = 14336;
  w.scope = Scope::Layer;
  w.tp = tp;
  w.sequence_parallel = sp;
  return w;
}

}  // namespace

TEST(TpCollectives, ShareIsTheActivationOverTp) {
  EXPECT_EQ(tp_share_bytes(4096, 4096, 2, 4), 8388608u);
  EXPECT_EQ(tp_share_bytes(4096, 4096, 2, 1), 0u);
  EXPECT_EQ(tp_ring_collectives_per_pass(4), 4);
  EXPECT_EQ(tp_ring_collectives_per_pass(1), 0);
}

TEST(TpCollectives, FourRingCollectivesPerPassOnTheNodeLink) {
  // Sequence parallel: 2 all-gathers + 2 reduce-scatters = 4 x 254.65824 us
  // = 1018.63296 us, plus NCCL's base latency per call (8.4 us) x 4 =
  // 1052.23296 us. Without it: 2 all-reduces, each a reduce-scatter and an
  // all-gather: the same 4 ring collectives in 2 calls, 1035.43296 us.
  const auto hw = nodes_hw();
  EXPECT_NEAR(tp_pass_seconds(4096, 4096, 2, 4, hw),
              4 * kRingCollective + 4 * kCollectiveBaseLatency, 1e-15);
  EXPECT_NEAR(tp_pass_seconds(4096, 4096, 2, 4, hw), 1052.23296e-6, 1e-15);
  EXPECT_NEAR(tp_pass_seconds(tp_layer(4, false), hw), 1035.43296e-6, 1e-15);
  // TP 2: one round of 16,777,216 B: 167.77216 + 1 us, x 4, + 4 x 8.4 us.
  EXPECT_NEAR(tp_pass_seconds(4096, 4096, 2, 2, hw),
              4 * (16777216.0 / 1e11 + 1e-6) + 4 * kCollectiveBaseLatency, 1e-15);
  EXPECT_DOUBLE_EQ(tp_pass_seconds(4096, 4096, 2, 1, hw), 0.0);
  // The attention scope has no TP collective (heads / tp still apply).
  auto w = tp_layer(4, true);
  w.scope = Scope::Attention;
  EXPECT_DOUBLE_EQ(tp_pass_seconds(w, hw), 0.0);
}

TEST(TpCollectives, AnalyzeAddsThemExposedToTheGroupsRing) {
  // fwd+bwd, 3 layers, TP 4: 2 passes x 3 layers x 1052.23296 us (4 ring
  // collectives and 4 base latencies) = 6.31339776 ms of TP collectives, on top of the CP ring of
  // groups (heads / 4 per GPU, 2 CP ranks per node).
  const auto hw = nodes_hw();
  auto w = tp_layer(4, true, Pass::FwdBwd);
  w.layers = 3;
  const auto s = analyze(w, hw);
  const auto cp = analyze(tp_rank_workload(w), group_hardware(hw, 4));
  EXPECT_NEAR(s.tp_comm_s, 6 * 4 * (kRingCollective + kCollectiveBaseLatency), 1e-15);
  EXPECT_NEAR(s.tp_comm_s, 6.31339776e-3, 1e-15);
  EXPECT_NEAR(s.time_s, cp.time_s + s.tp_comm_s, 1e-15);
  EXPECT_NEAR(s.exposed_comm_s, cp.exposed_comm_s + s.tp_comm_s, 1e-15);
  EXPECT_NEAR(s.compute_only_s, cp.compute_only_s, 0.0);
  EXPECT_EQ(s.workload.shape.heads, 32);  // the model echoed, not one GPU's share
  // A GPU runs 8 of the 32 heads: the FLOPs of all 16 GPUs are 4 x one GPU's.
  EXPECT_NEAR(s.useful_flops, 4 * cp.useful_flops, 1e-6 * cp.useful_flops);
  // Attention scope: the heads split, no collectives.
  w.scope = Scope::Attention;
  const auto a = analyze(w, hw);
  EXPECT_DOUBLE_EQ(a.tp_comm_s, 0.0);
  EXPECT_DOUBLE_EQ(a.time_s, analyze(tp_rank_workload(w), group_hardware(hw, 4)).time_s);
}

TEST(TpCollectives, RankWorkloadSplitsHeadsAndMlp) {
  auto w = tp_layer(4, true);
  const auto l = tp_rank_workload(w);
  EXPECT_EQ(l.shape.heads, 8);
  EXPECT_EQ(l.shape.kv_heads, 2);
  EXPECT_EQ(l.shape.ffn, 3584);
  EXPECT_EQ(l.shape.d_model, 4096);
  EXPECT_EQ(l.tp, 1);
  const auto g = group_hardware(nodes_hw(), 4);
  EXPECT_EQ(g.gpus_per_node, 2);
}

TEST(TpCollectives, RefusesWhatDoesNotSplit) {
  auto refused = [](Workload w, const Hardware& hw) -> std::string {
    try {
      validate(w, hw);
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  };
  const auto hw = nodes_hw();
  EXPECT_EQ(refused(tp_layer(3, true), hw), "--tp: must divide the GPUs per node (8), got 3");
  auto w = tp_layer(8, true);
  w.shape.kv_heads = 4;
  EXPECT_EQ(refused(w, hw), "--tp: must divide the heads (32) and KV heads (4), got 8");
  w = tp_layer(2, true);
  w.shape.ffn = 14335;
  EXPECT_EQ(refused(w, hw), "--tp: must divide the MLP width (--ffn 14335), got 2");
  EXPECT_EQ(refused(tp_layer(4, true), hw), "accepted");
  // Ulysses with TP: the degree must divide one GPU's KV heads (8 / 4 = 2).
  w = tp_layer(4, true);
  w.layout = Layout::Ulysses;
  EXPECT_NE(refused(w, hw).find("--devices: ulysses needs the degree to divide the KV heads (2)"),
            std::string::npos);
}
