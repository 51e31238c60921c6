// HSDP (--dp-replicate): the state shards inside a replica group, so each
// term sharded over the data-parallel ranks doubles when the groups do; the
// gradient shards' all-reduce across the groups is one collective of the
// shard's bytes; the search tries the powers of two; bad values are refused.
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "models/analytic/collectives.hpp"
#include "models/core/profile.hpp"
#include "models/plan/plan.hpp"

namespace ringsim {
namespace {

using plan_testing::hardware;
using plan_testing::items;
using plan_testing::request;
using plan_testing::run_cli;

TEST(PlanHsdp, StateShardsInsideAReplicaGroup) {
  const auto hw = hardware("h100-sxm");
  auto r = request(find_model("--model", "llama3-8b"), 8192, 64);
  r.global_batch_tokens = 64 * 8192;
  const RooflineModel roofline(hw.effective_flops());
  const auto cm = bare_implementation(roofline);
  // tp 8, dp 8: sharded over 8, or over 4 in each of 2 groups.
  const auto one = evaluate(r, hw, cm, Layout::Ring, 1, 8, 1, std::nullopt, false, {1, 1});
  r.dp_replicate = 2;
  const auto two = evaluate(r, hw, cm, Layout::Ring, 1, 8, 1, std::nullopt, false, {1, 1});
  ASSERT_TRUE(one.feasible && two.feasible) << one.reason() << two.reason();
  EXPECT_EQ(two.label(), "no cp tp 8 hsdp 2x4");
  const auto a = items(one.memory), b = items(two.memory);
  EXPECT_DOUBLE_EQ(b.at("optimizer_m_v_fp32"), 2 * a.at("optimizer_m_v_fp32"));
  EXPECT_DOUBLE_EQ(b.at("params_fp32_shard"), 2 * a.at("params_fp32_shard"));
  // The all-reduce: every parameter's fp32 gradient / (tp x shard group), over
  // 2 ranks 4 x 8 GPUs apart (a node each: across the NIC).
  EXPECT_EQ(one.time.hsdp_s, 0);
  const double bytes = static_cast<double>(total_params(r.shape)) * 4 / (8 * 4);
  const auto g = placed_group(hw, 2, 32);
  EXPECT_EQ(g.per_node, 1);
  EXPECT_NEAR(two.time.hsdp_s, collective_time(Collective::AllReduce, bytes, g, hw).seconds, 1e-12);
  EXPECT_GT(two.time.hsdp_s, 0);
  EXPECT_LE(two.time.hsdp_exposed_s, two.time.hsdp_s);
  // A group count that does not divide dp is a row's rule, not a crash.
  r.dp_replicate = 3;
  const auto three = evaluate(r, hw, cm, Layout::Ring, 1, 8, 1, std::nullopt, false, {1, 1});
  EXPECT_FALSE(three.feasible);
  EXPECT_NE(three.reason().find("--dp-replicate 3 does not divide dp 8"), std::string::npos);
}

TEST(PlanHsdp, AutoSearchesPowersOfTwoAndBadValuesExit2) {
  const auto r = run_cli({"plan", "--model", "llama3-8b", "--context", "8K", "--gpus", "64", "--tp",
                          "8", "--cp", "1", "--pp", "1", "--dp-replicate", "auto", "--top", "10"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"hsdp 2x4", "hsdp 4x2", "hsdp 8x1"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"plan", "--gpus", "16", "--context", "8K", "--dp-replicate", "x"},
           {"plan", "--gpus", "16", "--context", "8K", "--dp-replicate", "0"},
           {"plan", "--gpus", "16", "--context", "8K", "--inference", "--dp-replicate", "2"}}) {
    const auto bad = run_cli(args);
    EXPECT_EQ(bad.code, 2) << bad.err;
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
    EXPECT_NE(bad.err.find("--dp-replicate"), std::string::npos) << bad.err;
  }
}

}  // namespace
}  // namespace ringsim
