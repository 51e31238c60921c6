// Training cost (models/plan/cost.hpp): hand-computed per step, per billion
// tokens and per run; --train-tokens without a price; the flags' bad input;
// and `ringsim plan --price-per-gpu-hour --train-tokens` through the CLI.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cli/command.hpp"
#include "helpers.hpp"
#include "models/core/errors.hpp"
#include "models/plan/cost.hpp"

namespace ringsim {
namespace {

// A feasible config with a 10 s step of 1,000,000 tokens.
PlanConfig ten_second_step() {
  PlanConfig c;
  c.feasible = true;
  c.evaluated = true;
  c.cp = 8;
  c.layout = Layout::Zigzag;
  c.time.step_time_s = 10;
  c.tokens_per_step = 1e6;
  return c;
}

TEST(PlanCost, HandComputedPerStepPerBillionAndRun) {
  CostRequest q;
  q.price_per_gpu_hour = 2;
  q.train_tokens = std::int64_t{15} << 40;  // 15T = 15 x 2^40 = 16,492,674,416,640 tokens
  const auto k = plan_cost(ten_second_step(), 1024, q);
  // 1024 GPUs x 10 s / 3600 = 2.8444 GPU-hours per step; x $2 = $5.6889.
  EXPECT_DOUBLE_EQ(k.gpu_hours_per_step, 1024.0 * 10 / 3600);
  EXPECT_DOUBLE_EQ(k.per_step, 1024.0 * 2 * 10 / 3600);
  EXPECT_NEAR(k.per_step, 5.688889, 1e-6);
  // 1e9 tokens = 1000 steps of 1e6 tokens: 1000 x $5.6889 = $5,688.89.
  EXPECT_NEAR(k.per_billion_tokens, 1000 * 1024.0 * 2 * 10 / 3600, 1e-9);
  // Steps = ceil(16,492,674,416,640 / 1e6) = ceil(16,492,674.41664) = 16,492,675.
  EXPECT_EQ(k.run_steps, 16492675);
  // Hours = 16,492,675 x 10 / 3600 = 45,812.986 h (1,908.9 days); GPU-hours x 1024; cost x $2.
  EXPECT_NEAR(k.run_hours, 16492675.0 * 10 / 3600, 1e-6);
  EXPECT_NEAR(k.run_hours, 45812.986, 1e-3);
  EXPECT_NEAR(k.run_gpu_hours, 16492675.0 * 10 / 3600 * 1024, 1e-3);
  EXPECT_NEAR(k.run_cost, 16492675.0 * 10 / 3600 * 1024 * 2, 1e-2);
  EXPECT_NEAR(k.run_cost, 93824995.56, 0.01);
}

TEST(PlanCost, ExactMultipleNeedsNoExtraStepAndOneTokenNeedsOne) {
  CostRequest q;
  q.train_tokens = 15000000000000;  // 15e12 / 1e6 = exactly 15,000,000 steps
  EXPECT_EQ(plan_cost(ten_second_step(), 1024, q).run_steps, 15000000);
  q.train_tokens = 15000000000001;
  EXPECT_EQ(plan_cost(ten_second_step(), 1024, q).run_steps, 15000001);
  q.train_tokens = 1;
  EXPECT_EQ(plan_cost(ten_second_step(), 1024, q).run_steps, 1);
}

TEST(PlanCost, JsonKeysFollowTheFlagsGiven) {
  const auto c = ten_second_step();
  CostRequest tokens_only;
  tokens_only.train_tokens = std::int64_t{1} << 40;
  const auto a = cost_json(plan_cost(c, 64, tokens_only));
  for (const char* k : {"train_tokens", "run_steps", "run_hours", "run_gpu_hours"})
    EXPECT_TRUE(a.contains(k)) << k;
  for (const char* k : {"price_per_gpu_hour", "per_step", "per_billion_tokens", "run_cost"})
    EXPECT_FALSE(a.contains(k)) << k;
  // 2^40 / 1e6 = 1,099,511.6 -> 1,099,512 steps x 10 s x 64 GPUs / 3600.
  EXPECT_EQ(a["run_steps"], 1099512);
  EXPECT_NEAR(a["run_gpu_hours"].get<double>(), 1099512.0 * 10 * 64 / 3600, 1e-6);

  CostRequest price_only;
  price_only.price_per_gpu_hour = 2.5;
  const auto b = cost_json(plan_cost(c, 64, price_only));
  for (const char* k : {"price_per_gpu_hour", "per_step", "per_billion_tokens"})
    EXPECT_TRUE(b.contains(k)) << k;
  for (const char* k : {"train_tokens", "run_steps", "run_hours", "run_gpu_hours", "run_cost"})
    EXPECT_FALSE(b.contains(k)) << k;
  EXPECT_DOUBLE_EQ(b["per_step"].get<double>(), 64 * 10 * 2.5 / 3600);

  CostRequest both = tokens_only;
  both.price_per_gpu_hour = 2.5;
  const auto d = cost_json(plan_cost(c, 64, both));
  EXPECT_NEAR(d["run_cost"].get<double>(), 1099512.0 * 10 * 64 / 3600 * 2.5, 1e-6);
}

TEST(PlanCost, InfeasibleConfigHasNoCost) {
  PlanConfig c;
  CostRequest q;
  q.price_per_gpu_hour = 1;
  EXPECT_THROW(plan_cost(c, 8, q), std::logic_error);
}

TEST(PlanCost, FlagsParseAndRefuse) {
  EXPECT_DOUBLE_EQ(parse_price_per_gpu_hour("--price-per-gpu-hour", "2.5"), 2.5);
  for (const char* bad : {"0", "-1", "0.0", "abc", "nan", "inf", "1e7", ""}) {
    try {
      parse_price_per_gpu_hour("--price-per-gpu-hour", bad);
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--price-per-gpu-hour: ", 0), 0u) << e.what();
    }
  }
  // Decimal SI, as training runs are quoted (not --context's binary K/M/G/T):
  // 15T = 15e12, 1G = 1B = 1e9, 1.5T = 1.5e12 exactly.
  EXPECT_EQ(parse_train_tokens("--train-tokens", "15T"), 15000000000000);
  EXPECT_EQ(parse_train_tokens("--train-tokens", "1G"), 1000000000);
  EXPECT_EQ(parse_train_tokens("--train-tokens", "300B"), 300000000000);
  EXPECT_EQ(parse_train_tokens("--train-tokens", "1.5T"), 1500000000000);
  EXPECT_EQ(parse_train_tokens("--train-tokens", "2.5K"), 2500);
  EXPECT_EQ(parse_train_tokens("--train-tokens", "15000000000000"), 15000000000000);
  // 0, signs, exponents, fractions of a token; 2000T > 1000T.
  for (const char* bad :
       {"0", "-5", "1e12", "2000T", "T", ".", "15X", "1.5", "1.0005K", "1..5T", "1.5.T"})
    EXPECT_THROW(parse_train_tokens("--train-tokens", bad), InputError) << bad;
}

// ---- through the CLI (in this process, as tests/plan/test_plan_cli.cpp) ----

using plan_testing::run_cli;

const std::vector<std::string> kPlan{"plan",   "--model", "llama3-8b", "--context", "128K",
                                     "--gpus", "64",      "--gpu",     "h100-sxm"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

TEST(PlanCostCli, JsonCostOnEveryFeasibleConfigMatchesItsStep) {
  const auto r =
      run_cli(with(kPlan, {"--price-per-gpu-hour", "2.5", "--train-tokens", "1T", "--json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  int costed = 0;
  for (const auto& c : j.at("configs")) {
    if (!c.at("feasible").get<bool>()) {
      EXPECT_FALSE(c.contains("cost"));
      continue;
    }
    ++costed;
    const auto& k = c.at("cost");
    const double step = c.at("step_time_s"), tokens = c.at("tokens_per_step");
    // per step = 64 GPUs x step / 3600 x $2.5; per 1e9 tokens = per step x 1e9 / tokens.
    EXPECT_NEAR(k.at("per_step").get<double>(), 64 * step / 3600 * 2.5, 1e-9);
    EXPECT_NEAR(k.at("per_billion_tokens").get<double>(), 64 * step / 3600 * 2.5 * 1e9 / tokens,
                1e-6);
    // 1T = 1e12 tokens (decimal, as runs are quoted) in whole steps.
    const auto steps = static_cast<std::int64_t>(std::ceil(1e12 / tokens));
    EXPECT_EQ(k.at("train_tokens"), std::int64_t{1000000000000});
    EXPECT_EQ(k.at("run_steps").get<std::int64_t>(), steps);
    EXPECT_NEAR(k.at("run_hours").get<double>(), steps * step / 3600, 1e-6);
    EXPECT_NEAR(k.at("run_gpu_hours").get<double>(), steps * step / 3600 * 64, 1e-4);
    EXPECT_NEAR(k.at("run_cost").get<double>(), steps * step / 3600 * 64 * 2.5, 1e-3);
    EXPECT_EQ(k.at("price_per_gpu_hour"), 2.5);
  }
  EXPECT_GT(costed, 0);
}

TEST(PlanCostCli, TrainTokensAloneGivesStepsHoursAndGpuHours) {
  const auto r = run_cli(with(kPlan, {"--train-tokens", "1T", "--json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& k = j.at("configs").at(0).at("cost");
  EXPECT_TRUE(k.contains("run_steps"));
  EXPECT_TRUE(k.contains("run_gpu_hours"));
  EXPECT_FALSE(k.contains("per_step"));
  EXPECT_FALSE(k.contains("run_cost"));
  const auto t = run_cli(with(kPlan, {"--train-tokens", "1T"}));
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("run of 1,000,000,000,000 tokens"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("per billion tokens"), std::string::npos) << t.out;
}

TEST(PlanCostCli, TextBlockAfterTheTableOrInExplain) {
  const auto r = run_cli(with(kPlan, {"--price-per-gpu-hour", "2.5", "--train-tokens", "1T"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto cost = r.out.find("\ncost of ");
  ASSERT_NE(cost, std::string::npos) << r.out;
  EXPECT_GT(cost, r.out.find("rank  config"));
  EXPECT_NE(r.out.find("per billion tokens"), std::string::npos);
  const auto e =
      run_cli(with(kPlan, {"--price-per-gpu-hour", "2.5", "--train-tokens", "1T", "--explain"}));
  ASSERT_EQ(e.code, 0) << e.err;
  const auto at = e.out.find("\ncost of ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_GT(at, e.out.find("explain: ")) << "inside --explain, once";
  EXPECT_EQ(e.out.find("\ncost of ", at + 1), std::string::npos);
}

TEST(PlanCostCli, BadInputIsOneLineExitTwo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--price-per-gpu-hour", "0"}, "--price-per-gpu-hour: expected a positive number"},
      {{"--price-per-gpu-hour=-2"}, "--price-per-gpu-hour: expected a positive number"},
      {{"--train-tokens", "0"}, "--train-tokens: expected a whole number"},
      {{"--train-tokens", "1.5"}, "--train-tokens: expected a whole number"},
      {{"--inference", "--train-tokens", "1T"},
       "--train-tokens: plans training; not with --inference"}};
  for (const auto& [extra, prefix] : cases) {
    const auto r = run_cli(with(kPlan, extra));
    EXPECT_EQ(r.code, 2) << prefix;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind("ringsim: error: " + prefix, 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(PlanCostCli, InferenceKeepsItsPriceMeaning) {
  const auto r = run_cli({"plan", "--inference", "--model", "llama3-8b", "--context", "128K",
                          "--gpus", "8", "--price-per-gpu-hour", "2.5", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("price_per_gpu_hour"), 2.5);
}

}  // namespace
}  // namespace ringsim
