// The implementation's per-step costs as the SimGrid actors play them, worked
// out by hand: launch stalls, merge and accumulate phases, the reduce phase,
// and compute slowed while the device's own transfer runs (interference).
// The same numbers as the closed forms' tests (tests/models/test_kernel_model.cpp).
#include <gtest/gtest.h>

#include "models/analytic/analytic.hpp"
#include "models/kernel/chunk_scan.hpp"
#include "models/kernel/implementation.hpp"
#include "tests/sim/helpers.hpp"

namespace ringsim {
namespace {

using testing::flat_hw;
using testing::llama3;
using testing::SimRun;

constexpr double kTol = 1e-15;  // seconds; SimGrid dates in doubles

// Roofline rates at 1e15 with hand-set costs around the calls.
std::shared_ptr<Implementation> hand(const ComputeModel& rm) {
  auto im = std::make_shared<Implementation>(bare_implementation(rm));
  im->hbm_bandwidth_ = 1e12;
  return im;
}

std::vector<sim::Event> of(const SimRun& run, int device, sim::Phase p) {
  std::vector<sim::Event> v;
  for (const auto& e : run.result.events[static_cast<std::size_t>(device)])
    if (e.phase == p) v.push_back(e);
  return v;
}

TEST(KernelCosts, InterferenceSlowsComputeUntilTheSendEnds) {
  // Flat 4-device ring, non-causal, forward, 1024 tokens, link 1e11 B/s: the
  // library takes 32 of 128 SMs (attention x4/3) and the copy 2e11 of 1e12
  // B/s HBM (merge x1.25); a 10 B/element merge after the first step.
  SimRun run;
  run.compute = std::make_unique<RooflineModel>(1e15);
  auto im = hand(*run.compute);
  im->ops_ = {{"merge", "fwd", "after_first", "call_q_elems", "hand", 10, 0}};
  im->sm_count_ = 128;
  im->comm_.ctas = {{"nvlink", 32}};
  im->dma_ = false;
  run.implementation = im;
  auto hw = flat_hw(1e15, 1e11, 0);
  hw.intra_kind = hw.inter_kind = "nvlink";
  run.options = testing::sim_options(llama3(4, 1024, Layout::Ring, false), hw);
  run.options.record_events = true;
  RINGSIM_SIMULATE(run);
  const double attn = 1024.0 * 1024 * 32 * 512 / 1e15;
  const double merge = 10 * 1024.0 * 32 * 128 / 1e12;
  const double comm = 2 * 1024.0 * 8 * 128 * 2 / 1e11;
  const double a_slow = attn * 4 / 3;
  const double s1 = comm + (merge - (comm - a_slow) / 1.25);
  EXPECT_NEAR(run.result.time_s, comm + 2 * s1 + attn + merge, kTol);
  // The merge of step 1 starts when the slowed attention ends and ends s1
  // after the step began.
  const auto merges = of(run, 1, sim::Phase::Merge);
  ASSERT_EQ(merges.size(), 3u);
  EXPECT_NEAR(merges[0].start * 1e-6, comm + a_slow, kTol);
  EXPECT_NEAR((merges[0].start + merges[0].dur) * 1e-6, comm + s1, kTol);
  // Compute-only (free links) has no slowdown: the exposed part includes it.
  EXPECT_NEAR(run.result.compute_only_s, attn + 3 * (attn + merge), kTol);
  // And the closed forms say the same.
  EXPECT_NEAR(analyze(run.options.workload, hw, *im).time_s, run.result.time_s, kTol);
}

TEST(KernelCosts, LaunchStallsAccumulateAndTheReducePhase) {
  // Backward, 64 tokens: the device's work per step (0.17 us of attention,
  // 2.6 us of fp32 dQ accumulation) is under its launches (5 us each:
  // attention, 3 accumulate kernels, the send), so the host sets the pace.
  SimRun run;
  run.compute = std::make_unique<RooflineModel>(1e15);
  auto im = hand(*run.compute);
  im->ops_ = {{"acc", "bwd", "step", "call_q_elems", "hand", 10, 3},
              {"cast", "bwd", "final", "all_q_elems", "hand", 6, 1}};
  im->launch_s_ = 5e-6;
  im->kernels_bwd_ = 1;
  run.implementation = im;
  const auto hw = flat_hw(1e15, 1e12, 0);
  run.options = testing::sim_options(llama3(4, 64, Layout::Ring, false, Pass::Bwd), hw);
  run.options.record_events = true;
  RINGSIM_SIMULATE(run);
  const double attn = 64.0 * 64 * 32 * 512 * 2.5 / 1e15;
  const double acc = 10 * 64.0 * 32 * 128 / 1e12;
  const double work = attn + acc;
  // Steps 0-2 send (5 launches), step 3 does not (4); the last hop of dK/dV
  // (fp32) home; the final cast, one launch longer than its work.
  const double hop = 2 * 64.0 * 8 * 128 * 4 / 1e12;
  const double cast = 6 * 64.0 * 32 * 128 / 1e12;
  const double expect = 3 * 5 * 5e-6 + 4 * 5e-6 + hop + 5e-6;
  ASSERT_LT(work, 4 * 5e-6);
  ASSERT_LT(cast, 5e-6);
  EXPECT_NEAR(run.result.time_s, expect, kTol);
  const auto launches = of(run, 2, sim::Phase::Launch);
  ASSERT_EQ(launches.size(), 4u);
  EXPECT_NEAR(launches[0].dur * 1e-6, 5 * 5e-6 - work, kTol);
  EXPECT_NEAR(launches[3].dur * 1e-6, 4 * 5e-6 - work, kTol);
  const auto accs = of(run, 2, sim::Phase::Accumulate);
  ASSERT_EQ(accs.size(), 4u);
  EXPECT_NEAR(accs[0].dur * 1e-6, acc, kTol);
  const auto reduces = of(run, 2, sim::Phase::Reduce);
  ASSERT_EQ(reduces.size(), 1u);
  EXPECT_NEAR(reduces[0].dur * 1e-6, 5e-6, kTol);
  EXPECT_NEAR(analyze(run.options.workload, hw, *im).time_s, run.result.time_s, kTol);
}

TEST(KernelCosts, CatalogKernelOnANodeMatchesTheClosedForms) {
  // cudnn on one H100 node (8 GPUs on NVLink): the device's calls, the
  // eager merge, interference; zigzag's two chunk shapes cost differently,
  // and every step still hides, so each device runs its own sum.
  SimRun run;
  const auto hw = testing::catalog_hw("h100-sxm", Platform::Nodes);
  auto hwk = hw;
  const auto& cat = Catalog::embedded();
  hwk.hbm_bandwidth = cat.device("h100-sxm").hbm_bandwidth;
  hwk.intra_kind = "nvlink";
  hwk.inter_kind = "network";
  run.implementation = make_implementation(cat, hwk, DType::BF16, {"cudnn", nullptr, false});
  run.options = testing::sim_options(llama3(8, 8192, Layout::Zigzag, true), hwk);
  run.options.record_events = true;
  RINGSIM_SIMULATE(run);
  const auto a = analyze(run.options.workload, hwk, *run.implementation);
  EXPECT_NEAR(run.result.time_s / a.time_s, 1.0, 1e-12);
  // Step 0 is one causal 8192 x 8192 call over 32 heads in cuDNN's 128 x 128
  // tiles: query tile t runs t+1 key tiles. The trace's partial says so.
  std::uint64_t tiles = 0;
  for (std::uint64_t t = 0; t < 64; ++t) tiles += 128 * 128 * (t + 1);
  const auto parts = of(run, 3, sim::Phase::Partial);
  ASSERT_FALSE(parts.empty());
  EXPECT_EQ(parts[0].executed, tiles * 32);
  EXPECT_EQ(parts[0].entries, 8192ull * 8193 / 2 * 32);
  // Later steps are full calls: every computed pair is visible.
  EXPECT_EQ(parts[1].executed, parts[1].entries);
  EXPECT_GT(a.interference_compute, 1.0);
  EXPECT_LT(a.efficiency, 1.0);
}

}  // namespace
}  // namespace ringsim

namespace ringsim {
namespace {

TEST(KernelCosts, ChunkScanLoopAndTilesAsTheActorsPlayThem) {
  // ringattention-jax on a flat 4-device A100 ring, causal forward, block
  // 4096 in the Striped paper's 2048 x 4096 chunks, links that cost nothing:
  // every step of device 3 is a full block's tiles, the scan's loop control
  // (step 8.16 us + 2 query chunks x 8.16 + 2 chunk pairs x 16.32 = 57.12 us)
  // and the carry's reshape; device 0 computes only step 0 but scans every
  // step (its launch phase). The same numbers as tests/models/test_chunk_scan.cpp.
  SimRun run;
  const auto& cat = Catalog::embedded();
  const auto& d = cat.device("a100-80gb");
  auto hw = flat_hw(d.peak(DType::BF16), 1e18, 0);
  hw.gpu_name = d.name;
  hw.efficiency = d.attention_efficiency;
  hw.gemm_efficiency = d.gemm_efficiency;
  hw.hbm_bandwidth = d.hbm_bandwidth;
  hw.hbm_efficiency = d.hbm_efficiency;
  hw.intra_kind = hw.inter_kind = "ici";
  ImplementationChoice c;
  c.kernel = "ringattention-jax";
  c.query_chunk = 2048;
  c.key_chunk = 4096;
  run.implementation = make_implementation(cat, hw, DType::BF16, c);
  run.options = testing::sim_options(llama3(4, 4096, Layout::Ring, true), hw);
  run.options.record_events = true;
  RINGSIM_SIMULATE(run);
  const double loop = 57.12e-6;
  const double attn =
      4096.0 * 4096 * 32 * run.implementation->chunk_scan()->entry_seconds(128, false);
  const double carry = 24 * 4096.0 * 32 * 128 / d.hbm_bandwidth;
  const double final_op = 14 * 4096.0 * 32 * 128 / d.hbm_bandwidth;
  EXPECT_NEAR(run.result.time_s, 4 * (attn + loop + carry) + final_op, 1e-9);
  const auto a = analyze(run.options.workload, hw, *run.implementation);
  EXPECT_NEAR(run.result.time_s / a.time_s, 1.0, 1e-9);
  // Device 0: a launch phase of the loop's length at every step.
  const auto launches = of(run, 0, sim::Phase::Launch);
  ASSERT_EQ(launches.size(), 4u);
  for (const auto& e : launches) EXPECT_NEAR(e.dur * 1e-6, loop, 1e-12);
  // Device 3's partials: 2 chunk tiles of 2048 x 4096 x 32 heads each step.
  const auto parts = of(run, 3, sim::Phase::Partial);
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0].executed, 4096ull * 4096 * 32);
  EXPECT_EQ(parts[0].entries, 4096ull * 4097 / 2 * 32);
}

}  // namespace
}  // namespace ringsim

namespace ringsim {
namespace {

TEST(KernelCosts, PerLayerPermutationIsPlayedAsAllToAlls) {
  // Flat 2-device ring, striped, causal forward, 1024 tokens, 1e11 B/s: an
  // implementation that reorders around every attention sends half of Q, K,
  // V (48 heads x 128 x 2 B a token) to the other device before the ring and
  // half of O (32 heads) after it, one round each.
  SimRun run;
  run.compute = std::make_unique<RooflineModel>(1e15);
  auto im = std::make_shared<Implementation>(bare_implementation(*run.compute));
  im->permutation_ = "layer";
  run.implementation = im;
  const auto hw = flat_hw(1e15, 1e11, 0);
  run.options = testing::sim_options(llama3(2, 1024, Layout::Striped, true), hw);
  run.options.record_events = true;
  RINGSIM_SIMULATE(run);
  const double in = 1024.0 * 48 * 128 * 2 / 2 / 1e11, out = 1024.0 * 32 * 128 * 2 / 2 / 1e11;
  const auto a2a = of(run, 1, sim::Phase::AllToAll);
  ASSERT_EQ(a2a.size(), 2u);
  EXPECT_NEAR(a2a[0].dur * 1e-6, in, 1e-12);
  EXPECT_NEAR(a2a[1].dur * 1e-6, out, 1e-12);
  const auto a = analyze(run.options.workload, hw, *im);
  EXPECT_NEAR(run.result.time_s, a.time_s, 1e-12);
  ASSERT_TRUE(a.permutation.has_value());
  EXPECT_NEAR(a.permutation->seconds, in + out, 1e-15);
}

}  // namespace
}  // namespace ringsim
