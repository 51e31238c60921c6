// Pipeline schedules (models/plan/schedule.hpp): each one's bubble worked by
// hand from the papers' formulas at F = B_input = W (where Qi et al.'s and
// DeepSeek-V3's tables give 1/3 of 1F1B for ZB-H1 and zero for ZB-V), the
// activations and parameters a device holds, the rules, and the search and
// --explain through the command line.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "models/core/profile.hpp"
#include "models/plan/plan.hpp"
#include "models/plan/schedule.hpp"

namespace ringsim {
namespace {

using plan_testing::hardware;
using plan_testing::request;
using plan_testing::run_cli;
using S = PipelineSchedule;

// F = 1, B = 2 (input 1 + weight 1), W = 1: the papers' F = B = W.
const StageTimes kEqual{1, 2, 1};

TEST(PlanSchedules, BubblesByHand) {
  // In units of F + B = 3; p = 4.
  EXPECT_DOUBLE_EQ(schedule_bubble_slots(S::OneFOneB, 4, 1, kEqual), 3);  // p-1
  EXPECT_DOUBLE_EQ(schedule_bubble_slots(S::Interleaved, 4, 2, kEqual), 1.5);
  // ZB-H1: (p-1)(F+B-2W) = 3 x 1 = 3 time units = 1 slot: 1/3 of 1F1B's.
  EXPECT_DOUBLE_EQ(schedule_bubble_slots(S::ZbH1, 4, 1, kEqual), 1);
  // ZB-V: (p-1)(F+B-3W) = 0.
  EXPECT_DOUBLE_EQ(schedule_bubble_slots(S::ZbV, 4, 1, kEqual), 0);
  // DualPipe, p 8: (p/2-1)(F&B+B-3W) = 3 x (3 + 2 - 3) = 6 units = 2 slots.
  EXPECT_DOUBLE_EQ(schedule_bubble_slots(S::DualPipe, 8, 1, kEqual), 2);
  EXPECT_DOUBLE_EQ(schedule_bubble_slots(S::OneFOneB, 8, 1, kEqual), 7);
  // No weights to hold back (W = 0): ZB-H1 is 1F1B.
  const StageTimes no_w{1, 2, 0};
  EXPECT_DOUBLE_EQ(schedule_bubble_slots(S::ZbH1, 4, 1, no_w), 3);
  // Floored at zero: W above (F+B)/3, or dualpipe's p 2.
  EXPECT_DOUBLE_EQ(schedule_bubble_slots(S::ZbV, 4, 1, {1, 2, 1.5}), 0);
  EXPECT_DOUBLE_EQ(schedule_bubble_slots(S::DualPipe, 2, 1, kEqual), 0);
}

TEST(PlanSchedules, ActivationsAndParametersByHand) {
  // ZB-H1 holds 1F1B's p - i; ZB-V p on every device; DualPipe p + 1.
  EXPECT_DOUBLE_EQ(schedule_in_flight(S::ZbH1, 4, 1, 8, 1), 3);
  EXPECT_DOUBLE_EQ(schedule_in_flight(S::ZbV, 4, 1, 8, 3), 4);
  EXPECT_DOUBLE_EQ(schedule_in_flight(S::DualPipe, 4, 1, 8, 2), 5);
  EXPECT_DOUBLE_EQ(schedule_in_flight(S::DualPipe, 4, 1, 2, 2), 2);  // at most m
  const auto s = plan_testing::tiny_shape();
  const std::vector<int> layers{1, 1, 1, 1};
  const double lp = static_cast<double>(layer_params(s));
  const double emb = static_cast<double>(embedding_params(s));
  // DualPipe device 1 holds stages 1 and 2; device 0 stages 0 and 3 (both edges).
  EXPECT_DOUBLE_EQ(device_params(s, S::DualPipe, layers, 1), 2 * lp);
  EXPECT_DOUBLE_EQ(device_params(s, S::DualPipe, layers, 0), 2 * lp + 2 * emb + s.d_model);
  // ZB-V: the V starts and ends on device 0: embedding and head both there.
  EXPECT_DOUBLE_EQ(device_params(s, S::ZbV, layers, 0), lp + 2 * emb + s.d_model);
  EXPECT_DOUBLE_EQ(device_params(s, S::ZbV, layers, 3), lp);
  EXPECT_DOUBLE_EQ(head_share(S::ZbV, 4, 0), 1);
  EXPECT_DOUBLE_EQ(head_share(S::DualPipe, 4, 3), 0.5);
  EXPECT_DOUBLE_EQ(device_layers(S::DualPipe, {3, 5, 5, 7}, 0), 5);
  EXPECT_NE(schedule_rule(S::DualPipe, 3, 4), "");  // odd p
  EXPECT_NE(schedule_rule(S::DualPipe, 4, 2), "");  // m < p
  EXPECT_EQ(schedule_rule(S::DualPipe, 4, 4), "");
}

// One config under each schedule: the bubble is its formula's slots of the
// slowest stage's microbatch, one W behind ZB-H1 and ZB-V, and ZB-V sends
// each message twice.
TEST(PlanSchedules, StepTimesShareOneWeightGradient) {
  const auto hw = hardware("h100-sxm");
  auto r = request(find_model("--model", "llama3-8b"), 8192, 64);
  r.microbatches = 8;
  const RooflineModel roofline(hw.effective_flops());
  const auto cm = bare_implementation(roofline);
  std::map<S, PlanConfig> c;
  for (auto s : {S::OneFOneB, S::ZbH1, S::ZbV, S::DualPipe}) {
    c[s] = evaluate(r, hw, cm, Layout::Ring, 1, 4, 1, std::nullopt, false, {4, 1, s});
    ASSERT_TRUE(c[s].feasible) << to_string(s) << ": " << c[s].reason();
    const auto& t = c[s].time;
    EXPECT_NEAR(t.pp_bubble_s, t.pp_bubble_slots * t.micro_step_s, 1e-12);
  }
  EXPECT_DOUBLE_EQ(c[S::OneFOneB].time.pp_bubble_slots, 3);
  const double h1 = c[S::ZbH1].time.pp_bubble_slots, v = c[S::ZbV].time.pp_bubble_slots;
  ASSERT_GT(v, 0);
  // 3 (1 - 2w) and 3 (1 - 3w): the same w.
  EXPECT_NEAR((1 - h1 / 3) / 2, (1 - v / 3) / 3, 1e-12);
  EXPECT_LT(c[S::DualPipe].time.step_time_s, c[S::OneFOneB].time.step_time_s);
  const auto& z = c[S::ZbV].time;
  EXPECT_NEAR(z.pp_p2p_s, (8 + v) * 4 * z.pp_message_s, 1e-12);
  // DualPipe holds two stages' parameters; ZB-V's memory is 1F1B's or less.
  EXPECT_GT(c[S::DualPipe].memory.total, c[S::OneFOneB].memory.total);
}

TEST(PlanSchedules, SearchOnlyWhatTheFrameworkShipsAndExplainTheChoice) {
  const std::vector<std::string> base{
      "plan", "--model",        "llama3-8b", "--context",
      "8K",   "--gpus",         "32",        "--tp",
      "4",    "--cp",           "1",         "--pp",
      "4",    "--microbatches", "8",         "--global-batch-tokens",
      "128K"};
  auto with = [&](std::vector<std::string> more) {
    auto a = base;
    a.insert(a.end(), more.begin(), more.end());
    return run_cli(a);
  };
  // pytorch-fsdp ships 1f1b and zb-v: both tried, the choice explained.
  const auto fsdp = with({"--explain", "--top", "1"});
  ASSERT_EQ(fsdp.code, 0) << fsdp.err;
  EXPECT_NE(fsdp.out.find("  schedule   zb-v of 1f1b "), std::string::npos) << fsdp.out;
  // Megatron-Core ships 1F1B and interleaved only: no choice to explain.
  const auto meg = with({"--framework", "megatron", "--explain", "--top", "1"});
  ASSERT_EQ(meg.code, 0) << meg.err;
  EXPECT_EQ(meg.out.find("  schedule   "), std::string::npos) << meg.out;
  EXPECT_NE(meg.out.find("(1F1B)"), std::string::npos);
  // --framework any with dualpipe: JSON names it and its bubble.
  const auto dp = with({"--framework", "any", "--pp-schedule", "dualpipe", "--json"});
  ASSERT_EQ(dp.code, 0) << dp.err;
  const auto j = nlohmann::json::parse(dp.out);
  const auto& p = j["configs"][0]["pipeline"];
  EXPECT_EQ(p["schedule"], "dualpipe");
  EXPECT_EQ(p["bubble_formula"], "(p/2-1)(F&B+B-3W), F&B = F+B");
  EXPECT_GT(p["bubble_slots"].get<double>(), 0);
  EXPECT_LT(p["bubble_slots"].get<double>(), 3);
}

// --max-context sizes a pipeline under each schedule searched: ZB-H1 holds
// 1F1B's activations and parameters (Qi et al. sec. 2.1), so the same
// context; ZB-V holds p microbatches on every device with the embedding and
// head on device 0, DualPipe p + 1 microbatches and two stages' parameters
// (DeepSeek-V3 Table 2), so neither reaches 1F1B's; and each entry's
// context fits its own schedule's memory while one step more does not.
TEST(PlanSchedules, LongestContextIsSizedUnderEachSchedule) {
  const auto r =
      run_cli({"plan", "--model", "llama3-70b", "--gpus", "64", "--max-context", "--pp", "4",
               "--tp", "8", "--cp", "2", "--layout", "zigzag", "--framework", "any", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::map<std::string, std::int64_t> ctx;
  for (const auto& e : j["max_context"]["by_config"])
    ctx[e["pp_schedule"].get<std::string>()] = e["max_context"].get<std::int64_t>();
  ASSERT_EQ(ctx.size(), 4u) << r.out;  // 1f1b, zb-h1, zb-v, dualpipe
  EXPECT_GT(ctx["1f1b"], 0);
  EXPECT_EQ(ctx["zb-h1"], ctx["1f1b"]);
  EXPECT_LT(ctx["zb-v"], ctx["1f1b"]);
  EXPECT_LT(ctx["dualpipe"], ctx["1f1b"]);
  // Each schedule's context as the plan evaluates it: fits, and 1024 tokens
  // more (the step at cp 2) do not.
  for (const auto& entry : ctx) {
    // Named copies: clang 14 does not let a lambda capture a structured binding.
    const std::string name = entry.first;
    const std::int64_t tokens = entry.second;
    auto run_at = [&](std::int64_t context) {
      return run_cli({"plan",
                      "--model",
                      "llama3-70b",
                      "--gpus",
                      "64",
                      "--context",
                      std::to_string(context),
                      "--pp",
                      "4",
                      "--tp",
                      "8",
                      "--cp",
                      "2",
                      "--layout",
                      "zigzag",
                      "--framework",
                      "any",
                      "--pp-schedule",
                      name,
                      "--microbatches",
                      "4",
                      "--json"});
    };
    auto bytes_over_hbm = [&](std::int64_t context) {
      const auto c = nlohmann::json::parse(run_at(context).out)["configs"][0];
      return c["memory_bytes_per_device"].get<double>() - c["hbm_bytes"].get<double>();
    };
    EXPECT_LE(bytes_over_hbm(tokens), 0) << name;
    EXPECT_GT(bytes_over_hbm(tokens + 1024), 0) << name;
  }
}

// Inside one shape the search keeps the choice the ranking would: a
// schedule that surely fits over a faster one that is only tight (ZB-V, with
// p microbatches on every device, is tight at the longest context 1F1B
// reaches for Llama 3 405B on 512 GPUs).
TEST(PlanSchedules, TheSearchKeepsAFittingScheduleOverATightFasterOne) {
  const auto r =
      run_cli({"plan", "--model", "llama3-405b", "--gpus", "512", "--max-context", "--pp", "8",
               "--framework", "any", "--tp", "8", "--layout", "zigzag", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["configs"][0]["memory_verdict"], "fits") << j["configs"][0]["label"];
  bool zbv_shorter = false;
  for (const auto& e : j["max_context"]["by_config"])
    if (e["pp_schedule"] == "zb-v" && e["cp"] == j["configs"][0]["cp"])
      zbv_shorter =
          e["max_context"].get<std::int64_t>() < j["max_context"]["tokens"].get<std::int64_t>();
  EXPECT_TRUE(zbv_shorter);
}

// A mixture-of-experts model's longest context is sized under each EP
// degree: DeepSeek-V3's experts at EP 1 leave no room on 2048 GPUs, at
// EP 64 they shard and the context grows with EP.
TEST(PlanSchedules, LongestContextOfAMixtureOfExpertsModelGrowsWithEp) {
  const auto r = run_cli({"plan", "--model", "deepseek-v3", "--gpus", "2048", "--max-context",
                          "--pp", "4", "--tp", "8", "--cp", "4", "--layout", "zigzag",
                          "--framework", "any", "--pp-schedule", "1f1b", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::map<std::int64_t, std::int64_t> by_ep;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& e : j["max_context"]["by_config"])
    by_ep[e["ep"].get<std::int64_t>()] = e["max_context"].get<std::int64_t>();
  ASSERT_TRUE(by_ep.count(1) && by_ep.count(8) && by_ep.count(64)) << r.out;
  EXPECT_EQ(by_ep[1], 0);
  EXPECT_GT(by_ep[64], by_ep[8]);
  EXPECT_GT(by_ep[8], 0);
}

TEST(PlanSchedules, BadScheduleFlagsAreOneLineAndExit2) {
  const plan_testing::Refusals cases{
      {{"plan", "--gpus", "16", "--context", "128K", "--pp-schedule", "gpipe"}, "--pp-schedule:"},
      {{"plan", "--gpus", "16", "--context", "128K", "--framework", "megatron", "--pp-schedule",
        "dualpipe"},
       "--pp-schedule: megatron does not ship dualpipe"},
      {{"plan", "--gpus", "16", "--context", "128K", "--pp-schedule", "interleaved"},
       "--pp-schedule: interleaved"},
      {{"plan", "--gpus", "16", "--context", "128K", "--pp", "4", "--pp-virtual", "2",
        "--pp-schedule", "zb-v"},
       "--pp-virtual:"},
      {{"plan", "--gpus", "16", "--context", "128K", "--inference", "--pp-schedule", "zb-v"},
       "--pp-schedule: plans training"},
  };
  plan_testing::expect_refused_with_one_line(cases);
}

}  // namespace
}  // namespace ringsim
