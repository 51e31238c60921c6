// Cluster shapes beyond one NIC per GPU (docs/models.md, "Cluster fields"):
// an NVLink domain across nodes (GB200 NVL72), oversubscribed spine uplinks,
// NICs shared by GPUs. Times worked out by hand from S/B + L, checked against
// the SimGrid model and the closed forms. One simulation per TEST (ctest runs
// each in its own process).
//
// Every case is comm-bound on purpose (--flops 1e18: a step computes in
// 0.27 us), so a ring of N devices takes N-1 transfers over its slowest hop
// plus the last step's compute: the slow hop forwards one block per step, back
// to back (tests/sim/test_hand_cases.cpp, FlatRing.CommBoundTimeIsTransfersPlusOneStep).
#include <gtest/gtest.h>

#include "models/analytic/analytic.hpp"
#include "models/core/torus.hpp"
#include "sim/topology.hpp"
#include "tests/sim/helpers.hpp"

namespace ringsim {
namespace {

using testing::llama3;
using testing::SimRun;

constexpr double kRel = 1e-9;
constexpr double kFlops = 1e18;
// llama3-8b K and V of a 4096-token block, bf16: 2 x 4096 x 8 x 128 x 2 bytes.
constexpr double kBlockBytes = 16777216;
// Non-causal forward step at 1e18 FLOP/s: 4 x 128 x 4096^2 x 32 / 1e18.
constexpr double kStep = 4.0 * 128 * 4096.0 * 4096.0 * 32 / kFlops;

// The test-nvl72 cluster of tests/sim/data/nvl72-cluster.json, merged as
// --catalog would, at --flops 1e18 --efficiency 1.
Hardware nvl72_hw() {
  Catalog cat = Catalog::embedded();
  cat.merge_file(RINGSIM_SIM_DATA "/nvl72-cluster.json");
  const auto& c = cat.cluster("test-nvl72");
  const auto& a = cat.interconnect(c.intra);
  const auto& b = cat.interconnect(c.inter);
  Hardware hw;
  hw.gpu_name = c.gpu;
  hw.flops = kFlops;
  hw.efficiency = 1;
  hw.platform = Platform::Nodes;
  hw.gpus_per_node = c.gpus_per_node;
  hw.nics_per_node = c.nics_per_node;
  hw.nvlink_domain = c.nvlink_domain;
  hw.intra_bw = a.bandwidth;
  hw.intra_lat = a.latency;
  hw.inter_bw = b.bandwidth;
  hw.inter_lat = b.latency;
  return hw;
}

// A fat-tree of 8 NICs on leaves of 4 ports: the ring's hops 3 -> 4 and
// 7 -> 0 go leaf -> spine -> leaf; 50 GB/s, 3 us NIC to NIC.
Hardware fattree_hw(double oversubscription) {
  Hardware hw;
  hw.flops = kFlops;
  hw.efficiency = 1;
  hw.platform = Platform::FatTree;
  hw.gpus_per_node = 1;
  hw.inter_bw = hw.intra_bw = 50e9;
  hw.inter_lat = hw.intra_lat = 3e-6;
  hw.leaf_ports = 4;
  hw.oversubscription = oversubscription;
  return hw;
}

void expect_both(SimRun& run, double expect) {
  const auto& o = run.options;
  EXPECT_NEAR(run.result.time_s, expect, expect * kRel) << "SimGrid";
  EXPECT_NEAR(analyze(o.workload, o.hardware).time_s, expect, expect * kRel) << "closed forms";
}

TEST(NvlinkDomain, CatalogFileReadsTheShape) {
  const auto hw = nvl72_hw();
  EXPECT_EQ(hw.nvlink_domain, 72);
  EXPECT_EQ(hw.gpus_per_node, 4);
  EXPECT_EQ(hw.intra_bw, 900e9);  // nvlink5: 1.8 TB/s bidirectional per GPU
  EXPECT_EQ(hw.ring_bandwidth(72), 900e9);
  EXPECT_EQ(hw.ring_bandwidth(144), 50e9);  // ib-ndr
}

TEST(NvlinkDomain, Ring72RunsAtNvlinkAcrossTrays) {
  // 72 GPUs on 18 trays of 4, one NVLink fabric: every hop, tray to tray
  // included, is NVLink: 71 x (16 MiB / 900 GB/s + 2 us) + step = 1.46581 ms.
  SimRun run;
  run.options = testing::sim_options(llama3(72, 4096, Layout::Ring, false), nvl72_hw());
  RINGSIM_SIMULATE(run);
  const double expect = 71 * (kBlockBytes / 900e9 + 2e-6) + kStep;
  EXPECT_NEAR(expect, 1.46581e-3, 1e-8);
  expect_both(run, expect);
}

TEST(NvlinkDomain, Ring144CrossesTheNics) {
  // Two domains: hops 71 -> 72 and 143 -> 0 leave the NVLink fabric through
  // the NICs (NIC to NIC 3 us): 143 x (16 MiB / 50 GB/s + 3 us) + step = 48.41 ms.
  SimRun run;
  run.options = testing::sim_options(llama3(144, 4096, Layout::Ring, false), nvl72_hw());
  RINGSIM_SIMULATE(run);
  const double expect = 143 * (kBlockBytes / 50e9 + 3e-6) + kStep;
  expect_both(run, expect);
}

TEST(Oversubscription, NonBlockingSpineCostsNothing) {
  // R = 1: 7 x (16 MiB / 50 GB/s + 3 us) + step.
  SimRun run;
  run.options = testing::sim_options(llama3(8, 4096, Layout::Ring, false), fattree_hw(1));
  RINGSIM_SIMULATE(run);
  expect_both(run, 7 * (kBlockBytes / 50e9 + 3e-6) + kStep);
}

TEST(Oversubscription, TwoToOneDoublesTheCrossSpineBytes) {
  // R = 2: each uplink carries 25 GB/s, and the cross-spine hops bound every
  // step: 7 x (16 MiB / 25 GB/s + 3 us) + step, twice the per-byte time of R = 1.
  SimRun run;
  run.options = testing::sim_options(llama3(8, 4096, Layout::Ring, false), fattree_hw(2));
  RINGSIM_SIMULATE(run);
  expect_both(run, 7 * (kBlockBytes / 25e9 + 3e-6) + kStep);
}

TEST(Oversubscription, FourToOneWithinOneLeafCostsNothing) {
  // 4 devices on one 4-port leaf never reach a spine, whatever R.
  SimRun run;
  run.options = testing::sim_options(llama3(4, 4096, Layout::Ring, false), fattree_hw(4));
  RINGSIM_SIMULATE(run);
  expect_both(run, 3 * (kBlockBytes / 50e9 + 3e-6) + kStep);
}

// ---- NICs shared by GPUs (engine-free: routes and the closed-form rule) -----

Hardware shared_nic_hw(int nics) {
  Hardware hw;
  hw.platform = Platform::Nodes;
  hw.gpus_per_node = 8;
  hw.nics_per_node = nics;
  hw.intra_bw = 450e9;
  hw.inter_bw = 50e9;
  return hw;
}

TEST(SharedNics, FourNicsOnEightGpusRouteTwoGpusThroughOne) {
  sim::TopologyOptions o;
  o.platform = Platform::Nodes;
  o.devices = 16;
  o.gpus_per_node = 8;
  o.nics_per_node = 4;
  o.intra_bw = 450e9;
  o.inter_bw = 50e9;
  const sim::Topology t(o);
  std::vector<sim::Hop> a, b;
  t.route(6, 14, a);  // hybrid's group ring: local GPU 6 to the next node's 6
  t.route(7, 15, b);
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  // Both leave through nic3 (GPUs 6 and 7 of node 0) and arrive through nic7.
  EXPECT_EQ(t.links()[a.front().link].name, "nic3");
  EXPECT_EQ(t.links()[b.front().link].name, "nic3");
  EXPECT_EQ(t.links()[a.back().link].name, "nic7");
  EXPECT_EQ(t.links()[b.back().link].name, "nic7");
  EXPECT_EQ(t.find_link("nic8"), -1);  // 2 nodes x 4 NICs
}

TEST(SharedNics, ClosedFormHalvesTheShareOnlyWhenBothGpusSend) {
  // A plain ring sends one flow across each node boundary: a full NIC.
  EXPECT_EQ(shared_nic_hw(4).ring_bandwidth(16), 50e9);
  // Hybrid's ring of 8-GPU groups sends 8 flows at once, two per NIC: half.
  EXPECT_EQ(shared_nic_hw(4).ring_bandwidth(16, 8), 25e9);
  EXPECT_EQ(shared_nic_hw(8).ring_bandwidth(16, 8), 50e9);
  EXPECT_EQ(shared_nic_hw(2).ring_bandwidth(16, 8), 12.5e9);
  // Two flows at once (stride 2) meet on one NIC when two GPUs share it.
  EXPECT_EQ(shared_nic_hw(4).ring_bandwidth(16, 2), 25e9);
}

}  // namespace
}  // namespace ringsim

namespace ringsim {
namespace {

// A 4x4 torus2d of 16 chips at 100 GB/s and 1 us per link, comm-bound. With
// wrap-around links the snake (rows swept back and forth, the last dimension
// even) closes over one link: each of the 15 transfers takes S/B + 1 us. As a
// mesh (a partial TPU slice, no wrap-around) the closing hop runs back along
// the last dimension over 3 links, in the direction no ring hop uses, so it
// shares nothing and takes S/B + 3 us.
Hardware torus_hw(bool wraparound) {
  Hardware hw;
  hw.flops = 1e18;
  hw.efficiency = 1;
  hw.platform = Platform::Torus2D;
  hw.gpus_per_node = 4;
  hw.intra_bw = hw.inter_bw = 100e9;
  hw.intra_lat = hw.inter_lat = 1e-6;
  hw.torus_dims = {4, 4};
  hw.torus_wraparound = wraparound;
  return hw;
}

constexpr double kTorusBlockBytes = 16777216;  // llama3-8b K and V of 4096 tokens, bf16
const double kTorusStep = 4.0 * 128 * 4096.0 * 4096.0 * 32 / 1e18;

TEST(TorusSlice, ClosingHopCounts) {
  EXPECT_EQ(closing_hops({4, 4}, true), 1);
  EXPECT_EQ(closing_hops({4, 4}, false), 3);
  EXPECT_EQ(closing_hops({2, 2, 4}, false), 3);
  EXPECT_EQ(closing_hops({4, 4, 4}, true), 1);
  EXPECT_EQ(closing_hops({3, 3}, true), 2);  // odd: the snake ends a diagonal away
  EXPECT_EQ(torus_hw(false).ring_latency(16), 3e-6);
  EXPECT_EQ(torus_hw(true).ring_latency(16), 1e-6);
}

TEST(TorusSlice, WrapAroundClosesInOneLink) {
  SimRun run;
  run.options = testing::sim_options(llama3(16, 4096, Layout::Ring, false), torus_hw(true));
  RINGSIM_SIMULATE(run);
  expect_both(run, 15 * (kTorusBlockBytes / 100e9 + 1e-6) + kTorusStep);
}

TEST(TorusSlice, MeshClosesOverThreeLinks) {
  SimRun run;
  run.options = testing::sim_options(llama3(16, 4096, Layout::Ring, false), torus_hw(false));
  RINGSIM_SIMULATE(run);
  expect_both(run, 15 * (kTorusBlockBytes / 100e9 + 3e-6) + kTorusStep);
}

}  // namespace
}  // namespace ringsim
