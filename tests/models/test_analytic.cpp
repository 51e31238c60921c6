#include <gtest/gtest.h>

#include "helpers.hpp"
#include "models/analytic/analytic.hpp"
#include "models/core/cancel.hpp"
#include "models/core/work.hpp"

using namespace ringsim;
using ringsim::testing::flat;
using ringsim::testing::make_workload;

namespace {
// llama3-8b heads, block 4096, bf16, forward, non-causal, 1e15 FLOP/s.
constexpr double kStepCompute = 4.0 * 128 * 4096.0 * 4096 * 32 / 1e15;  // 274.9 us
constexpr double kKVBytes = 2.0 * 4096 * 8 * 128 * 2;                   // 16 MiB
}  // namespace

TEST(Analytic, ComputeBoundRingIsNStepsOfCompute) {
  auto w = make_workload(8, 4096, Layout::Ring, false);
  auto s = analyze(w, flat(1e15, 1e11));
  EXPECT_NEAR(s.compute_s_per_step, kStepCompute, 1e-12);
  EXPECT_NEAR(s.comm_s_per_step, kKVBytes / 1e11, 1e-12);
  EXPECT_TRUE(s.overlapped);
  EXPECT_NEAR(s.time_s, 8 * kStepCompute, 1e-12);
  EXPECT_NEAR(s.efficiency, 1.0, 1e-12);
  EXPECT_NEAR(s.exposed_comm_s, 0.0, 1e-12);
}

TEST(Analytic, CommBoundRingIsNMinusOneTransfersPlusOneCompute) {
  auto w = make_workload(8, 4096, Layout::Ring, false);
  auto s = analyze(w, flat(1e15, 1e10));
  EXPECT_FALSE(s.overlapped);
  EXPECT_NEAR(s.time_s, 7 * kKVBytes / 1e10 + kStepCompute, 1e-12);
  EXPECT_NEAR(s.exposed_comm_s, 7 * (kKVBytes / 1e10 - kStepCompute), 1e-12);
}

TEST(Analytic, LatencyAddsPerTransfer) {
  auto w = make_workload(8, 4096, Layout::Ring, false);
  auto s = analyze(w, flat(1e15, 1e10, 1e-5));
  EXPECT_NEAR(s.time_s, 7 * (kKVBytes / 1e10 + 1e-5) + kStepCompute, 1e-12);
}

TEST(Analytic, CausalRingOverStripedIsTwoNMinusOneOverN) {
  // Very fast links: time is the busiest device's compute chain.
  const std::int64_t n = 8, c = 4096;
  auto ring = analyze(make_workload(n, c, Layout::Ring, true), flat(1e15, 1e18));
  auto striped = analyze(make_workload(n, c, Layout::Striped, true), flat(1e15, 1e18));
  // Ring: (N-1) full blocks + one diagonal; striped: N steps of c(c+1)/2.
  const double full = c * c, diag = c * (c + 1) / 2.0;
  EXPECT_NEAR(ring.time_s / striped.time_s, ((n - 1) * full + diag) / (n * diag), 1e-12);
  EXPECT_NEAR(ring.time_s / striped.time_s, (2.0 * n - 1) / n, 2e-3);
}

TEST(Analytic, ZigzagIsBalancedLikeStriped) {
  auto z = analyze(make_workload(8, 4096, Layout::Zigzag, true), flat(1e15, 1e18));
  EXPECT_GT(z.efficiency, 0.99);
}

TEST(Analytic, UlyssesIsAllToAllPlusLocalAttentionPlusAllToAll) {
  // 4 devices, 1 token-block of 4096 each (S = 16384), 32 heads / 8 KV heads.
  auto w = make_workload(4, 4096, Layout::Ulysses, false);
  const double bw = 1e11;
  auto s = analyze(w, flat(1e15, bw));
  const double S = 16384, qkv = 4096.0 * (32 + 16) * 128 * 2, o = 4096.0 * 32 * 128 * 2;
  const double a2a = 3 * (qkv / 4 / bw) + 3 * (o / 4 / bw);
  const double compute = 4.0 * 128 * S * S * (32 / 4) / 1e15;
  EXPECT_NEAR(s.time_s, a2a + compute, 1e-12);
  EXPECT_NEAR(s.collective_s, a2a, 1e-12);
  EXPECT_EQ(s.min_block, 0);
  EXPECT_FALSE(s.overlapped);
}

TEST(Analytic, AllgatherExposesTheGather) {
  auto w = make_workload(4, 4096, Layout::Allgather, false);
  const double bw = 1e11;
  auto s = analyze(w, flat(1e15, bw));
  const double gather = 3 * kKVBytes / bw;
  const double compute = 4.0 * 128 * 4096.0 * 16384 * 32 / 1e15;
  EXPECT_NEAR(s.time_s, gather + compute, 1e-12);
}

TEST(Analytic, BackwardRingShipsGradientsAndCostsTwoAndAHalf) {
  auto w = make_workload(8, 4096, Layout::Ring, false, Pass::Bwd);
  auto s = analyze(w, flat(1e15, 1e18));
  // 8 steps of 2.5x compute, then one dK/dV hop home (fp32) at ~free bandwidth.
  EXPECT_NEAR(s.time_s, 8 * 2.5 * kStepCompute, 1e-9);
  EXPECT_EQ(s.bytes_per_step, static_cast<std::uint64_t>(kKVBytes) + 2ull * 4096 * 8 * 128 * 4);
}

TEST(Analytic, FwdBwdIsTheSumOfBoth) {
  auto hw = flat(1e15, 1e10);
  auto f = analyze(make_workload(8, 4096, Layout::Ring, true, Pass::Fwd), hw);
  auto b = analyze(make_workload(8, 4096, Layout::Ring, true, Pass::Bwd), hw);
  auto fb = analyze(make_workload(8, 4096, Layout::Ring, true, Pass::FwdBwd), hw);
  EXPECT_NEAR(fb.time_s, f.time_s + b.time_s, 1e-12);
}

TEST(Analytic, IdealIsTotalWorkOverDevices) {
  auto w = make_workload(8, 4096, Layout::Ring, true);
  auto s = analyze(w, flat(1e15, 1e18));
  const double total = static_cast<double>(total_entries(w)) * 4 * 128 / 1e15;
  EXPECT_NEAR(s.ideal_time_s, total / 8, 1e-12);
}

TEST(Analytic, LayersAndLayerScopeScale) {
  auto w = make_workload(8, 4096, Layout::Ring, false);
  const auto one = analyze(w, flat(1e15, 1e11));
  w.layers = 4;
  EXPECT_NEAR(analyze(w, flat(1e15, 1e11)).time_s, 4 * one.time_s, 1e-12);
  w.layers = 1;
  w.scope = Scope::Layer;
  w.shape.d_model = 4096;
  w.shape.ffn = 14336;
  const auto layer = analyze(w, flat(1e15, 1e11));
  const double other =
      4096.0 * (2 * 4096.0 * 48 * 128 + 2 * 32 * 128 * 4096.0 + 6 * 4096.0 * 14336) / 1e15;
  EXPECT_NEAR(layer.time_s, one.time_s + other, 1e-12);
}

TEST(Analytic, NodesPlatformIsBoundByTheInfinibandHop) {
  Hardware hw = flat(1e15, 0);
  hw.bandwidth_override = false;
  hw.platform = Platform::Nodes;
  hw.gpus_per_node = 8;
  hw.intra_bw = 450e9;
  hw.inter_bw = 50e9;
  EXPECT_DOUBLE_EQ(hw.ring_bandwidth(8), 450e9);
  EXPECT_DOUBLE_EQ(hw.ring_bandwidth(16), 50e9);
  auto s = analyze(make_workload(16, 4096, Layout::Ring, false), hw);
  EXPECT_NEAR(s.comm_s_per_step, kKVBytes / 50e9, 1e-12);
}

namespace {
std::vector<std::pair<std::uint64_t, std::uint64_t>> g_reports;
void record_report(std::uint64_t done, std::uint64_t total) {
  g_reports.emplace_back(done, total);
}
}  // namespace

TEST(Analytic, PackedDocumentsReportEveryStepOfEveryPass) {
  // The closed form walks every device at every step with documents; the
  // command line draws its reports as a bar (cli/stop_scope.hpp). Forward and
  // backward of a ring of 4: 8 reports, counting up to 8 of 8.
  auto w = make_workload(4, 64, Layout::Zigzag, true);
  w.pass = Pass::FwdBwd;
  w.documents = {100, 56, 100};
  g_reports.clear();
  set_progress_report(&record_report);
  const auto s = analyze(w, flat(1e15, 1e11));
  set_progress_report(nullptr);
  EXPECT_GT(s.time_s, 0);
  ASSERT_EQ(g_reports.size(), 8u);
  for (std::size_t i = 0; i < g_reports.size(); ++i) {
    EXPECT_EQ(g_reports[i].first, i + 1);
    EXPECT_EQ(g_reports[i].second, 8u);
  }
  // Without documents the closed form is a few representatives: no reports.
  w.documents.clear();
  g_reports.clear();
  set_progress_report(&record_report);
  (void)analyze(w, flat(1e15, 1e11));
  set_progress_report(nullptr);
  EXPECT_TRUE(g_reports.empty());
}
