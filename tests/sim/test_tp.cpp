// Tensor parallelism in the SimGrid model: each CP rank's TP group plays its
// ring collectives on its GPUs' own switch ports (sim/topology.hpp), and the
// time must be the closed forms' (models/analytic/tp_collectives.hpp) where
// no link is shared: 1e-9 relative, as the other agreement tests.
#include <gtest/gtest.h>

#include <string>

#include "models/analytic/analytic.hpp"
#include "models/analytic/tp_collectives.hpp"
#include "tests/sim/helpers.hpp"

namespace ringsim {
namespace {

struct TpCase {
  std::string name;
  Workload w;
  Hardware hw;
};

Workload tp_workload(std::int64_t n, int tp, bool sp, Pass p, int layers, Layout l = Layout::Ring) {
  auto w = testing::llama3(n, 4096, l, true, p);
  w.scope = Scope::Layer;
  w.layers = layers;
  w.tp = tp;
  w.sequence_parallel = sp;
  return w;
}

std::vector<TpCase> tp_cases() {
  const auto nodes = testing::catalog_hw("h100-sxm", Platform::Nodes);
  const auto flat = testing::flat_hw(989e12 * 0.67, 5e10, 3e-6);
  return {
      {"nodes_tp2_sp_fwd", tp_workload(8, 2, true, Pass::Fwd, 1), nodes},
      {"nodes_tp4_allreduce_fwdbwd", tp_workload(8, 4, false, Pass::FwdBwd, 2), nodes},
      {"nodes_tp4_sp_fwdbwd_zigzag", tp_workload(8, 4, true, Pass::FwdBwd, 1, Layout::Zigzag),
       nodes},
      {"nodes_tp8_sp_bwd", tp_workload(4, 8, true, Pass::Bwd, 1), nodes},
      {"flat_tp2_sp_fwdbwd", tp_workload(8, 2, true, Pass::FwdBwd, 2), flat},
  };
}

void PrintTo(const TpCase& c, std::ostream* os) {
  *os << c.name;
}

class TpAgreement : public ::testing::TestWithParam<TpCase> {};

TEST_P(TpAgreement, SimulatedTpCollectivesEqualClosedForm) {
  const auto& k = GetParam();
  testing::SimRun run;
  run.options = testing::sim_options(k.w, k.hw);
  RINGSIM_SIMULATE(run);
  const auto a = analyze(k.w, k.hw, *run.compute);
  ASSERT_GT(a.tp_comm_s, 0.0);
  EXPECT_NEAR(run.result.tp_comm_s / a.tp_comm_s, 1.0, 1e-9)
      << "simulated " << run.result.tp_comm_s << " s, analytic " << a.tp_comm_s << " s";
  EXPECT_NEAR(run.result.time_s / a.time_s, 1.0, 1e-9)
      << "simulated " << run.result.time_s << " s, analytic " << a.time_s << " s";
  EXPECT_NEAR(run.result.compute_only_s / a.compute_only_s, 1.0, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(NoSharedLink, TpAgreement, ::testing::ValuesIn(tp_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(TpHandCase, FourRoundsOfAQuarterOnNvlink) {
  // 8 CP ranks x TP 4 on flat links of 5e10 B/s and 3 us, one layer forward:
  // 4096 tokens x 4096 (llama3-8b d_model) x 2 B = 33,554,432 B; a quarter,
  // 8,388,608 B, per round: 167.77216 + 3 = 170.77216 us; 3 rounds per ring
  // collective, 4 collectives: 12 x 170.77216 us = 2049.26592 us, plus NCCL's
  // base latency per call (8.4 us) x 4 = 2082.86592 us.
  const auto hw = testing::flat_hw(989e12 * 0.67, 5e10, 3e-6);
  const auto w = tp_workload(8, 4, true, Pass::Fwd, 1);
  testing::SimRun run;
  run.options = testing::sim_options(w, hw);
  RINGSIM_SIMULATE(run);
  EXPECT_NEAR(run.result.tp_comm_s, 12 * (8388608.0 / 5e10 + 3e-6) + 4 * 8.4e-6, 1e-12);
  EXPECT_NEAR(run.result.tp_comm_s, 2082.86592e-6, 1e-12);
  // 8 devices x 3 other GPUs, each 12 rounds, beside the devices' own.
  EXPECT_GE(run.result.activities, 8u * 4 * 12);
}

TEST(TpHandCase, AttentionScopeSplitsHeadsWithoutCollectives) {
  // --scope attention with --tp 4: one GPU's 8 of llama3-8b's 32 heads on the
  // ring of groups, no TP collective: the plain CP run of that share.
  const auto hw = testing::catalog_hw("h100-sxm", Platform::Nodes);
  auto w = tp_workload(8, 4, true, Pass::Fwd, 1);
  w.scope = Scope::Attention;
  testing::SimRun run;
  run.options = testing::sim_options(w, hw);
  RINGSIM_SIMULATE(run);
  const auto a = analyze(tp_rank_workload(w), group_hardware(hw, 4), *run.compute);
  EXPECT_DOUBLE_EQ(run.result.tp_comm_s, 0.0);
  EXPECT_NEAR(run.result.time_s / a.time_s, 1.0, 1e-9);
}

}  // namespace
}  // namespace ringsim
