// Pieces of the simulator that need no engine: fault flags, the jitter draw,
// the size guard, step ranges in the summary.
#include <gtest/gtest.h>

#include <cmath>

#include "models/core/errors.hpp"
#include "sim/faults.hpp"
#include "sim/guard.hpp"
#include "sim/link_meter.hpp"
#include "sim/recurrence_rules.hpp"
#include "sim/sim_report.hpp"
#include "sim/symmetry.hpp"
#include "tests/sim/helpers.hpp"

namespace ringsim::sim {
namespace {

TEST(Faults, ParseStragglerAndDegrade) {
  const auto s = parse_straggler("3:2.5", 8);
  EXPECT_EQ(s.device, 3);
  EXPECT_DOUBLE_EQ(s.factor, 2.5);
  EXPECT_THROW(parse_straggler("8:2", 8), InputError);  // no device 8
  EXPECT_THROW(parse_straggler("3", 8), InputError);
  EXPECT_THROW(parse_straggler("3:", 8), InputError);
  EXPECT_THROW(parse_straggler("3:0", 8), InputError);
  EXPECT_THROW(parse_straggler("3:nan", 8), InputError);
  const auto d = parse_degrade("leaf0-spine2:4");
  EXPECT_EQ(d.link, "leaf0-spine2");
  EXPECT_DOUBLE_EQ(d.factor, 4);
  EXPECT_THROW(parse_degrade(":4"), InputError);
}

TEST(Faults, LinkDivisorsByNameAndByRoute) {
  TopologyOptions o;
  o.platform = Platform::Nodes;
  o.devices = 16;
  o.intra_bw = o.inter_bw = 1e9;
  Topology t(o);
  const auto div = link_divisors(t, {{"nic7", 2}, {"7-8", 3}});
  EXPECT_DOUBLE_EQ(div[t.find_link("nic7")], 6);  // both apply
  EXPECT_DOUBLE_EQ(div[t.find_link("nic8")], 3);
  EXPECT_DOUBLE_EQ(div[t.find_link("nic9")], 1);
  try {
    link_divisors(t, {{"nic99", 2}});
    FAIL() << "unknown link accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--degrade: unknown link 'nic99'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(link_divisors(t, {{"3-3", 2}}), InputError);  // no link to itself
  EXPECT_THROW(link_divisors(t, {{"3-99", 2}}), InputError);
}

TEST(Faults, JitterIsAPureFunctionOfSeedAndPosition) {
  EXPECT_EQ(jitter_factor(0.3, 7, 5, 0, 1, 9), jitter_factor(0.3, 7, 5, 0, 1, 9));
  EXPECT_NE(jitter_factor(0.3, 7, 5, 0, 1, 9), jitter_factor(0.3, 8, 5, 0, 1, 9));
  EXPECT_NE(jitter_factor(0.3, 7, 5, 0, 1, 9), jitter_factor(0.3, 7, 5, 0, 1, 10));
  EXPECT_EQ(jitter_factor(0, 7, 5, 0, 1, 9), 1.0);
}

TEST(Faults, JitterHasMeanOneAndTheRequestedSigma) {
  // 200k draws: the sample mean of a lognormal with sigma 0.5 has standard
  // error 0.53/sqrt(2e5) = 0.0012 and log's sd ~0.0008; 5 standard errors.
  const int n = 200000;
  double sum = 0, sum_log = 0, sum_log2 = 0;
  for (int i = 0; i < n; ++i) {
    const double x = jitter_factor(0.5, 42, i % 1000, 0, 0, i / 1000);
    sum += x;
    sum_log += std::log(x);
    sum_log2 += std::log(x) * std::log(x);
  }
  const double mean = sum / n, mlog = sum_log / n, sd = std::sqrt(sum_log2 / n - mlog * mlog);
  EXPECT_NEAR(mean, 1.0, 0.006);
  EXPECT_NEAR(mlog, -0.125, 0.006);  // -sigma^2/2
  EXPECT_NEAR(sd, 0.5, 0.004);
}

TEST(Guard, EstimateGrowsWithTheScheduleAndTheOutputs) {
  const auto w1 = testing::llama3(256, 4096, Layout::Ring, true);
  const auto w2 = testing::llama3(1024, 4096, Layout::Ring, true);
  TopologyOptions t;
  t.devices = 256;
  const auto e1 = estimate_size(w1, t, false, false);
  EXPECT_EQ(e1.activities, 2u * 256 * 256);
  t.devices = 1024;
  const auto e2 = estimate_size(w2, t, false, false);
  EXPECT_EQ(e2.activities, 2u * 1024 * 1024);
  EXPECT_GT(e2.memory_bytes, e1.memory_bytes);
  const auto e3 = estimate_size(w2, t, true, true);
  EXPECT_GT(e3.memory_bytes, e2.memory_bytes + 1024ull * 1024 * 4 * sizeof(Event));
  EXPECT_GT(e3.trace_bytes, 0u);
  EXPECT_GT(e3.csv_bytes, 0u);
}

TEST(Guard, CountsTheRouteLengthOfAllToAllTransfers) {
  // Ulysses over 256 devices: one step and 255 all-to-all rounds per pass. On
  // a flat ring a round's peer is up to 128 links away (64 on average), and
  // SimGrid's cost grows with the links: the estimate must say so; on a
  // switched fabric every peer is a few hops.
  auto w = testing::llama3(256, 4096, Layout::Ulysses, true);
  w.shape.heads = w.shape.kv_heads = 256;
  TopologyOptions flat;
  flat.devices = 256;
  flat.platform = Platform::Flat;
  TopologyOptions nodes = flat;
  nodes.platform = Platform::Nodes;
  const auto ef = estimate_size(w, flat, false, false), en = estimate_size(w, nodes, false, false);
  EXPECT_EQ(en.activities, 256u * (2 + 2 * 255));
  const double ratio = static_cast<double>(ef.activities) / static_cast<double>(en.activities);
  EXPECT_GT(ratio, 3.0);  // 1 + (64.25 - 1) / 26 = 3.4
  EXPECT_LT(ratio, 4.0);
}

TEST(Guard, RefusesPastTheBudgetAndPointsToTheAnalyticEngine) {
  SizeEstimate e;
  e.activities = 1000;
  e.memory_bytes = 1 << 20;
  EXPECT_NO_THROW(check_budget(e, {1000, 1 << 20}));
  try {
    check_budget(e, {999, 1 << 20});
    FAIL() << "over-budget run accepted";
  } catch (const InputError& err) {
    const std::string m = err.what();
    EXPECT_EQ(m.rfind("--max-activities: ", 0), 0u) << m;
    EXPECT_NE(m.find("1e+03 activities"), std::string::npos) << m;
    EXPECT_NE(m.find("--engine analytic"), std::string::npos) << m;
  }
  EXPECT_THROW(check_budget(e, {1000, 1000}), InputError);
}

TEST(Report, StepRanges) {
  EXPECT_EQ(step_ranges({}), "");
  EXPECT_EQ(step_ranges({0, 1, 2, 3, 5, 7, 8}), "0-3, 5, 7-8");
}

}  // namespace
}  // namespace ringsim::sim

namespace ringsim::sim {
namespace {

TEST(Symmetry, PeriodOfEachPlatform) {
  TopologyOptions t;
  t.platform = Platform::Nodes;
  t.devices = 64;
  t.intra_bw = 450e9;
  t.inter_bw = 50e9;
  const auto zz = testing::llama3(64, 4096, Layout::Zigzag, true);
  auto p = symmetric_period(zz, t, {}, true, false);
  EXPECT_EQ(p.devices, 8);  // one node; its last GPU sends over the NIC
  EXPECT_TRUE(p.topology.wrap_is_inter);
  EXPECT_EQ(p.topology.platform, Platform::Flat);
  t.platform = Platform::Flat;
  EXPECT_EQ(symmetric_period(zz, t, {}, true, false).devices, 2);
  t.platform = Platform::Torus3D;
  t.devices = 27;  // 3x3x3: the ring closes over three links
  EXPECT_EQ(
      symmetric_period(testing::llama3(27, 4096, Layout::Zigzag, true), t, {}, true, false).devices,
      0);
  t.platform = Platform::Nodes;
  t.devices = 60;  // last node partly filled
  EXPECT_EQ(
      symmetric_period(testing::llama3(60, 4096, Layout::Zigzag, true), t, {}, true, false).devices,
      0);
}

TEST(Recurrence, FindsTheFirstLinkTwoRingHopsShare) {
  // docs/sim.md's contention case: 2 rings of 48 on a fat-tree of 32-NIC
  // leaves. Ring 0 closes 47 -> 0 from leaf 1 to leaf 0 and ring 1 crosses
  // 63 -> 64 from leaf 1 to leaf 2; both destinations are port 0 of their
  // leaf, so static routing sends both up the same cable to spine 0.
  TopologyOptions t;
  t.platform = Platform::FatTree;
  t.devices = 96;
  t.inter_bw = 1e10;
  t.oversubscription = 2;
  const Topology topo(t);
  EXPECT_EQ(shared_ring_link(topo, 48), "hop 47->0 and 63->64 both cross leaf1-spine0 up");
  // One ring over all 96: each leaf has one hop out, each its own cable.
  EXPECT_EQ(shared_ring_link(topo, 96), "");
  EXPECT_EQ(shared_ring_link(topo, 1), "");
}

TEST(Guard, ARecurrenceCostsFarLessThanTheActors) {
  const auto w = testing::llama3(4096, 4096, Layout::Ring, true);
  TopologyOptions t;
  t.devices = 4096;
  t.platform = Platform::Nodes;
  const auto actors = estimate_size(w, t, false, false);
  const auto rec = estimate_recurrence_size(w, t, false, false);
  EXPECT_GT(actors.activities, default_budget().max_activities / 32);
  EXPECT_EQ(rec.activities,
            static_cast<std::uint64_t>(static_cast<double>(actors.activities) / 64));
  // Measured: 216 MiB peak for this run played as a recurrence, most of it
  // the recorder's waits; the estimate is an upper-ish bound.
  EXPECT_GT(rec.memory_bytes, 216u << 20);
  EXPECT_LT(rec.memory_bytes, 432u << 20);
}

TEST(Symmetry, OnlyUniformFaultFreeExactRuns) {
  TopologyOptions t;
  t.platform = Platform::Flat;
  t.devices = 16;
  EXPECT_EQ(
      symmetric_period(testing::llama3(16, 64, Layout::Ring, true), t, {}, true, false).devices, 0);
  EXPECT_EQ(
      symmetric_period(testing::llama3(16, 64, Layout::Striped, true), t, {}, true, false).devices,
      0);
  EXPECT_EQ(symmetric_period(testing::llama3(16, 64, Layout::Allgather, false), t, {}, true, false)
                .devices,
            0);
  const auto nc = testing::llama3(16, 64, Layout::Ring, false);
  EXPECT_EQ(symmetric_period(nc, t, {}, true, false).devices, 2);
  Faults f;
  f.jitter_sigma = 0.1;
  EXPECT_EQ(symmetric_period(nc, t, f, true, false).devices, 0);
  EXPECT_EQ(symmetric_period(nc, t, {}, false, false).devices, 0);  // lv08
  EXPECT_EQ(symmetric_period(nc, t, {}, true, true).devices, 0);    // --trace
}

}  // namespace
}  // namespace ringsim::sim

namespace ringsim::sim {
namespace {

// Job mode's link meter: a transfer's bytes spread over the time it moved
// data; a bin's utilisation is its bytes over what the link carries in it.
TEST(LinkMeter, PeakIsTheBusiestBinAndMeanTheWholeRun) {
  const std::vector<TopoLink> links{{"a", 10, 0}, {"b", 10, 0}};
  LinkMeter m({10, 10}, 1.0);
  // Two flows of 5 B each on a (up) during [0, 1]: together the link's 10 B/s.
  m.add({{0, true}}, 5, 0, 1);
  m.add({{0, true}}, 5, 0, 1);
  // b (down) carries 10 B over [0.5, 2.5]: 2.5 B in bin 0, 5 in bin 1, 2.5 in bin 2.
  m.add({{1, false}}, 10, 0.5, 2.5);
  EXPECT_DOUBLE_EQ(m.peak(0, true), 1.0);
  EXPECT_DOUBLE_EQ(m.peak(0, false), 0.0);
  EXPECT_DOUBLE_EQ(m.peak(1, false), 0.5);
  EXPECT_DOUBLE_EQ(m.mean(0, true, 4), 0.25);
  const auto h = m.hottest(5, 4, links);
  ASSERT_EQ(h.size(), 2u);  // links that carried nothing are left out
  EXPECT_EQ(h[0].name, "a up");
  EXPECT_EQ(h[1].name, "b down");
  EXPECT_DOUBLE_EQ(h[1].bytes, 10);
  // Equal peaks: the link busy longer comes first.
  EXPECT_TRUE(LinkMeter::busier(1.0, 0.5, 1.0 + 1e-9, 0.25));
  EXPECT_THROW(LinkMeter({1}, 0), std::invalid_argument);
}

TEST(LinkMeter, AnOverfullBinReadsFull) {
  // Spread evenly, three transfers put 5 + 4 + 3 = 12 B in bin 0 of a 10 B/s
  // link (the long one really ran slower while the short ones did, faster
  // after): the bin was full, and the peak reads 1, not 1.2.
  const std::vector<TopoLink> links{{"a", 10, 0}};
  LinkMeter m({10}, 1.0);
  m.add({{0, true}}, 5, 0, 1);
  m.add({{0, true}}, 8, 0, 2);
  m.add({{0, true}}, 3, 0, 1);
  EXPECT_DOUBLE_EQ(m.peak(0, true), 1.0);
  EXPECT_DOUBLE_EQ(m.mean(0, true, 2), 0.8);
}

}  // namespace
}  // namespace ringsim::sim
