// Search and step time: ranking, agreement with analyze(), monotonic
// properties (faster links never slow a step), the longest context.
#include <gtest/gtest.h>

#include <cmath>

#include "helpers.hpp"
#include "models/analytic/analytic.hpp"
#include "models/core/errors.hpp"
#include "models/core/profile.hpp"
#include "models/kernel/implementation.hpp"
#include "models/plan/execution.hpp"

namespace ringsim {
namespace {

using plan_testing::hardware;
using plan_testing::request;

PlanRequest llama8b_1m() {
  return request(find_model("--model", "llama3-8b"), 1 << 20, 32);
}

TEST(PlanSearch, Llama3_8BAt1MOn32H100HasFeasibleConfigsRankedBestFirst) {
  const auto hw = hardware("h100-sxm");
  RooflineModel cm(hw.effective_flops());
  const auto cs = search(llama8b_1m(), hw, cm);
  ASSERT_FALSE(cs.empty());
  ASSERT_TRUE(cs.front().feasible) << cs.front().reason();
  bool seen_infeasible = false;
  for (size_t i = 0; i < cs.size(); ++i) {
    const auto& c = cs[i];
    if (!c.feasible) {
      seen_infeasible = true;
      EXPECT_FALSE(c.reason().empty()) << c.label();
      continue;
    }
    EXPECT_FALSE(seen_infeasible) << "feasible configs come first";
    // Fits, or tight: over the reported HBM by less than the memory model's band.
    EXPECT_LE(c.memory.total * (1 - PlanConstants::kMemoryBand), hw.hbm_bytes) << c.label();
    if (c.memory.total > hw.hbm_bytes) EXPECT_EQ(c.memory_verdict, "tight") << c.label();
    EXPECT_GT(c.time.step_time_s, 0);
    EXPECT_GT(c.mfu, 0);
    EXPECT_LT(c.mfu, 1);
    EXPECT_EQ(c.cp * c.tp * c.dp, 32);
    EXPECT_EQ(c.block * c.cp, 1 << 20);
    if (i > 0 && cs[i - 1].feasible) {
      EXPECT_GE(cs[i - 1].tokens_per_s_per_gpu, c.tokens_per_s_per_gpu);
    }
  }
  EXPECT_TRUE(seen_infeasible);
}

TEST(PlanSearch, BestConfigsAttentionTimeEqualsAnalyze) {
  const auto hw = hardware("h100-sxm");
  RooflineModel cm(hw.effective_flops());
  for (auto r : {llama8b_1m(), request(find_model("--model", "llama3-70b"), 128 * 1024, 64)}) {
    r.tp_degrees = {1, 2};
    const auto cs = search(r, hw, cm);
    ASSERT_TRUE(cs.front().feasible);
    const auto& best = cs.front();
    ASSERT_EQ(best.micro_batch * best.grad_accum, 1);  // one sequence per replica
    const auto w = attention_workload(r, best);
    EXPECT_EQ(w.devices, best.cp);
    EXPECT_EQ(w.block, best.block);
    EXPECT_EQ(w.layers, r.shape.layers);
    EXPECT_EQ(w.pass, Pass::FwdBwd);
    // The planner's ring passes K/V by the framework's rule (plan.cpp,
    // evaluate: pytorch-fsdp repeats them to the query heads).
    auto im = bare_implementation(cm);
    im.expands_kv_ = execution(r).repeat_kv;
    const double expect = analyze(w, group_hardware(hw, best.tp), im).time_s;
    // The planner splits analyze()'s total into per-layer forward and backward
    // and sums them back: only floating-point rounding may differ.
    EXPECT_NEAR(best.time.attention_s, expect, 1e-12 * expect) << best.label();
    EXPECT_EQ(best.time.engine, "analytic");
  }
}

TEST(PlanSearch, AttentionOverrideReplacesOnlyAttention) {
  const auto hw = hardware("h100-sxm");
  RooflineModel cm(hw.effective_flops());
  const auto r = llama8b_1m();
  const auto base = evaluate(r, hw, cm, Layout::Zigzag, 32, 1, 1);
  ASSERT_TRUE(base.feasible);
  const double L = r.shape.layers;
  const double fwd =
      base.time.attention_recompute_s / L;  // full checkpointing recomputes one forward
  const AttentionOverride same{fwd, base.time.attention_s / L, "simgrid"};
  const auto again = evaluate(r, hw, cm, Layout::Zigzag, 32, 1, 1, same);
  EXPECT_EQ(again.time.engine, "simgrid");
  EXPECT_NEAR(again.time.step_time_s, base.time.step_time_s, 1e-9 * base.time.step_time_s);
  const AttentionOverride slower{2 * fwd, 2 * base.time.attention_s / L, "simgrid"};
  EXPECT_GT(evaluate(r, hw, cm, Layout::Zigzag, 32, 1, 1, slower).time.step_time_s,
            base.time.step_time_s);
}

TEST(PlanSearch, FasterInterconnectNeverIncreasesStepTime) {
  auto hw = hardware("h100-sxm");
  const auto r = request(find_model("--model", "llama3-8b"), 256 * 1024, 64);
  RooflineModel cm(hw.effective_flops());
  for (auto layout :
       {Layout::Ring, Layout::Zigzag, Layout::Ulysses, Layout::Allgather, Layout::Hybrid}) {
    for (std::int64_t cp : {2, 8, 16, 64}) {
      double prev = INFINITY;
      for (double scale : {0.05, 0.25, 1.0, 4.0, 16.0}) {
        auto h = hw;
        h.intra_bw = hw.intra_bw * scale;
        h.inter_bw = hw.inter_bw * scale;
        const auto c = evaluate(r, h, cm, layout, cp, 1, 1);
        if (!c.feasible) continue;  // shape rules (ulysses > KV heads) or memory: not a time
        EXPECT_LE(c.time.step_time_s, prev * (1 + 1e-12)) << c.label() << " x" << scale;
        prev = c.time.step_time_s;
      }
      // The inter-node link alone.
      double prev_inter = INFINITY;
      for (double scale : {0.1, 1.0, 10.0}) {
        auto h = hw;
        h.inter_bw = hw.inter_bw * scale;
        const auto c = evaluate(r, h, cm, layout, cp, 1, 1);
        if (!c.feasible) continue;
        EXPECT_LE(c.time.step_time_s, prev_inter * (1 + 1e-12)) << c.label() << " inter x" << scale;
        prev_inter = c.time.step_time_s;
      }
    }
  }
}

TEST(PlanSearch, ShapeRulesAreReasonsNotErrors) {
  const auto hw = hardware("h100-sxm");
  RooflineModel cm(hw.effective_flops());
  const auto r = llama8b_1m();
  const auto u = evaluate(r, hw, cm, Layout::Ulysses, 16, 1, 1);  // 16 > 8 KV heads
  EXPECT_FALSE(u.feasible);
  EXPECT_FALSE(u.evaluated);
  EXPECT_NE(u.reason().find("KV heads"), std::string::npos) << u.reason();
  EXPECT_EQ(u.why.kind, Infeasibility::Kind::Rule);
  auto odd = request(find_model("--model", "llama3-8b"), 1000, 8);
  const auto z = evaluate(odd, hw, cm, Layout::Zigzag, 8, 1, 1);  // 1000 / 8 = 125: odd block
  EXPECT_FALSE(z.feasible);
  EXPECT_NE(z.reason().find("even block"), std::string::npos) << z.reason();
  auto gb = llama8b_1m();
  gb.global_batch_tokens = 1 << 20;  // one sequence: only dp 1 (cp 32) can take it
  const auto d = evaluate(gb, hw, cm, Layout::Zigzag, 16, 1, 1);
  EXPECT_NE(d.reason().find("does not split"), std::string::npos) << d.reason();
}

TEST(PlanSearch, BadRequestsThrowInputError) {
  const auto hw = hardware("h100-sxm");
  RooflineModel cm(hw.effective_flops());
  auto r = llama8b_1m();
  r.cp_degrees = {3};
  EXPECT_THROW(search(r, hw, cm), InputError);
  r = llama8b_1m();
  r.global_batch_tokens = 12345;
  EXPECT_THROW(search(r, hw, cm), InputError);
}

TEST(PlanSearch, GradientAccumulationScalesTheStep) {
  const auto hw = hardware("h100-sxm");
  RooflineModel cm(hw.effective_flops());
  auto r = request(find_model("--model", "llama3-8b"), 8192, 8);
  r.cp_degrees = {1};
  const auto one = search(r, hw, cm).front();
  ASSERT_TRUE(one.feasible);
  r.global_batch_tokens = 8192 * 8 * 4;  // 4 sequences per replica
  const auto four = search(r, hw, cm).front();
  ASSERT_TRUE(four.feasible);
  EXPECT_EQ(four.micro_batch * four.grad_accum, 4);
  // More tokens per step amortise nothing but FSDP and the optimizer: the
  // rate per device is within a few percent and never worse.
  EXPECT_GE(four.tokens_per_s_per_gpu, one.tokens_per_s_per_gpu * (1 - 1e-12));
  EXPECT_LT(four.tokens_per_s_per_gpu, one.tokens_per_s_per_gpu * 1.1);
}

TEST(PlanSearch, MfuFollowsTheStatedConvention) {
  const auto s = find_model("--model", "llama3-8b");
  const double n = 8030261248.0 - 128256.0 * 4096;  // without the input embedding
  const double S = 131072;
  EXPECT_DOUBLE_EQ(model_flops_per_token(s, 131072, false), 6 * n + 12.0 * 32 * 32 * 128 * S);
  EXPECT_DOUBLE_EQ(model_flops_per_token(s, 131072, true), 6 * n + 6.0 * 32 * 32 * 128 * S);
  const auto hw = hardware("h100-sxm");
  RooflineModel cm(hw.effective_flops());
  const auto c = search(llama8b_1m(), hw, cm).front();
  EXPECT_NEAR(c.mfu, c.tokens_per_s_per_gpu * model_flops_per_token(s, 1 << 20, true) / hw.flops,
              1e-12);
  EXPECT_GT(c.mfu_palm, c.mfu);
}

TEST(PlanMaxContext, LongestContextFitsAndOneStepMoreDoesNot) {
  const auto hw = hardware("a100-80gb");
  auto r = request(find_model("--model", "llama2-7b"), 1, 8);
  const auto mc = max_context(r, hw, std::int64_t{1} << 30);
  ASSERT_GT(mc.tokens, 0);
  for (const auto& e : mc.by_config) {
    if (e.max_context == 0) continue;
    r.context = e.max_context;
    EXPECT_LE(training_memory(r, hw, e.layout, e.cp, e.tp, 1).total, hw.hbm_bytes) << e.label;
    r.context = e.max_context + e.granularity;
    if (e.limited_by.find(' ') ==
        std::string::npos) {  // a memory term's name, not a rule or the limit
      EXPECT_GT(training_memory(r, hw, e.layout, e.cp, e.tp, 1).total, hw.hbm_bytes) << e.label;
    }
  }
  EXPECT_EQ(mc.tokens, mc.by_config.front().max_context);
  // Twice the devices never shorten the longest context.
  auto r16 = r;
  r16.gpus = 16;
  EXPECT_GE(max_context(r16, hw, std::int64_t{1} << 30).tokens, mc.tokens);
}

}  // namespace
}  // namespace ringsim
