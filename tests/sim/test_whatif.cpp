// What-if faults in the simulation: a straggler stretches every ring step and
// is named; a degraded link slows the whole ring to its pace; Ctrl-C stops the
// run. One simulation per TEST (own process under ctest).
#include <gtest/gtest.h>

#include <algorithm>

#include "models/analytic/analytic.hpp"
#include "sim/progress.hpp"
#include "tests/sim/helpers.hpp"

namespace ringsim {
namespace {

using testing::flat_hw;
using testing::llama3;
using testing::SimRun;

TEST(Straggler, StretchesEveryRingStepAndIsNamed) {
  // Zigzag, causal, 16 devices, links fast enough to hide every transfer: all
  // devices compute the same amount each step, so a device at half speed
  // doubles every step for everyone (the ring cannot run ahead of it).
  const auto w = llama3(16, 4096, Layout::Zigzag, true);
  SimRun run;
  run.options = testing::sim_options(w, flat_hw(1e15, 1e14, 0));
  run.options.faults.stragglers.push_back({5, 2.0});
  run.options.record_events = true;
  RINGSIM_SIMULATE(run);
  const auto a = analyze(w, run.options.hardware, *run.compute);
  const auto& r = run.result;
  // The straggler is on the critical path at every step: time doubles (to
  // rounding; the fast links add 16 MiB / 1e14 B/s per step, 2e-5 relative).
  EXPECT_NEAR(r.time_s / a.time_s, 2.0, 1e-3);
  EXPECT_EQ(r.critical_device, 5);
  // Every step with a transfer after the first stalls somewhere (step 0's
  // transfers start together; the last step has none).
  std::vector<std::int64_t> expect;
  for (std::int64_t s = 1; s <= 14; ++s) expect.push_back(s);
  EXPECT_EQ(r.stalled_steps[0], expect);
  // In the trace, the straggler's successor waits in each of those steps.
  for (std::int64_t s = 1; s <= 14; ++s) {
    const auto& ev = r.events[6];
    const bool waited = std::any_of(ev.begin(), ev.end(), [&](const sim::Event& e) {
      return e.phase == sim::Phase::Wait && e.step == s && e.dur > 0;
    });
    EXPECT_TRUE(waited) << "device 6 did not wait at step " << s;
  }
  // The straggler itself never waits.
  for (const auto& e : r.events[5]) EXPECT_NE(e.phase, sim::Phase::Wait) << "step " << e.step;
}

TEST(Degrade, OneSlowLinkPacesTheWholeRing) {
  // Comm-bound flat ring (8 devices, 16 MiB per step at 1e10 B/s); link
  // ring3 (device 3 -> 4) at a quarter of the bandwidth: every step waits for
  // that hop, so time = 7 x S / (B/4) + the last step's compute.
  const auto w = llama3(8, 4096, Layout::Ring, false);
  SimRun run;
  run.options = testing::sim_options(w, flat_hw(1e15, 1e10, 0));
  run.options.faults.degrades.push_back({"ring3", 4.0});
  RINGSIM_SIMULATE(run);
  const double step = 4.0 * 128 * 4096.0 * 4096.0 * 32 / 1e15, xfer = 16777216.0 / (1e10 / 4);
  EXPECT_NEAR(run.result.time_s, 7 * xfer + step, (7 * xfer + step) * 1e-12);
}

TEST(Degrade, DevicePairNamesTheLinksOfThatRoute) {
  // "3-4" is the same link as "ring3" on a flat ring.
  const auto w = llama3(8, 4096, Layout::Ring, false);
  SimRun run;
  run.options = testing::sim_options(w, flat_hw(1e15, 1e10, 0));
  run.options.faults.degrades.push_back({"3-4", 4.0});
  RINGSIM_SIMULATE(run);
  const double step = 4.0 * 128 * 4096.0 * 4096.0 * 32 / 1e15, xfer = 16777216.0 / (1e10 / 4);
  EXPECT_NEAR(run.result.time_s, 7 * xfer + step, (7 * xfer + step) * 1e-12);
}

TEST(Jitter, SlowsALockStepRingOnAverage) {
  // Each step waits for its slowest device, so mean-1 noise makes the ring
  // slower than the noiseless schedule (E[max] > max E), never faster.
  const auto w = llama3(16, 4096, Layout::Zigzag, true);
  SimRun run;
  run.options = testing::sim_options(w, flat_hw(1e15, 1e14, 0));
  run.options.faults.jitter_sigma = 0.2;
  run.options.faults.seed = 7;
  RINGSIM_SIMULATE(run);
  const auto a = analyze(w, run.options.hardware, *run.compute);
  EXPECT_GT(run.result.time_s, a.time_s);
  // Busy times differ between devices (the noise is per device and step).
  const auto& b = run.result.device_busy_s;
  EXPECT_LT(*std::min_element(b.begin(), b.end()), *std::max_element(b.begin(), b.end()));
}

TEST(Interrupt, StopsTheRunAndSaysSo) {
  const auto w = llama3(64, 4096, Layout::Ring, true);
  SimRun run;
  run.options = testing::sim_options(w, flat_hw(1e15, 1e11, 0));
  sim::set_interrupt_requested(true);
  RINGSIM_SIMULATE(run);
  sim::set_interrupt_requested(false);
  EXPECT_TRUE(run.result.interrupted);
}

TEST(NetworkModel, Lv08IsSlowerThanExactOnACommBoundRing) {
  // LV08 multiplies latency by 13.01 and bandwidth by 0.97 (SimGrid's TCP
  // calibration), so a comm-bound ring takes longer than S/B + L per step.
  const auto w = llama3(8, 4096, Layout::Ring, false);
  SimRun run;
  run.options = testing::sim_options(w, flat_hw(1e15, 1e10, 1e-6));
  run.options.network = sim::NetworkModel::LV08;
  RINGSIM_SIMULATE(run);
  const double exact = 7 * (16777216.0 / 1e10 + 1e-6) + 4.0 * 128 * 4096.0 * 4096.0 * 32 / 1e15;
  EXPECT_GT(run.result.time_s, exact * 1.02);
}

}  // namespace
}  // namespace ringsim
