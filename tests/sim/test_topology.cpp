// Routes of the simulated platforms, without SimGrid: which links each ring
// hop and each other transfer crosses, and with what latency.
#include <gtest/gtest.h>

#include <set>

#include "models/core/errors.hpp"
#include "sim/topology.hpp"

namespace ringsim::sim {
namespace {

TopologyOptions opts(Platform p, std::int64_t n) {
  TopologyOptions o;
  o.platform = p;
  o.devices = n;
  o.intra_bw = 450e9;
  o.intra_lat = 2e-6;
  o.inter_bw = 50e9;
  o.inter_lat = 3e-6;
  return o;
}

std::vector<std::string> names(const Topology& t, std::int64_t a, std::int64_t b) {
  std::vector<Hop> hops;
  t.route(a, b, hops);
  std::vector<std::string> out;
  for (const auto& h : hops) out.push_back(t.links()[h.link].name + (h.up ? "+" : "-"));
  return out;
}

TEST(Flat, NeighboursAreOneLinkAndFarDevicesGoTheShortWay) {
  Topology t(opts(Platform::Flat, 8));
  EXPECT_EQ(t.links().size(), 8u);
  EXPECT_EQ(names(t, 3, 4), (std::vector<std::string>{"ring3+"}));
  EXPECT_EQ(names(t, 7, 0), (std::vector<std::string>{"ring7+"}));
  EXPECT_EQ(names(t, 4, 3), (std::vector<std::string>{"ring3-"}));
  EXPECT_EQ(names(t, 1, 6), (std::vector<std::string>{"ring0-", "ring7-", "ring6-"}));
  EXPECT_TRUE(names(t, 2, 2).empty());
  EXPECT_DOUBLE_EQ(t.route_latency(0, 1), 2e-6);
  EXPECT_EQ(t.node_of(5), 0);
}

TEST(Nodes, NvlinkInsideANodeAndOneNicHopBetween) {
  Topology t(opts(Platform::Nodes, 16));
  EXPECT_EQ(names(t, 2, 3), (std::vector<std::string>{"nvl2+", "nvl3-"}));
  EXPECT_DOUBLE_EQ(t.route_latency(2, 3), 2e-6);
  // 16 GPUs: the rail leaves (one per local rank) all hold both nodes, so
  // 7 -> 8 crosses rails through a spine chosen by the destination's port.
  EXPECT_EQ(names(t, 7, 8),
            (std::vector<std::string>{"nic7+", "leaf7-spine1+", "leaf0-spine1-", "nic8-"}));
  EXPECT_EQ(names(t, 3, 11), (std::vector<std::string>{"nic3+", "nic11-"}));  // same rail
  // The catalog latency is GPU-to-GPU: exactly once per inter-node route.
  EXPECT_DOUBLE_EQ(t.route_latency(7, 8), 3e-6);
  EXPECT_EQ(t.node_of(9), 1);
}

TEST(Nodes, FatTreeLeavesGroupConsecutiveNics) {
  auto o = opts(Platform::Nodes, 128);
  o.inter = InterTopology::FatTree;
  Topology t(o);
  EXPECT_EQ(names(t, 7, 8), (std::vector<std::string>{"nic7+", "nic8-"}));  // same leaf
  EXPECT_EQ(names(t, 31, 32),
            (std::vector<std::string>{"nic31+", "leaf0-spine0+", "leaf1-spine0-", "nic32-"}));
}

TEST(Nodes, RingBoundaryHopsNeverShareACable) {
  // Every node-boundary hop of a 1024-GPU ring, rail and fat-tree: each
  // directed link appears in at most one of them.
  for (auto inter : {InterTopology::Rail, InterTopology::FatTree}) {
    auto o = opts(Platform::Nodes, 1024);
    o.inter = inter;
    Topology t(o);
    std::set<std::pair<int, bool>> used;
    for (std::int64_t d = 0; d < 1024; ++d) {
      std::vector<Hop> hops;
      t.route(d, (d + 1) % 1024, hops);
      for (const auto& h : hops)
        EXPECT_TRUE(used.insert({h.link, h.up}).second) << t.links()[h.link].name;
    }
  }
}

TEST(FatTree, EveryDeviceHasItsOwnNic) {
  Topology t(opts(Platform::FatTree, 64));
  EXPECT_EQ(names(t, 0, 1), (std::vector<std::string>{"nic0+", "nic1-"}));
  EXPECT_DOUBLE_EQ(t.route_latency(0, 1), 3e-6);
  EXPECT_DOUBLE_EQ(t.route_latency(0, 40), 3e-6);
  EXPECT_EQ(t.node_of(40), 0);
}

TEST(Torus, SnakeMakesEveryRingHopOneLink) {
  for (auto [p, n] : {std::pair{Platform::Torus2D, std::int64_t{16}},
                      {Platform::Torus2D, 24},
                      {Platform::Torus3D, 64},
                      {Platform::Torus3D, 48},
                      {Platform::Torus2D, 2}}) {
    Topology t(opts(p, n));
    for (std::int64_t d = 0; d < n; ++d) {
      std::vector<Hop> hops;
      t.route(d, (d + 1) % n, hops);
      EXPECT_EQ(hops.size(), 1u) << to_string(p) << " " << n << " hop " << d;
      EXPECT_DOUBLE_EQ(t.route_latency(d, (d + 1) % n), 2e-6);
    }
  }
}

TEST(Torus, OddSizesCloseTheRingOverTheWrapLinks) {
  // 27 = 3x3x3 has no even dimension: the snake ends at the far corner and
  // the closing hop takes one wrap link per dimension.
  Topology t(opts(Platform::Torus3D, 27));
  std::vector<Hop> hops;
  t.route(26, 0, hops);
  EXPECT_EQ(hops.size(), 3u);
}

TEST(Torus, DimensionOrderRoutingTakesTheShortWay) {
  auto o = opts(Platform::Torus2D, 64);
  o.torus_dims = {8, 8};
  Topology t(o);
  // Device 0 is chip (0,0); device 9 is in the second row, snaking back: (6,1).
  EXPECT_EQ(t.torus_coords(9), (std::vector<int>{6, 1}));
  std::vector<Hop> hops;
  t.route(0, 9, hops);
  EXPECT_EQ(hops.size(), 3u);  // x: 0 -> 6 is two steps back over the wrap; y: one
}

TEST(Torus, AutoDimensions) {
  EXPECT_EQ(auto_torus_dims(16, 2), (std::vector<int>{4, 4}));
  EXPECT_EQ(auto_torus_dims(64, 3), (std::vector<int>{4, 4, 4}));
  EXPECT_EQ(auto_torus_dims(24, 2), (std::vector<int>{4, 6}));
  EXPECT_EQ(auto_torus_dims(12, 3), (std::vector<int>{2, 3, 2}));  // even dimension last
  EXPECT_EQ(auto_torus_dims(7, 2), (std::vector<int>{1, 7}));
}

TEST(Torus, ParseDimensions) {
  EXPECT_EQ(split_torus_dims("8x4x2"), (std::vector<int>{8, 4, 2}));
  EXPECT_NO_THROW(check_torus_dims({8, 4, 2}, 3, 64));
  EXPECT_THROW(check_torus_dims(split_torus_dims("8x4"), 3, 32), InputError);
  EXPECT_THROW(check_torus_dims(split_torus_dims("8x4"), 2, 64), InputError);
  EXPECT_THROW(split_torus_dims("8xx4"), InputError);
  EXPECT_THROW(split_torus_dims("0x4"), InputError);
}

TEST(Links, NamesAreUniqueAndFindable) {
  for (auto p :
       {Platform::Flat, Platform::Nodes, Platform::FatTree, Platform::Torus2D, Platform::Torus3D}) {
    Topology t(opts(p, 256));
    std::set<std::string> seen;
    for (const auto& l : t.links()) EXPECT_TRUE(seen.insert(l.name).second) << l.name;
    if (!t.links().empty()) {
      EXPECT_EQ(t.find_link(t.links().back().name), static_cast<int>(t.links().size() - 1));
    }
    EXPECT_EQ(t.find_link("no-such-link"), -1);
  }
}

}  // namespace
}  // namespace ringsim::sim

namespace ringsim::sim {
namespace {

TEST(TpGroups, EachGpuHasItsOwnPortAndTheCpRingIsUnchanged) {
  // 4 CP ranks on nodes of 2 (group hardware of 8-GPU nodes at TP 4), each a
  // TP group of 4: hosts 0..3 are the devices (GPU 0 of each group), then
  // device d's GPUs 1..3 are hosts 4 + 3d .. 6 + 3d.
  auto o = opts(Platform::Nodes, 4);
  o.gpus_per_node = 2;
  o.tp = 4;
  o.tp_bw = 450e9;
  o.tp_lat = 2e-6;
  Topology t(o);
  EXPECT_EQ(t.hosts(), 16);
  EXPECT_EQ(t.tp_host(0, 0), 0);
  EXPECT_EQ(t.tp_host(1, 1), 7);
  EXPECT_EQ(t.tp_host(3, 3), 15);
  // Inside a group: the sender's port up, the receiver's port down; a ring
  // round costs the TP link's latency (half on each port).
  EXPECT_EQ(names(t, 1, 7), (std::vector<std::string>{"tp1.0+", "tp1.1-"}));
  EXPECT_EQ(names(t, 9, 1), (std::vector<std::string>{"tp1.3+", "tp1.0-"}));
  EXPECT_DOUBLE_EQ(t.route_latency(7, 8), 2e-6);
  // The CP ring between devices keeps the platform's links.
  EXPECT_EQ(names(t, 0, 1), (std::vector<std::string>{"nvl0+", "nvl1-"}));
  EXPECT_EQ(names(t, 1, 2).front(), "nic1+");
  EXPECT_EQ(names(t, 1, 2).back(), "nic2-");
  EXPECT_NE(t.describe().find("TP group of 4 GPUs"), std::string::npos);
}

}  // namespace
}  // namespace ringsim::sim
