// Which kernel rate a step's work runs at, and the merge after it, from a
// hand profile whose rates make every expected time a product on paper.
#include <gtest/gtest.h>

#include "models/analytic/analytic.hpp"
#include "models/core/work.hpp"
#include "tests/models/hand_profile.hpp"
#include "tests/models/helpers.hpp"

namespace ringsim {
namespace {

using testing::HandRates;
using testing::make_workload;

constexpr double kRel = 1e-12;
constexpr std::uint64_t kH = 32;  // llama3-8b query heads

TEST(DiagonalEntries, FollowTheMaskedChunksOfEachLayout) {
  const std::uint64_t c = 4096, h = c / 2;
  // Ring: only the own block is cut by the diagonal.
  auto ring = make_workload(4, 4096, Layout::Ring, true);
  EXPECT_EQ(step_diagonal_entries(ring, 2, 0), c * (c + 1) / 2 * kH);
  EXPECT_EQ(step_diagonal_entries(ring, 2, 1), 0u);
  EXPECT_EQ(step_entries(ring, 2, 1), c * c * kH);
  // Zigzag: the two own chunks against themselves; later steps are whole chunks.
  auto zz = make_workload(4, 4096, Layout::Zigzag, true);
  EXPECT_EQ(step_diagonal_entries(zz, 1, 0), 2 * (h * (h + 1) / 2) * kH);
  EXPECT_EQ(step_entries(zz, 1, 0), (2 * (h * (h + 1) / 2) + h * h) * kH);
  for (std::int64_t s = 1; s < 4; ++s) EXPECT_EQ(step_diagonal_entries(zz, 1, s), 0u) << s;
  // Striped: every step is a staircase.
  auto st = make_workload(4, 4096, Layout::Striped, true);
  for (std::int64_t s = 0; s < 4; ++s)
    EXPECT_EQ(step_diagonal_entries(st, 1, s), step_entries(st, 1, s)) << s;
  // No mask, no diagonal.
  auto full = make_workload(4, 4096, Layout::Zigzag, false);
  EXPECT_EQ(step_diagonal_entries(full, 1, 0), 0u);
}

TEST(StepRates, ZigzagStepsRunAsTheKernelCallsTheLayoutMakes) {
  const HandRates r;
  const auto pm = testing::hand_profile(r);
  const double c = 4096;
  auto zz = make_workload(4, 4096, Layout::Zigzag, true);
  // Step 0: one causal call over the device's two chunks (local order is
  // global order), c(c+1)/2 pairs at the 4096 masked rate.
  const double s0 = c * (c + 1) / 2 * kH * r.diag4096;
  EXPECT_NEAR(step_seconds(zz, pm, 1, 0, false), s0, s0 * kRel);
  // Later steps: one full call of c x c/2 (or c/2 x c), at the full rate of
  // its larger side.
  const double s1 = c * c / 2 * kH * r.full4096;
  EXPECT_NEAR(step_seconds(zz, pm, 1, 1, false), s1, s1 * kRel);
  // Ring: the own block is one c x c diagonal, at the 4096 masked rate.
  auto ring = make_workload(4, 4096, Layout::Ring, true);
  const double r0 = c * (c + 1) / 2 * kH * r.diag4096;
  EXPECT_NEAR(step_seconds(ring, pm, 2, 0, false), r0, r0 * kRel);
}

TEST(StepRates, MergeFollowsEveryForwardStepAfterTheFirst) {
  const HandRates r;
  const auto pm = testing::hand_profile(r);
  auto w = make_workload(4, 4096, Layout::Ring, false);
  const double merge = 4096.0 * kH * r.merge_row;  // rows = block x heads
  EXPECT_EQ(merge_step_seconds(w, pm, 0, 0, false), 0);
  for (std::int64_t s = 1; s < 4; ++s)
    EXPECT_NEAR(merge_step_seconds(w, pm, 0, s, false), merge, merge * kRel) << s;
  EXPECT_EQ(merge_step_seconds(w, pm, 0, 1, true), 0);  // backward: sums ride in the kernel
  // A causal ring step that computes nothing merges nothing.
  auto causal = make_workload(4, 4096, Layout::Ring, true);
  EXPECT_EQ(step_entries(causal, 0, 1), 0u);
  EXPECT_EQ(merge_step_seconds(causal, pm, 0, 1, false), 0);
  // A profile without merge points, and the roofline, count no merge.
  EXPECT_EQ(merge_step_seconds(w, testing::hand_profile(r, false), 0, 1, false), 0);
  EXPECT_EQ(merge_step_seconds(w, RooflineModel(1e15), 0, 1, false), 0);
}

TEST(Analytic, OverlapNoneAddsTransfersAndMerges) {
  const HandRates r;
  const auto pm = testing::hand_profile(r);
  auto w = make_workload(4, 4096, Layout::Ring, false);
  auto hw = testing::flat(1e15, 1e11, 2e-6);
  const double comp = 4096.0 * 4096 * kH * r.full4096, merge = 4096.0 * kH * r.merge_row;
  const double xfer = 2 * 4096.0 * 8 * 128 * 2 / 1e11 + 2e-6;  // K, V in bf16, 8 KV heads
  // Overlapped: the transfer hides under compute + merge.
  const auto full = analyze(w, hw, pm);
  const double t_full = 4 * comp + 3 * merge;
  EXPECT_NEAR(full.time_s, t_full, t_full * kRel);
  EXPECT_TRUE(full.overlapped);
  EXPECT_GT(full.min_block, 0);
  EXPECT_NEAR(full.merge_s_per_step, merge, merge * kRel);
  // Without overlap every transfer follows its step's compute.
  hw.overlap = false;
  const auto none = analyze(w, hw, pm);
  const double t_none = t_full + 3 * xfer;
  EXPECT_NEAR(none.time_s, t_none, t_none * kRel);
  EXPECT_FALSE(none.overlapped);
  EXPECT_EQ(none.min_block, 0);  // n/a: nothing ever hides
}

}  // namespace
}  // namespace ringsim
