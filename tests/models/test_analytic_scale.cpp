// Size guards of the analytic model: analyze() evaluates one device
// per group of equal work instead of every device at every step, and every
// size is checked 64-bit arithmetic. Brute force over all devices is the
// reference here; the extremes must give a finite answer or an InputError,
// never a wrapped-around number.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "helpers.hpp"
#include "models/analytic/analytic.hpp"
#include "models/core/errors.hpp"
#include "models/core/profile.hpp"
#include "models/core/work.hpp"

using namespace ringsim;
using ringsim::testing::flat;
using ringsim::testing::make_workload;

namespace {

// Relative tolerance: analyze() multiplies a step time by a device count where
// the brute force adds it that many times; the two differ by rounding only.
constexpr double kRel = 1e-12;

bool valid(const Workload& w) {
  try {
    validate(w, flat(1e15, 1e11));
    return true;
  } catch (const InputError&) {
    return false;
  }
}

}  // namespace

TEST(AnalyticScale, GroupedDevicesEqualEveryDevice) {
  const RooflineModel rm(1e15);
  int checked = 0;
  for (Layout l : {Layout::Ring, Layout::Striped, Layout::Zigzag, Layout::Ulysses,
                   Layout::Allgather, Layout::Hybrid})
    for (std::int64_t n : {1, 2, 3, 4, 6, 8})
      for (std::int64_t c : {2, 6, 16})
        for (bool causal : {true, false}) {
          auto w = make_workload(n, c, l, causal);
          if (!valid(w)) continue;
          const auto s = analyze(w, flat(1e15, 1e11), rm);
          double compute_only = 0, ideal = 0;
          const auto steps = num_steps(w);
          ASSERT_EQ(static_cast<std::int64_t>(s.steps.size()), steps);
          for (std::int64_t st = 0; st < steps; ++st) {
            double cmax = 0;
            for (std::int64_t i = 0; i < n; ++i) {
              const double t = step_seconds(w, rm, i, st, false);
              cmax = std::max(cmax, t);
              ideal += t / static_cast<double>(n);
            }
            EXPECT_NEAR(s.steps[static_cast<size_t>(st)].compute_s, cmax, kRel * cmax)
                << to_string(l) << " n=" << n << " c=" << c << " step " << st;
            compute_only += cmax;
          }
          EXPECT_NEAR(s.compute_only_s, compute_only, kRel * compute_only)
              << to_string(l) << " n=" << n;
          EXPECT_NEAR(s.ideal_time_s, ideal, kRel * ideal) << to_string(l) << " n=" << n;
          ++checked;
        }
  EXPECT_GT(checked, 100);  // the loops must not have skipped everything
}

TEST(AnalyticScale, MillionDevicesIsFastAndFinite) {
  // 2^20 devices x 2^20 tokens = 2^40 tokens: the largest sequence the CLI allows.
  for (Layout l : {Layout::Ring, Layout::Zigzag, Layout::Hybrid}) {
    auto w = make_workload(std::int64_t{1} << 20, std::int64_t{1} << 20, l, true,
                           l == Layout::Ring ? Pass::FwdBwd : Pass::Fwd);
    const auto s = analyze(w, flat(1e15, 1e11));
    EXPECT_TRUE(std::isfinite(s.time_s) && s.time_s > 0) << to_string(l);
    // Causal ring attention over S tokens does H * S(S+1)/2 score entries; at
    // 4 * head_dim FLOPs each (forward) the ideal time is at least that over
    // all devices' FLOP/s. Checks the number is not a wrapped-around product.
    const double S = std::ldexp(1.0, 40);
    const double fwd_ideal = 32 * S * (S + 1) / 2 * 4 * 128 / (1e15 * std::ldexp(1.0, 20));
    EXPECT_GT(s.ideal_time_s, fwd_ideal * 0.99) << to_string(l);
  }
}

TEST(AnalyticScale, OverflowingStepIsRefusedNotWrapped) {
  // One device holding 2^40 tokens: 32 * 2^80 / 2 score entries in one step.
  auto w = make_workload(1, std::int64_t{1} << 40, Layout::Ring, true);
  EXPECT_THROW(analyze(w, flat(1e15, 1e11)), InputError);
  // Ulysses over 8 devices squares the whole 2^40-token sequence.
  auto u = make_workload(8, std::int64_t{1} << 37, Layout::Ulysses, true);
  EXPECT_THROW(analyze(u, flat(1e15, 1e11)), InputError);
  // Striped with 2^39-token blocks.
  auto s = make_workload(2, std::int64_t{1} << 39, Layout::Striped, false);
  EXPECT_THROW(step_entries(s, 0, 0), InputError);
  // The largest block whose step still fits: 32 * c^2 < 2^64 with c = 2^29.
  auto ok = make_workload(1, std::int64_t{1} << 29, Layout::Ring, false);
  EXPECT_EQ(step_entries(ok, 0, 0), std::uint64_t{32} << 58);
}

TEST(AnalyticScale, EveryLayoutAtSizeExtremesIsFiniteOrRefused) {
  // Blocks from 1 to 2^40 tokens: each workload either predicts a finite,
  // positive time or is refused with an InputError (odd zigzag/allgather
  // blocks, 64-bit overflow). Under the sanitizer CI stage this also runs
  // every product through UBSan.
  int ok = 0, refused = 0;
  for (Layout l : {Layout::Ring, Layout::Striped, Layout::Zigzag, Layout::Ulysses,
                   Layout::Allgather, Layout::Hybrid})
    for (std::int64_t n : {1, 2, 8, 1024})
      for (int lb : {0, 1, 20, 29, 30, 32, 39, 40})
        for (bool causal : {true, false}) {
          const std::int64_t c = std::int64_t{1} << lb;
          if (c > (std::int64_t{1} << 40) / n) continue;
          auto w = make_workload(n, c, l, causal, Pass::FwdBwd);
          if (l == Layout::Hybrid) w.ulysses_degree = n >= 8 ? 8 : n;
          try {
            validate(w, flat(1e15, 1e11));
            const auto s = analyze(w, flat(1e15, 1e11, 1e-6));
            EXPECT_TRUE(std::isfinite(s.time_s) && s.time_s > 0 && s.ideal_time_s > 0)
                << to_string(l) << " n=" << n << " c=" << c << " time " << s.time_s;
            ++ok;
          } catch (const InputError&) {
            ++refused;
          }
        }
  EXPECT_GT(ok, 100);
  EXPECT_GT(refused, 20);
}

TEST(AnalyticScale, OddAllgatherBlockIsRefused) {
  // allgather shards queries as two zigzag chunks of c/2: an odd block used to
  // drop a token (block 1: zero work, a 0 s ideal time).
  auto w = make_workload(4, 1, Layout::Allgather, true);
  EXPECT_THROW(validate(w, flat(1e15, 1e11)), InputError);
  w.block = 2;
  EXPECT_NO_THROW(validate(w, flat(1e15, 1e11)));
}
