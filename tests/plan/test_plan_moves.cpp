// Assumptions a user can move (docs/models.md, "Moving an assumption"):
// `plan --explain` and `--json` list each with its value, source and the
// --set key (or flag) that moves it; moving one changes the answer the way
// the mechanism says; a bad key is one line naming --set KEY and exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "helpers.hpp"

namespace ringsim {
namespace {

using plan_testing::run_cli;

std::vector<std::string> plan_args(std::vector<std::string> extra) {
  std::vector<std::string> a{"plan",   "--model",  "llama3-8b",   "--context", "128K",
                             "--gpus", "64",       "--framework", "megatron",  "--cp",
                             "4",      "--layout", "allgather",   "--json"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

nlohmann::json plan_json(std::vector<std::string> extra) {
  const auto r = run_cli(plan_args(std::move(extra)));
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

double best_step(const nlohmann::json& j) {
  for (const auto& c : j.at("configs"))
    if (c.at("feasible").get<bool>()) return c.at("step_time_s").get<double>();
  ADD_FAILURE() << "no feasible config";
  return 0;
}

TEST(PlanMoves, JsonListsEachAssumptionWithItsKeyAndSource) {
  const auto j = plan_json({});
  std::set<std::string> keys;
  for (const auto& a : j.at("assumptions")) {
    keys.insert(a.at("set").get<std::string>());
    EXPECT_FALSE(a.at("source").get<std::string>().empty()) << a.dump();
    EXPECT_FALSE(a.at("value").get<std::string>().empty()) << a.dump();
  }
  // The list: kernel rate, merge cost, hop latency, link bandwidth,
  // framework overheads and layouts (and the GEMM rate, the calibration).
  for (const char* k : {"devices.h100-sxm.gemm_efficiency", "kernels.cudnn.rate_scale",
                        "kernels.cudnn.ops.merge-out.bytes", "interconnects.nvlink4.latency",
                        "interconnects.ib-ndr.p2p_efficiency", "frameworks.megatron.gap_s",
                        "frameworks.megatron.dispatch_s", "frameworks.megatron.layouts",
                        "frameworks.megatron.calibration"})
    EXPECT_TRUE(keys.count(k)) << k;
}

TEST(PlanMoves, ExplainPrintsTheKeyBesideEachValue) {
  auto a = plan_args({"--explain"});
  a.erase(std::find(a.begin(), a.end(), "--json"));
  const auto r = run_cli(a);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s :
       {"Assumptions (each moved by --set KEY=VALUE", "--set devices.h100-sxm.gemm_efficiency",
        "--set interconnects.nvlink4.latency | --latency",
        "--set frameworks.megatron.calibration | --calibration none"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

TEST(PlanMoves, EachMoveChangesTheStepAsItsMechanismSays) {
  const double base = best_step(plan_json({}));
  // Slower GEMMs and a slower attention kernel: a longer step.
  EXPECT_GT(best_step(plan_json({"--set", "devices.h100-sxm.gemm_efficiency=0.4"})), base * 1.05);
  EXPECT_GT(best_step(plan_json({"--set", "kernels.cudnn.rate_scale=0.5"})), base * 1.1);
  // More host cost per kernel cannot shorten it.
  EXPECT_GE(best_step(plan_json({"--set", "frameworks.megatron.gap_s=1e-4"})), base);
  // Calibration 1 is first principles: the same step as --calibration none.
  EXPECT_DOUBLE_EQ(best_step(plan_json({"--set", "frameworks.megatron.calibration=1"})),
                   best_step(plan_json({"--calibration", "none"})));
}

TEST(PlanMoves, TheSettledClockSharesAreAssumptionsThatMoveTheStep) {
  // The catalog's gemm_sustained (a saturated device at its settled clock):
  // each share is an assumption row with its key and value, and moving it
  // moves the step the way its mechanism says.
  std::map<std::string, std::string> rows;
  const auto bf16 = plan_json({});  // held: a temporary's rows would not outlive the loop
  for (const auto& a : bf16.at("assumptions"))
    rows[a.at("set").get<std::string>()] = a.at("value").get<std::string>();
  EXPECT_EQ(rows["devices.h100-sxm.gemm_sustained.bf16"], "0.892 of the best shape's");
  EXPECT_EQ(rows["devices.h100-sxm.gemm_sustained.burst"], "0.842 of its curve");
  EXPECT_EQ(rows.count("devices.h100-sxm.gemm_sustained.fp8"), 0u);  // bf16 run
  rows.clear();
  const auto fp8 = plan_json({"--precision", "fp8"});
  for (const auto& a : fp8.at("assumptions"))
    rows[a.at("set").get<std::string>()] = a.at("value").get<std::string>();
  EXPECT_EQ(rows["devices.h100-sxm.gemm_sustained.fp8"], "0.918 of the best shape's");
  // At 1 (a burst's rate held) each step is shorter; attention is most of a
  // 128K step, so its share moves it the most.
  const double base = best_step(plan_json({}));
  const double gemm = best_step(plan_json({"--set", "devices.h100-sxm.gemm_sustained.bf16=1"}));
  const double attn = best_step(plan_json({"--set", "devices.h100-sxm.gemm_sustained.burst=1"}));
  EXPECT_LT(gemm, base);
  EXPECT_LT(attn, base);
  EXPECT_LT(base - gemm, base - attn);
}

TEST(PlanMoves, AllocatorReserveMovesTheMemory) {
  auto memory = [](const nlohmann::json& j) {
    for (const auto& c : j.at("configs"))
      if (c.at("feasible").get<bool>()) return c.at("memory_bytes_per_device").get<double>();
    return 0.0;
  };
  const double base = memory(plan_json({}));
  // 5% is the default: 20% adds 15% of the tensors' peak (about 9 GiB here), 0 removes 5%.
  EXPECT_GT(memory(plan_json(
                {"--memory-check", "off", "--set", "frameworks.megatron.allocator_reserve=0.2"})),
            base * 1.1);
  EXPECT_LT(memory(plan_json({"--set", "frameworks.megatron.allocator_reserve=0"})), base);
}

TEST(PlanMoves, MovedValueSaysSoAndTheCatalogRangeIsDropped) {
  const auto j = plan_json({"--set", "interconnects.nvlink4.latency=9e-6"});
  bool seen = false;
  for (const auto& a : j.at("assumptions"))
    if (a.at("set") == "interconnects.nvlink4.latency") {
      seen = true;
      EXPECT_EQ(a.at("source"), "moved by --set");
      EXPECT_EQ(a.at("value"), "9.000 us");
    }
  EXPECT_TRUE(seen);
}

TEST(PlanMoves, LayoutsMoveWhatTheFrameworkRanks) {
  auto a = plan_args({"--set", "frameworks.megatron.layouts=ring"});
  a.erase(std::find(a.begin(), a.end(), "--layout"), std::find(a.begin(), a.end(), "--json"));
  const auto r = run_cli(a);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("framework_layouts"), nlohmann::json::array({"ring"}));
  for (const auto& c : j.at("configs"))
    if (c.at("cp").get<int>() > 1) EXPECT_EQ(c.at("layout"), "ring") << c.dump();
}

TEST(PlanMoves, BadKeysAreOneLineNamingTheKey) {
  for (const auto& [kv, says] : std::vector<std::pair<std::string, std::string>>{
           {"devices.h100-sxm.gemm_effciency=0.5", "did you mean 'gemm_efficiency'"},
           {"devices.h10.gemm_efficiency=0.5", "no devices entry 'h10'"},
           {"devices.h100-sxm.gemm_efficiency=fast", "expected a number"},
           {"devices.h100-sxm.gemm_efficiency=2", "must be in [0.001, 1]"},
           {"kernels.fa2.ops.merge-ot.bytes=3", "did you mean 'merge-out'"},
           {"frameworks.jax-xla.gap_s=1e-6", "the plan's framework is megatron"},
           {"frameworks.megatron.gap=1e-6", "did you mean 'gap_s'"},
           {"nonsense", "expected KEY=VALUE"}}) {
    const auto r = run_cli(plan_args({"--set", kv}));
    EXPECT_EQ(r.code, 2) << kv;
    EXPECT_NE(r.err.find("--set"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << kv << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(PlanMoves, RunRefusesAFrameworkKey) {
  const auto r = run_cli({"run", "--devices", "4", "--block", "1K", "--engine", "analytic", "--set",
                          "frameworks.megatron.gap_s=1e-6"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("apply to training plans"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ringsim
