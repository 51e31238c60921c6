// XLA's collectives on the TPU ICI torus (models/analytic/xla_collectives.hpp),
// worked out by hand from How to Scale Your Model's link figures and formulas,
// and the closed forms' ring step, all-gather and Ulysses passes built on them.
#include <gtest/gtest.h>

#include "models/analytic/analytic.hpp"
#include "models/analytic/xla_collectives.hpp"
#include "models/core/catalog.hpp"
#include "tests/models/helpers.hpp"

namespace ringsim {
namespace {

// A v5p-like torus: 9e10 B/s per link and direction, 1 us per hop.
Hardware torus(std::vector<int> dims, bool wrap = true) {
  Hardware hw;
  hw.flops = 459e12;
  hw.efficiency = 0.6;
  hw.platform = dims.size() == 3 ? Platform::Torus3D : Platform::Torus2D;
  hw.intra_bw = hw.inter_bw = 300e9;  // the catalog's ring figure, unused under XLA
  hw.intra_lat = hw.inter_lat = 1e-6;
  hw.intra_kind = hw.inter_kind = "ici";
  hw.ici_link_bw = 9e10;
  hw.torus_dims = std::move(dims);
  hw.torus_wraparound = wrap;
  hw.xla_collectives = true;
  return hw;
}

TEST(XlaCollectives, CatalogHasEachTpuLink) {
  const auto& c = Catalog::embedded();
  EXPECT_EQ(c.interconnect("ici-v5p").xla_link_bandwidth, 9e10);
  EXPECT_EQ(c.interconnect("ici-v4").xla_link_bandwidth, 4.5e10);
  EXPECT_EQ(c.interconnect("ici-v5e").xla_link_bandwidth, 4.5e10);
  EXPECT_EQ(c.interconnect("nvlink4").xla_link_bandwidth, 0);
}

TEST(XlaCollectives, AllGatherUsesBothDirectionsOfEveryAxis) {
  // 4x4 with wrap-around: 2 axes x 2 links in; 15 blocks of 1 MB.
  const auto x = xla_ici(torus({4, 4}), 16);
  EXPECT_NEAR(xla_all_gather_seconds(1000000, x), 15e6 / (4 * 9e10), 1e-12);
  // A mesh (no wrap-around) receives on one link per axis.
  EXPECT_NEAR(xla_all_gather_seconds(1000000, xla_ici(torus({4, 4}, false), 16)), 15e6 / (2 * 9e10),
              1e-12);
  // One axis of 16: V / W_bidi, as the book writes it, less the own block.
  EXPECT_NEAR(xla_all_gather_seconds(1000000, xla_ici(torus({16, 1}), 16)), 15e6 / 1.8e11, 1e-12);
}

TEST(XlaCollectives, TinyGatherIsLatencyBound) {
  // The book's question 3: an axis of 4 with wrap-around is 2 hops; 4x4x4 is 6.
  EXPECT_NEAR(xla_all_gather_seconds(64, xla_ici(torus({4, 4, 4}), 64)), 6e-6, 1e-15);
}

TEST(XlaCollectives, AllToAllIsAQuarterOfAnAllGatherOnARing) {
  // One axis of 16: the book's V / (4 W_bidi) with V = 16 b: 4 b / 1.8e11.
  const double b = 1.6e7;
  EXPECT_NEAR(xla_all_to_all_seconds(16000000, xla_ici(torus({16, 1}), 16)), 4 * b / 1.8e11, 1e-12);
  // 4x4: S(4) = 0+1+2+1 = 4, busiest link b x 4 / 8 = b / 2 per direction.
  EXPECT_NEAR(xla_all_to_all_seconds(16000000, xla_ici(torus({4, 4}), 16)), b / 2 / 9e10, 1e-12);
  // A 4x4 mesh: the middle cut, b x 2 x 2 / 4 = b.
  EXPECT_NEAR(xla_all_to_all_seconds(16000000, xla_ici(torus({4, 4}, false), 16)), b / 9e10, 1e-12);
}

TEST(XlaCollectives, PermuteCrossesOneLink) {
  const auto x = xla_ici(torus({4, 4}), 16);
  EXPECT_NEAR(xla_permute_seconds(33554432, x), 1e-6 + 33554432 / 9e10, 1e-15);
  EXPECT_EQ(xla_permute_seconds(0, x), 0);
}

TEST(XlaCollectives, AppliesOnlyToADescribedTorus) {
  auto hw = torus({4, 4});
  EXPECT_TRUE(xla_collectives_apply(hw));
  hw.bandwidth_override = true;  // --bandwidth/--latency: the user's flat links
  EXPECT_FALSE(xla_collectives_apply(hw));
  hw = torus({4, 4});
  hw.ici_link_bw = 0;
  EXPECT_FALSE(xla_collectives_apply(hw));
  hw = torus({4, 4});
  hw.platform = Platform::Nodes;
  EXPECT_FALSE(xla_collectives_apply(hw));
}

// Llama 2 7B's K/V block at 2K tokens per chip: 2048 x 32 heads x 128 x 2 B.
Workload llama2_7b(Layout l, Pass p) {
  auto w = testing::make_workload(16, 2048, l, true, p);
  w.shape.heads = w.shape.kv_heads = 32;
  return w;
}

TEST(XlaCollectives, ClosedFormsChargeThem) {
  const auto hw = torus({4, 4});
  const std::uint64_t kv = 2048ull * 32 * 128 * 2;  // one of K or V, bf16
  // Ring step: K and V over one link, plus the hop (the snake closes beside its start).
  auto s = analyze(llama2_7b(Layout::Ring, Pass::Fwd), hw);
  EXPECT_NEAR(s.comm_s_per_step, 1e-6 + 2.0 * kv / 9e10, 1e-12);
  // All-gather forward: 15 K/V blocks in over 4 links.
  s = analyze(llama2_7b(Layout::Allgather, Pass::Fwd), hw);
  EXPECT_NEAR(s.collective_s, 15.0 * 2 * kv / (4 * 9e10), 1e-12);
  // Ulysses forward: Q, K, V (3 blocks) in and O out, each b / 2 on the busiest link.
  s = analyze(llama2_7b(Layout::Ulysses, Pass::Fwd), hw);
  EXPECT_NEAR(s.collective_s, (3.0 * kv / 2 + kv / 2.0) / 9e10, 1e-12);
}

}  // namespace
}  // namespace ringsim
