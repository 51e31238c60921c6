// The verdict (models/analytic/verdict.hpp): hidden, exposed and stalled come
// from one rule, exposed time is split into its sources, and the minimum block
// covers the whole pass. Hand-made timelines with the arithmetic in comments.
#include <gtest/gtest.h>

#include "models/analytic/analytic.hpp"
#include "models/analytic/report.hpp"
#include "models/analytic/verdict.hpp"
#include "models/core/catalog.hpp"
#include "models/core/errors.hpp"
#include "models/kernel/implementation.hpp"
#include "tests/models/helpers.hpp"

namespace ringsim {
namespace {

double sum(const std::map<std::string, double>& m) {
  double s = 0;
  for (const auto& [k, x] : m) s += x;
  return s;
}

// A fwdbwd run of 10 s whose time-setting device computes 8 s (the busiest
// device's too): forward steps 3 and 4 wait 0.5 s each, backward step 0 waits
// 0.3 s, its compute ran 0.2 s slower under transfers, the dK/dV hop took 0.5 s.
VerdictInputs exposed_run() {
  VerdictInputs in;
  in.time_s = 10;
  in.compute_only_s = 8;
  in.device_time_s = 10;
  in.device_free_s = 8;
  in.step_wait_s[0] = {{3, 0.5}, {4, 0.5}};
  in.step_wait_s[1] = {{0, 0.3}};
  in.interference_s = 0.2;
  in.final_hop_s = 0.5;
  in.min_block = {6663, 7964};
  in.block = 7168;
  in.lightest_s = 1;
  in.heaviest_s = 2.5;
  in.heaviest_pass = 1;
  in.heaviest_step = 1;
  return in;
}

TEST(Verdict, AttributesExposedTimeToItsSources) {
  const auto v = make_verdict(exposed_run());
  // exposed = 10 - 8 = 2 s; sources 0.5 + 0.5 + 0.3 (waits) + 0.2 + 0.5 = 2 s: scale 1.
  EXPECT_FALSE(v.hidden);
  EXPECT_DOUBLE_EQ(v.exposed_comm_s, 2.0);
  EXPECT_NEAR(v.exposed_by_source.at(kSourceTransferWaits), 1.3, 1e-12);
  EXPECT_NEAR(v.exposed_by_source.at(kSourceFinalHop), 0.5, 1e-12);
  EXPECT_NEAR(v.exposed_by_source.at(kSourceInterference), 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(v.exposed_by_source.at(kSourceDiagonal), 0.0);
  EXPECT_DOUBLE_EQ(v.exposed_by_source.at(kSourceUnattributed), 0.0);
  EXPECT_NEAR(sum(v.exposed_by_source), 2.0, 1e-12);
  EXPECT_EQ(v.stalled[0], (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(v.stalled[1], (std::vector<std::int64_t>{0}));
  EXPECT_EQ(v.stalled_steps, (std::vector<std::int64_t>{0, 3, 4}));
  // The whole pass's minimum block: max(6663, 7964).
  EXPECT_EQ(v.min_block, 7964);
  EXPECT_EQ(v.min_block_by_pass[0], 6663);
  EXPECT_EQ(v.min_block_by_pass[1], 7964);
  EXPECT_EQ(min_block_text(v, true), "7964 tokens (fwd 6663, bwd 7964)");
  EXPECT_NE(v.text.find("communication exposed: 2.000 s"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("forward steps 3-4 and backward step 0 waiting on transfers"),
            std::string::npos)
      << v.text;
  EXPECT_NE(v.text.find("final dK/dV hop"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("block 7168 < min block 7964 for bwd"), std::string::npos) << v.text;
  EXPECT_EQ(v.text.find("for fwd"), std::string::npos) << v.text;  // 7168 >= 6663
  EXPECT_DOUBLE_EQ(v.lightest_step_compute_s, 1.0);
  EXPECT_DOUBLE_EQ(v.heaviest_step_compute_s, 2.5);
}

TEST(Verdict, WaitsForASlowerDeviceAreScaledOutOfTheSources) {
  // The time-setting device computes 7 s, the busiest 8 s: of its 3 s beyond
  // compute (2 s named + 1 s unnamed), exposed = 10 - 8 = 2 s. Every source
  // is scaled by 2/3: waits 1.3 * 2/3, unattributed 1 * 2/3; the sum is 2 s.
  auto in = exposed_run();
  in.device_free_s = 7;
  const auto v = make_verdict(in);
  EXPECT_NEAR(v.exposed_by_source.at(kSourceTransferWaits), 1.3 * 2 / 3, 1e-12);
  EXPECT_NEAR(v.exposed_by_source.at(kSourceUnattributed), 2.0 / 3, 1e-12);
  EXPECT_NEAR(sum(v.exposed_by_source), 2.0, 1e-12);
}

TEST(Verdict, TheDiagonalStepIsNamed) {
  // A forward causal ring: only step 0 (the diagonal, half a block) waits,
  // 8 us of a 100 ms run; nothing else exposed.
  VerdictInputs in;
  in.time_s = 0.1;
  in.compute_only_s = 0.1 - 8e-6;
  in.device_time_s = 0.1;
  in.device_free_s = 0.1 - 8e-6;
  in.step_wait_s[0] = {{0, 8e-6}};
  in.diagonal_step0 = true;
  in.min_block = {4225, std::nullopt};
  in.block = 4096;
  const auto v = make_verdict(in);
  EXPECT_FALSE(v.hidden);
  EXPECT_NEAR(v.exposed_by_source.at(kSourceDiagonal), 8e-6, 1e-15);
  EXPECT_DOUBLE_EQ(v.exposed_by_source.at(kSourceTransferWaits), 0.0);
  EXPECT_EQ(v.stalled[0], (std::vector<std::int64_t>{0}));
  EXPECT_NE(v.text.find("the diagonal step (forward step 0"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("block 4096 < min block 4225 for fwd"), std::string::npos) << v.text;
  EXPECT_EQ(min_block_text(v, true), "4225 tokens (fwd)");
}

TEST(Verdict, HiddenMeansNothingExposedBeyondTheTolerance) {
  // 1 ns exposed of a 1 s run is below the tolerance (1e-6 x 1 s = 1 us):
  // hidden, no stalled step even though step 2 waited that nanosecond.
  VerdictInputs in;
  in.time_s = 1;
  in.compute_only_s = 1 - 1e-9;
  in.device_time_s = 1;
  in.device_free_s = 1 - 1e-9;
  in.step_wait_s[0] = {{2, 1e-9}};
  in.min_block = {1000, std::nullopt};
  in.block = 2048;
  const auto v = make_verdict(in);
  EXPECT_TRUE(v.hidden);
  EXPECT_DOUBLE_EQ(v.tolerance_s, 1e-6);
  EXPECT_TRUE(v.stalled_steps.empty());
  EXPECT_NE(v.text.find("communication hidden"), std::string::npos) << v.text;
  // 2 us exposed is above it: not hidden, and step 2 is listed.
  in.compute_only_s = in.device_free_s = 1 - 2e-6;
  in.step_wait_s[0] = {{2, 2e-6}};
  const auto x = make_verdict(in);
  EXPECT_FALSE(x.hidden);
  EXPECT_EQ(x.stalled[0], (std::vector<std::int64_t>{2}));
}

TEST(Verdict, ACollectiveIsANonStallSource) {
  // Ulysses: 1.742 ms of all-to-alls over 2.070 ms of compute; no ring step.
  VerdictInputs in;
  in.time_s = 3.812e-3;
  in.compute_only_s = 2.070e-3;
  in.device_time_s = 3.812e-3;
  in.device_free_s = 2.070e-3;
  in.collectives_s = 1.742e-3;
  in.collective_name = "Ulysses all-to-alls";
  in.min_block = {0, std::nullopt};
  const auto v = make_verdict(in);
  EXPECT_FALSE(v.hidden);
  EXPECT_TRUE(v.stalled_steps.empty());
  EXPECT_NEAR(v.exposed_by_source.at(kSourceCollectives), 1.742e-3, 1e-15);
  EXPECT_FALSE(v.min_block.has_value());
  EXPECT_FALSE(v.min_block_by_pass[0].has_value());  // 0: n/a
  EXPECT_EQ(min_block_text(v, true), "n/a (no overlap in this layout)");
  EXPECT_NE(v.text.find("from the Ulysses all-to-alls"), std::string::npos) << v.text;
}

TEST(Verdict, NeverHidesWinsOverAnyBlock) {
  VerdictInputs in;
  in.time_s = 1;
  in.compute_only_s = 0.5;
  in.device_time_s = 1;
  in.device_free_s = 0.5;
  in.step_wait_s[1] = {{1, 0.5}};
  in.min_block = {4000, -1};
  const auto v = make_verdict(in);
  EXPECT_TRUE(v.never_hides);
  EXPECT_FALSE(v.min_block.has_value());
  EXPECT_EQ(min_block_text(v, true), "never hides (fwd 4000, bwd never)");
  EXPECT_NE(v.text.find("no block hides the bwd transfers"), std::string::npos) << v.text;
}

TEST(Verdict, NamesTheLargestLossAndWhatRemovesIt) {
  // The exposed run above (10 s, compute 8 s, exposed 2 s of which 0.2 s
  // interference) on devices whose mean compute is 5 s (a causal ring's last
  // device does 8): imbalance 3 s > exposed 1.8 s > merges 0.5 s; the kernel's
  // rate: 5 - 0.5 - 4 (ideal) = 0.5 s.
  auto in = exposed_run();
  in.ideal_s = 4;
  in.mean_compute_s = 5;
  in.overheads_s = 0.5;
  in.contiguous_causal = true;
  auto v = make_verdict(in);
  EXPECT_DOUBLE_EQ(v.losses.at(kLossImbalance), 3);
  EXPECT_NEAR(v.losses.at(kLossExposed), 1.8, 1e-12);
  EXPECT_NEAR(v.losses.at(kLossInterference), 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(v.losses.at(kLossOverheads), 0.5);
  EXPECT_DOUBLE_EQ(v.losses.at(kLossKernelRate), 0.5);
  EXPECT_EQ(v.largest_loss, kLossImbalance);
  EXPECT_NE(v.fix.find("use zigzag"), std::string::npos) << v.fix;
  EXPECT_NE(v.text.find("largest loss: imbalance 3.000 s (30% of the time)"), std::string::npos)
      << v.text;
  // Balanced devices at nearly the ideal rate (ideal 7 s: the kernel loses
  // 8 - 0.5 - 7 = 0.5 s): the exposed transfers lead, the block is the fix.
  in.mean_compute_s = 8;
  in.ideal_s = 7;
  v = make_verdict(in);
  EXPECT_EQ(v.largest_loss, kLossExposed);
  EXPECT_NE(v.fix.find("at least 7964 tokens"), std::string::npos) << v.fix;
  // A slowed device, not the mask, behind the imbalance.
  in.mean_compute_s = 5;
  in.ideal_s = 4;
  in.contiguous_causal = false;
  in.slowed_devices = true;
  v = make_verdict(in);
  EXPECT_NE(v.fix.find("--straggler"), std::string::npos) << v.fix;
  // Nothing lost beyond the tolerance: no largest loss, no clause.
  VerdictInputs ideal;
  ideal.time_s = ideal.compute_only_s = ideal.device_time_s = ideal.device_free_s = 1;
  ideal.ideal_s = ideal.mean_compute_s = 1;
  v = make_verdict(ideal);
  EXPECT_EQ(v.largest_loss, "");
  EXPECT_EQ(v.text.find("largest loss"), std::string::npos) << v.text;
}

TEST(Verdict, ReadsBackWhatItWritesAndRefusesAMissingKey) {
  const auto v = make_verdict(exposed_run());
  const auto j = v.to_json();
  EXPECT_EQ(Verdict::from_json(j, "test").to_json(), j);
  for (const char* k :
       {"hidden", "exposed_comm_s", "stalled_steps", "min_block", "min_block_by_pass",
        "exposed_by_source", "lightest_step_compute_s", "heaviest_step_compute_s", "text"}) {
    auto bad = j;
    bad.erase(k);
    EXPECT_THROW(Verdict::from_json(bad, "test"), InputError) << k;
  }
}

// The closed forms: an exposed fwdbwd zigzag ring whose block sits between the
// forward and the backward minimum block (H100 bf16 roofline on a 50 GB/s
// flat ring): the verdict's min block is the backward one, the run is not
// hidden, its stalled steps are backward ones, and the summary agrees.
TEST(Verdict, AnalyticFwdBwdUsesTheLargerMinBlock) {
  const auto hw = testing::flat(989e12 * 0.6, 50e9, 3e-6);
  auto w = testing::make_workload(16, 1024, Layout::Zigzag, true, Pass::FwdBwd);
  const auto probe = analyze(w, hw);
  const auto fwd = probe.verdict.min_block_by_pass[0], bwd = probe.verdict.min_block_by_pass[1];
  ASSERT_TRUE(fwd && bwd);
  ASSERT_GT(*bwd, *fwd) << "dK/dV make the backward ring's bytes grow faster";
  EXPECT_EQ(probe.min_block, *bwd);
  // A block between the two: forward hides, backward does not.
  w.block = (*fwd + *bwd) / 2 / 2 * 2;
  const auto s = analyze(w, hw);
  EXPECT_FALSE(s.verdict.hidden);
  EXPECT_EQ(s.overlapped, s.verdict.hidden);
  EXPECT_TRUE(s.verdict.stalled[0].empty());
  EXPECT_FALSE(s.verdict.stalled[1].empty());
  EXPECT_DOUBLE_EQ(s.exposed_comm_s, s.verdict.exposed_comm_s);
  EXPECT_NEAR(sum(s.verdict.exposed_by_source), s.exposed_comm_s, 1e-9 * s.time_s);
  EXPECT_NE(s.verdict.text.find("for bwd"), std::string::npos) << s.verdict.text;
  // A block past both: no step stalls, so the steps' transfers are hidden;
  // what stays exposed is backward's final dK/dV hop home, which nothing
  // follows to hide it, and the verdict names it.
  w.block = *bwd + 512;
  const auto x = analyze(w, hw);
  EXPECT_TRUE(x.verdict.hidden) << x.verdict.text;
  EXPECT_GT(x.exposed_comm_s, x.verdict.tolerance_s);
  EXPECT_TRUE(x.verdict.stalled_steps.empty());
  EXPECT_NEAR(x.verdict.exposed_by_source.at(kSourceFinalHop), x.exposed_comm_s, 1e-9 * x.time_s);
  EXPECT_NE(x.verdict.text.find("final dK/dV hop"), std::string::npos) << x.verdict.text;
  // Forward alone at that block hides (the bare roofline has no interference).
  w.pass = Pass::Fwd;
  const auto h = analyze(w, hw);
  EXPECT_TRUE(h.verdict.hidden) << h.verdict.text;
  EXPECT_TRUE(h.verdict.stalled_steps.empty());
  EXPECT_TRUE(h.overlapped);
  const auto r = RunSummary::from_json(summary_json(h), "test");
  EXPECT_TRUE(r.verdict.hidden);
  EXPECT_TRUE(r.overlapped);
}

TEST(Verdict, AnalyticLightestStepIsTheDiagonal) {
  // A causal contiguous ring: step 0 computes the diagonal (half a block),
  // every other step of the busiest device a whole one: lightest ~ half.
  const auto hw = testing::flat(989e12 * 0.6, 50e9, 3e-6);
  const auto s = analyze(testing::make_workload(8, 4096, Layout::Ring, true), hw);
  EXPECT_EQ(s.verdict.lightest_step, 0);
  EXPECT_NEAR(s.verdict.lightest_step_compute_s / s.verdict.heaviest_step_compute_s, 0.5, 0.01);
  EXPECT_TRUE(s.verdict_inputs.diagonal_step0);
}

}  // namespace
}  // namespace ringsim
