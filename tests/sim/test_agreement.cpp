// Where no link carries two transfers at once, the simulation and the closed
// forms describe the same schedule and must give the same time. One
// simulation per case; gtest_discover_tests runs each in its own process.
//
// Tolerance: 1e-9 relative (the contract in docs/sim.md); observed ~1e-15.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "models/analytic/analytic.hpp"
#include "tests/sim/helpers.hpp"

namespace ringsim {
namespace {

struct Case {
  std::string name;
  Workload w;
  Hardware hw;
};

Workload with(Workload w, int ulysses = 0, int layers = 1, Scope scope = Scope::Attention) {
  if (ulysses) w.ulysses_degree = ulysses;
  w.layers = layers;
  w.scope = scope;
  return w;
}

std::vector<Case> cases() {
  using testing::catalog_hw;
  using testing::llama3;
  const Hardware flat = testing::flat_hw(989e12 * 0.67, 5e10, 3e-6);
  const Hardware nodes = catalog_hw("h100-sxm", Platform::Nodes);
  std::vector<Case> c;
  const std::pair<Layout, const char*> layouts[] = {{Layout::Ring, "ring"},
                                                    {Layout::Striped, "striped"},
                                                    {Layout::Zigzag, "zigzag"},
                                                    {Layout::Allgather, "allgather"}};
  const std::pair<Pass, const char*> passes[] = {
      {Pass::Fwd, "fwd"}, {Pass::Bwd, "bwd"}, {Pass::FwdBwd, "fwdbwd"}};
  for (const auto& [l, ln] : layouts)
    for (const auto& [p, pn] : passes) {
      c.push_back({std::string("flat_") + ln + "_" + pn, llama3(16, 4096, l, true, p), flat});
      c.push_back({std::string("nodes_") + ln + "_" + pn, llama3(16, 4096, l, true, p), nodes});
    }
  c.push_back({"flat_ring_noncausal", llama3(16, 2048, Layout::Ring, false), flat});
  c.push_back(
      {"nodes_ulysses_fwdbwd", llama3(8, 4096, Layout::Ulysses, true, Pass::FwdBwd), nodes});
  c.push_back({"nodes_ulysses4", llama3(4, 4096, Layout::Ulysses, false), nodes});
  c.push_back({"nodes_hybrid8_fwdbwd",
               with(llama3(32, 2048, Layout::Hybrid, true, Pass::FwdBwd), 8), nodes});
  c.push_back({"nodes_hybrid4", with(llama3(32, 2048, Layout::Hybrid, true), 4), nodes});
  c.push_back({"nodes_layer_scope_3_layers",
               with(llama3(16, 4096, Layout::Ring, true, Pass::FwdBwd), 0, 3, Scope::Layer),
               nodes});
  c.push_back({"fattree_ring", llama3(64, 2048, Layout::Ring, true),
               catalog_hw("h100-sxm", Platform::FatTree)});
  c.push_back({"torus2d_zigzag", llama3(16, 4096, Layout::Zigzag, true),
               catalog_hw("tpu-v5e", Platform::Torus2D)});
  c.push_back({"torus3d_ring_fwdbwd", llama3(64, 2048, Layout::Ring, true, Pass::FwdBwd),
               catalog_hw("tpu-v4", Platform::Torus3D)});
  return c;
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class Agreement : public ::testing::TestWithParam<Case> {};

TEST_P(Agreement, SimulatedTimeEqualsClosedForm) {
  const auto& k = GetParam();
  testing::SimRun run;
  run.options = testing::sim_options(k.w, k.hw);
  RINGSIM_SIMULATE(run);
  const auto a = analyze(k.w, k.hw, *run.compute);
  EXPECT_NEAR(run.result.time_s / a.time_s, 1.0, 1e-9)
      << "simulated " << run.result.time_s << " s, analytic " << a.time_s << " s";
  EXPECT_NEAR(run.result.compute_only_s / a.compute_only_s, 1.0, 1e-9);
  EXPECT_NEAR(run.result.compute_s_per_step / a.compute_s_per_step, 1.0, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(NoSharedLink, Agreement, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

TEST(AgreementFatTreeInter, RingOverFatTreeFabric) {
  // 128 H100 on a fat-tree (4 leaves): node-boundary hops cross leaves via
  // spines picked by destination port, so no two transfers share a cable.
  const auto hw = testing::catalog_hw("h100-sxm", Platform::Nodes);
  const auto w = testing::llama3(128, 2048, Layout::Ring, true, Pass::Bwd);
  testing::SimRun run;
  run.options = testing::sim_options(w, hw);
  run.options.topology.inter = sim::InterTopology::FatTree;
  RINGSIM_SIMULATE(run);
  const auto a = analyze(w, hw, *run.compute);
  EXPECT_NEAR(run.result.time_s / a.time_s, 1.0, 1e-9);
}

TEST(SharedLinks, UlyssesOnAFlatRingIsSlowerThanTheClosedForm) {
  // On a ring of point-to-point links the all-to-all's far transfers take
  // several hops and share links: the closed form (every device injecting at
  // full rate) is optimistic, and the simulation says by how much.
  const auto w = testing::llama3(8, 4096, Layout::Ulysses, true);
  const auto hw = testing::flat_hw(989e12 * 0.67, 1e11, 1e-6);
  testing::SimRun run;
  run.options = testing::sim_options(w, hw);
  RINGSIM_SIMULATE(run);
  const auto a = analyze(w, hw, *run.compute);
  EXPECT_GT(run.result.collective_s, 1.5 * a.collective_s);
  EXPECT_GT(run.result.time_s, a.time_s);
}

}  // namespace
}  // namespace ringsim
