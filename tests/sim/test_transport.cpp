// The SimGrid model with --overlap none and with a profile's merge points:
// worked out by hand (hand_profile.hpp's round rates), and equal to the
// closed form. One simulation per test (one SimGrid engine per process).
#include <gtest/gtest.h>

#include <algorithm>

#include "models/analytic/analytic.hpp"
#include "tests/models/hand_profile.hpp"
#include "tests/sim/helpers.hpp"

namespace ringsim {
namespace {

using testing::flat_hw;
using testing::llama3;
using testing::SimRun;

constexpr double kRel = 1e-12;
constexpr double kH = 32;  // llama3-8b query heads

// 4 devices, block 4096, non-causal: compute 4096^2 x 32 x 1e-12 = 536.9 us
// per step, merge 4096 x 32 x 1e-9 = 131.1 us after steps 1-3, and K/V (16 MiB
// in bf16) over 1e11 B/s + 2 us = 169.8 us per transfer.
struct Case {
  testing::HandRates r;
  double comp = 4096.0 * 4096 * kH * r.full4096;
  double merge = 4096.0 * kH * r.merge_row;
  double xfer = 2 * 4096.0 * 8 * 128 * 2 / 1e11 + 2e-6;
};

void run_case(SimRun& run, bool overlap) {
  run.options =
      testing::sim_options(llama3(4, 4096, Layout::Ring, false), flat_hw(1e15, 1e11, 2e-6));
  run.options.hardware.overlap = overlap;
  run.options.record_events = true;
  run.compute = std::make_unique<ProfileModel>(testing::hand_profile());
}

TEST(Transport, OverlapNoneAddsEveryTransferAfterItsCompute) {
  const Case k;
  SimRun run;
  run_case(run, false);
  RINGSIM_SIMULATE(run);
  const double expect = 4 * k.comp + 3 * k.merge + 3 * k.xfer;
  EXPECT_NEAR(run.result.time_s, expect, expect * kRel);
  const auto a = analyze(run.options.workload, run.options.hardware, *run.compute);
  EXPECT_NEAR(a.time_s, expect, expect * kRel);
  // Every step with a transfer waits for all of it.
  EXPECT_EQ(run.result.stalled_steps[0], (std::vector<std::int64_t>{0, 1, 2}));
  // Device 0's step 1: partial, merge, then send and receive, back to back.
  // Trace events are in microseconds.
  const auto& ev = run.result.events[0];
  auto find = [&](sim::Phase p, std::int32_t step) {
    auto it = std::find_if(ev.begin(), ev.end(),
                           [&](const sim::Event& e) { return e.phase == p && e.step == step; });
    EXPECT_NE(it, ev.end());
    return *it;
  };
  const auto part = find(sim::Phase::Partial, 1), merge = find(sim::Phase::Merge, 1),
             send = find(sim::Phase::Send, 1);
  constexpr double us = 1e6;
  EXPECT_NEAR(part.dur, k.comp * us, k.comp * us * kRel);
  EXPECT_NEAR(merge.start, part.end(), k.comp * us * kRel);
  EXPECT_NEAR(merge.dur, k.merge * us, k.merge * us * kRel);
  EXPECT_NEAR(send.start, merge.end(), k.comp * us * kRel);
  EXPECT_NEAR(send.dur, k.xfer * us, k.xfer * us * 1e-9);
}

TEST(Transport, OverlappedTransfersHideUnderComputeAndMerge) {
  const Case k;
  SimRun run;
  run_case(run, true);
  RINGSIM_SIMULATE(run);
  const double expect = 4 * k.comp + 3 * k.merge;
  EXPECT_NEAR(run.result.time_s, expect, expect * kRel);
  EXPECT_EQ(run.result.stalled_device_steps, 0u);
  const auto merges =
      std::count_if(run.result.events[0].begin(), run.result.events[0].end(),
                    [](const sim::Event& e) { return e.phase == sim::Phase::Merge; });
  EXPECT_EQ(merges, 3);  // steps 1-3; step 0 has nothing to merge into
}

}  // namespace
}  // namespace ringsim
