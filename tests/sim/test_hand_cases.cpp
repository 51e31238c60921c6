// Expected simulated times worked out by hand, in the spirit of SimGrid's .tesh
// examples: small platforms where every number follows from S/B + L and
// FLOPs / peak. Each TEST runs one simulation (one SimGrid engine per process).
//
// Tolerance: 1e-12 relative. SimGrid keeps dates in doubles and the schedule
// adds a few dozen of them; the observed error is ~1e-16.
#include <gtest/gtest.h>

#include "models/analytic/analytic.hpp"
#include "tests/sim/helpers.hpp"

namespace ringsim {
namespace {

using testing::catalog_hw;
using testing::flat_hw;
using testing::llama3;
using testing::SimRun;

constexpr double kRel = 1e-12;

// llama3-8b: 32 query heads, 8 KV heads, head dim 128; bf16.
constexpr double kHeads = 32, kKvHeads = 8, kDim = 128, kBytes = 2;

// Forward seconds for `pairs` score pairs per head on every query head.
double fwd_seconds(double pairs, double flops) {
  return 4 * kDim * pairs * kHeads / flops;
}
// K and V of one block of c tokens.
double kv_bytes(double c) {
  return 2 * c * kKvHeads * kDim * kBytes;
}

TEST(FlatRing, ComputeBoundTimeIsNTimesStepCompute) {
  // 8 devices, --flops 1e15 --efficiency 1 --latency 0 --bandwidth 1e11, block
  // 4096, non-causal: step = 4 * 128 * 4096^2 * 32 / 1e15 = 274.878 us; the
  // 16 MiB K/V transfer takes 167.8 us and hides under it.
  SimRun run;
  run.options = testing::sim_options(llama3(8, 4096, Layout::Ring, false), flat_hw(1e15, 1e11, 0));
  RINGSIM_SIMULATE(run);
  const double step = fwd_seconds(4096.0 * 4096.0, 1e15);
  EXPECT_NEAR(step, 274.877906944e-6, 1e-15);
  EXPECT_NEAR(run.result.time_s, 8 * step, 8 * step * kRel);
  EXPECT_NEAR(run.result.compute_s_per_step, step, step * kRel);
  EXPECT_EQ(run.result.stalled_device_steps, 0u);
}

TEST(FlatRing, CommBoundTimeIsTransfersPlusOneStep) {
  // Same at --bandwidth 1e10: a transfer takes 16 MiB / 1e10 = 1.678 ms, so
  // time = 7 transfers + the last step's compute = 12.019 ms.
  SimRun run;
  run.options = testing::sim_options(llama3(8, 4096, Layout::Ring, false), flat_hw(1e15, 1e10, 0));
  RINGSIM_SIMULATE(run);
  const double step = fwd_seconds(4096.0 * 4096.0, 1e15), xfer = kv_bytes(4096) / 1e10;
  EXPECT_EQ(kv_bytes(4096), 16777216.0);
  const double expect = 7 * xfer + step;
  EXPECT_NEAR(run.result.time_s, expect, expect * kRel);
  // Every step with a transfer waits for it.
  EXPECT_EQ(run.result.stalled_steps[0], (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(FlatRing, TinyBlocksMatchTheClosedForm) {
  // A 7-token block computes in 4 * 128 * 49 * 32 / 1e15 = 0.803 ns, under
  // SimGrid's 1 ns timing precision: without the stretched clock
  // (docs/sim.md, "Time precision") every step ended at once and the run came
  // out 4x faster than its own ideal. Compute-bound: 8 x step.
  SimRun run;
  run.options = testing::sim_options(llama3(8, 7, Layout::Ring, false), flat_hw(1e15, 1e15, 0));
  RINGSIM_SIMULATE(run);
  const double step = fwd_seconds(49.0, 1e15);
  EXPECT_NEAR(run.result.time_s, 8 * step, 8 * step * 1e-9);
  EXPECT_NEAR(run.result.compute_s_per_step, step, step * 1e-9);
}

TEST(FlatRing, LatencyAddsOncePerTransfer) {
  // 3 us per hop, comm-bound: each of the 7 transfers takes S/B + L.
  SimRun run;
  run.options =
      testing::sim_options(llama3(8, 4096, Layout::Ring, false), flat_hw(1e15, 1e10, 3e-6));
  RINGSIM_SIMULATE(run);
  const double expect = 7 * (kv_bytes(4096) / 1e10 + 3e-6) + fwd_seconds(4096.0 * 4096.0, 1e15);
  EXPECT_NEAR(run.result.time_s, expect, expect * kRel);
}

// Causal, links fast enough that every transfer hides (16 MiB at 1e15 B/s is
// 17 ns). Ring: the step-0 diagonal c(c+1)/2 pairs, then N-1 steps in which
// some device has a full c^2 block. Striped: every step's busiest device has
// c(c-1)/2 + c = c(c+1)/2 pairs. Ratio ((c+1) + 2(N-1)c) / (N(c+1)) -> (2N-1)/N.
constexpr double kN = 8, kC = 4096;
double causal_ring_time() {
  return fwd_seconds(kC * (kC + 1) / 2 + (kN - 1) * kC * kC, 1e15);
}
double causal_striped_time() {
  return fwd_seconds(kN * kC * (kC + 1) / 2, 1e15);
}

TEST(Causal, RingTimeIsDiagonalPlusFullBlocks) {
  SimRun run;
  run.options = testing::sim_options(llama3(8, 4096, Layout::Ring, true), flat_hw(1e15, 1e15, 0));
  RINGSIM_SIMULATE(run);
  EXPECT_NEAR(run.result.time_s, causal_ring_time(), causal_ring_time() * kRel);
  EXPECT_EQ(run.result.critical_device, 7);  // the last device sees every earlier block
}

TEST(Causal, StripedTimeIsHalfBlocksEveryStep) {
  SimRun run;
  run.options =
      testing::sim_options(llama3(8, 4096, Layout::Striped, true), flat_hw(1e15, 1e15, 0));
  RINGSIM_SIMULATE(run);
  EXPECT_NEAR(run.result.time_s, causal_striped_time(), causal_striped_time() * kRel);
}

TEST(Causal, RingOverStripedIsTwoNMinusOneOverN) {
  // No simulation: the two hand formulas above, checked against the issue's
  // (2N-1)/N. The exact ratio differs by the diagonal's extra c/2 pairs, a
  // relative O(1/c) correction.
  const double exact = ((kC + 1) + 2 * (kN - 1) * kC) / (kN * (kC + 1));
  EXPECT_NEAR(causal_ring_time() / causal_striped_time(), exact, 1e-12);
  EXPECT_NEAR(exact, (2 * kN - 1) / kN, (2 * kN - 1) / kN / kC);
}

TEST(Nodes, RingCrossingNodesIsBoundByInfiniBand) {
  // Two H100 nodes (NVLink4 450 GB/s + 2 us inside, NDR 50 GB/s + 3 us
  // between), block 1024 non-causal: a 4 MiB K/V transfer takes 9.3 us + 2 us
  // on NVLink, under the 25.9 us step, but 83.9 us + 3 us across nodes, and
  // the whole ring moves at the pace of that hop.
  const auto hw = catalog_hw("h100-sxm", Platform::Nodes);
  SimRun run;
  run.options = testing::sim_options(llama3(16, 1024, Layout::Ring, false), hw);
  RINGSIM_SIMULATE(run);
  const double step = fwd_seconds(1024.0 * 1024.0, 989e12 * 0.67);
  const double ib = kv_bytes(1024) / 50e9 + 3e-6, nvl = kv_bytes(1024) / 450e9 + 2e-6;
  ASSERT_LT(nvl, step);
  ASSERT_GT(ib, step);
  const double expect = 15 * ib + step;
  EXPECT_NEAR(run.result.time_s, expect, expect * kRel);
}

TEST(Ulysses, EqualsItsAllToAllClosedForm) {
  // 8 H100 in one node: all-to-all of Q,K,V (c(H+2kvh)d x 2 bytes per device)
  // in 7 rounds of 1/8 each over NVLink, local attention over the whole
  // sequence for 4 of the 32 heads, all-to-all of O back.
  const auto hw = catalog_hw("h100-sxm", Platform::Nodes);
  const double c = 2048, n = 8, S = n * c;
  SimRun run;
  run.options = testing::sim_options(llama3(8, 2048, Layout::Ulysses, true), hw);
  RINGSIM_SIMULATE(run);
  const double qkv = c * (kHeads + 2 * kKvHeads) * kDim * kBytes, o = c * kHeads * kDim * kBytes;
  const double bw = 450e9, lat = 2e-6;
  const double a2a = 7 * (qkv / 8 / bw + lat) + 7 * (o / 8 / bw + lat);
  EXPECT_DOUBLE_EQ(a2a, alltoall_time(static_cast<std::uint64_t>(qkv), 8, bw, lat) +
                            alltoall_time(static_cast<std::uint64_t>(o), 8, bw, lat));
  const double compute = 4 * kDim * (S * (S + 1) / 2) * (kHeads / n) / (989e12 * 0.67);
  EXPECT_NEAR(run.result.time_s, a2a + compute, (a2a + compute) * kRel);
  EXPECT_NEAR(run.result.collective_s, a2a, a2a * kRel);
}

TEST(Allgather, GatherThenLocalAttention) {
  // Flat ring, 4 devices, 1e11 B/s, 1 us: 3 rounds of one K/V block, then each
  // device attends its zigzag queries to all keys (the busiest: 2N-1 chunk
  // rows, non-causal here so all equal: c x S pairs).
  const double c = 4096, n = 4;
  SimRun run;
  run.options =
      testing::sim_options(llama3(4, 4096, Layout::Allgather, false), flat_hw(1e15, 1e11, 1e-6));
  RINGSIM_SIMULATE(run);
  const double expect = 3 * (kv_bytes(c) / 1e11 + 1e-6) + fwd_seconds(c * n * c, 1e15);
  EXPECT_NEAR(run.result.time_s, expect, expect * kRel);
}

}  // namespace
}  // namespace ringsim
