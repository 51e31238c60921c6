// `ringsim infer` and `ringsim plan --inference` as users run them (child
// processes: the SimGrid engine runs in the child, one per process): the
// variant choice, the trace it writes read back, the planner's ranking. The
// 1M-token Llama 3 405B run is in test_infer_cli_scale.cpp. Bad input is in docs/bad-input.md
// (tests/cli runs every row).
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "proc/child.hpp"
#include "tests/infer/run_json.hpp"
#include "trace/reader.hpp"

namespace ringsim {
namespace {

using infer_testing::run_json;

TEST(InferCli, MostlyCachedContextChoosesPassQWhenItsTransfersAreSmaller) {
  // 128K context, 99.6% already cached, 16 nodes: new tokens per rank are too
  // few to hide pass-kv's K/V transfers (experiments/results/inference-scaling).
  const auto j = run_json({"infer", "--model", "llama3-405b", "--context", "128K", "--cached",
                           "130560", "--gpus", "128", "--tp", "8", "--engine", "analytic"});
  EXPECT_EQ(j["variant"], "pass-q");
  EXPECT_FALSE(j.contains("simgrid"));
  EXPECT_LT(j["ttft_s_by_variant"]["pass-q"].get<double>(),
            j["ttft_s_by_variant"]["pass-kv"].get<double>());
}

// infer --straggler: one GPU of a TP group computing twice as slowly holds
// every TP all-reduce of its group, so the simulated TTFT grows by exactly
// its own compute (attention, dense, head) once more, worked out by hand from
// the fault-free run's phases; the closed forms stay fault-free.
TEST(InferCli, StragglerAddsItsOwnComputeToTheSimulatedTtft) {
  const std::vector<std::string> base{"infer",  "--model", "llama3-8b", "--context", "16K",
                                      "--gpus", "8",       "--tp",      "4"};
  auto slow = base;
  slow.insert(slow.end(), {"--straggler", "0:2"});
  const auto a = run_json(base), b = run_json(slow);
  EXPECT_TRUE(a["faults"].is_null());
  EXPECT_EQ(b["faults"], "--straggler 0:2");
  EXPECT_DOUBLE_EQ(a["analytic"]["ttft_s"].get<double>(), b["analytic"]["ttft_s"].get<double>());
  const auto& s = a["simgrid"];
  const double compute = s["attention_s"].get<double>() + s["dense_s"].get<double>() +
                         s["merge_s"].get<double>() + s["head_s"].get<double>();
  EXPECT_NEAR(b["simgrid"]["ttft_s"].get<double>(), s["ttft_s"].get<double>() + compute,
              1e-6 * s["ttft_s"].get<double>());
  // The closed forms have no slow GPU: refused, not ignored.
  auto analytic = slow;
  analytic.insert(analytic.end(), {"--engine", "analytic", "--json"});
  analytic.insert(analytic.begin(), RINGSIM_BIN);
  const auto r = proc::run(analytic, 60);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--straggler: needs the simulator"), std::string::npos) << r.err;
}

TEST(InferCli, TraceOpensWithTheReader) {
  const std::string path = ::testing::TempDir() + "ringsim-infer-trace.json";
  std::remove(path.c_str());
  const auto j = run_json({"infer", "--model", "llama3-8b", "--layers", "2", "--context", "32K",
                           "--gpus", "16", "--tp", "8", "--variant", "pass-q", "--trace", path});
  const auto t = trace::read_trace_file(path);
  EXPECT_EQ(t.lane_names.size(), 16u);
  EXPECT_GT(t.events.size(), 0u);
  EXPECT_EQ(t.skipped_events, 0u);
  // The run's own summary travels with it: the simulated TTFT is the trace's end.
  EXPECT_NEAR(t.end_us,
              j["simgrid"]["ttft_s"].get<double>() * 1e6 +
                  j["simgrid"]["decode_s_per_token"].get<double>() * 1e6,
              1e-3);
  std::remove(path.c_str());
}

TEST(InferCli, PlanInferenceRanksByTtftThenCost) {
  const auto j =
      run_json({"plan", "--inference", "--model", "llama3-70b", "--context", "1M", "--gpus", "128",
                "--gpu", "h100-sxm", "--ttft-target", "60", "--price-per-gpu-hour", "2"});
  const auto& c = j["configs"];
  ASSERT_GT(c.size(), 3u);
  double prev = 0;
  bool usable = true;
  for (const auto& x : c) {
    const bool ok = x["fits"].get<bool>() && x["meets_target"].get<bool>();
    if (!ok) usable = false;
    if (ok) {
      EXPECT_TRUE(usable) << "a usable config ranked after an unusable one";
      EXPECT_GE(x["ttft_s"].get<double>(), prev);
      prev = x["ttft_s"];
      EXPECT_LE(x["ttft_s"].get<double>(), 60);
      EXPECT_NEAR(x["cost_per_prefill"].get<double>(),
                  x["gpu_seconds_per_prefill"].get<double>() / 3600 * 2, 1e-9);
    }
  }
  EXPECT_TRUE(c[0]["fits"].get<bool>());
}

// Llama 3 405B in bf16 at 1M tokens on 128 H100s fits only with TP past the
// 8-GPU node (its weights alone need 95 GiB per GPU at TP 8): the search
// must look there, and say the group spans nodes.
TEST(InferCli, PlanInferenceSearchesTpAcrossNodes) {
  const auto j = run_json(
      {"plan", "--inference", "--model", "llama3-405b", "--context", "1M", "--gpus", "128"});
  const auto& best = j["configs"][0];
  EXPECT_TRUE(best["fits"].get<bool>());
  EXPECT_EQ(best["tp"].get<int>(), 16);
  EXPECT_EQ(best["cp"].get<int>(), 8);
  EXPECT_EQ(best["tp_nodes"].get<int>(), 2);
  EXPECT_EQ(j["precision"], "bf16");
  // TP 8 (one node) is still searched and ranked as not fitting.
  bool tp8 = false;
  for (const auto& c : j["configs"])
    if (c["tp"] == 8 && c["cp"] == 16) tp8 = !c["fits"].get<bool>() && c["tp_nodes"] == 1;
  EXPECT_TRUE(tp8);
}

// A mixture-of-experts model (models/infer/moe.hpp): both engines play the
// same experts, the experts are part of the dense work, and EP inside the
// TP group changes the experts' time only (one token's decode reads whole
// experts on fewer GPUs; the long prefill's narrow slices become whole).
TEST(InferCli, MixtureOfExpertsRunsOnBothEnginesAndEpMovesTheExperts) {
  const std::vector<std::string> base{"infer",  "--model", "qwen3-30b-a3b", "--context", "16K",
                                      "--gpus", "8"};
  auto with_ep = base;
  with_ep.insert(with_ep.end(), {"--ep", "8"});
  const auto a = run_json(base), b = run_json(with_ep);
  EXPECT_NEAR(a["simgrid"]["ttft_rel_diff"].get<double>(), 0, 1e-9);
  EXPECT_NEAR(b["simgrid"]["decode_rel_diff"].get<double>(), 0, 1e-9);
  const auto &ma = a["moe"], &mb = b["moe"];
  EXPECT_EQ(ma["ep"], 1);
  EXPECT_EQ(mb["expert_tp"], 1);
  EXPECT_EQ(ma["decode"]["experts_touched"].get<double>(), 8);  // batch 1, top 8
  EXPECT_EQ(ma["prefill"]["experts_touched"].get<double>(), 128);
  EXPECT_LT(ma["prefill"]["experts_s"].get<double>(), a["analytic"]["dense_s"].get<double>());
  EXPECT_GT(mb["decode"]["imbalance"].get<double>(), 1);
  // Everything but the experts is the same.
  const double other_a =
      a["analytic"]["ttft_s"].get<double>() - ma["prefill"]["experts_s"].get<double>();
  const double other_b =
      b["analytic"]["ttft_s"].get<double>() - mb["prefill"]["experts_s"].get<double>();
  EXPECT_NEAR(other_a, other_b, 1e-9 * other_a);
  EXPECT_NE(ma["prefill"]["experts_s"], mb["prefill"]["experts_s"]);
  // A dense model has none.
  EXPECT_TRUE(run_json({"infer", "--model", "llama3-8b", "--context", "8K", "--gpus", "8",
                        "--engine", "analytic"})["moe"]
                  .is_null());
}

// plan --inference searches a mixture-of-experts model's TP x CP splits as a
// dense one's, its experts sliced over each TP group: every split listed is
// the one `infer` gives for it.
TEST(InferCli, PlanInferenceSearchesAMixtureOfExpertsModel) {
  const auto p = run_json(
      {"plan", "--inference", "--model", "qwen3-30b-a3b", "--context", "64K", "--gpus", "16"});
  ASSERT_FALSE(p["configs"].empty());
  const auto& best = p["configs"][0];
  const auto one = run_json({"infer", "--model", "qwen3-30b-a3b", "--context", "64K", "--gpus",
                             std::to_string(best["gpus"].get<int>()), "--tp",
                             std::to_string(best["tp"].get<int>()), "--cp",
                             std::to_string(best["cp"].get<int>()), "--engine", "analytic"});
  EXPECT_DOUBLE_EQ(best["ttft_s"].get<double>(), one["analytic"]["ttft_s"].get<double>());
  EXPECT_EQ(one["moe"]["ep"], 1);
}

// Nothing fits DeepSeek-V3 in bf16 on 8 H100s; FP8 alone does not either,
// and FP8 on 16 GPUs does before bf16 needs 32: the hint names the fewest.
TEST(InferCli, PlanInferenceFitHintTriesFp8WithMoreGpus) {
  const auto p = run_json(
      {"plan", "--inference", "--model", "deepseek-v3", "--context", "128K", "--gpus", "8"});
  ASSERT_TRUE(p["fit_hint"].is_string());
  const auto hint = p["fit_hint"].get<std::string>();
  EXPECT_NE(hint.find("--precision fp8 --gpus 16"), std::string::npos) << hint;
  const auto fits =
      run_json({"plan", "--inference", "--model", "llama3-8b", "--context", "16K", "--gpus", "8"});
  EXPECT_TRUE(fits["fit_hint"].is_null());
}

// The MLA model's prefill and decode as infer serves them, in both engines.
TEST(InferCli, LatentAttentionRunsOnBothEngines) {
  const auto j = run_json({"infer", "--model", "deepseek-v3", "--gpu", "h200", "--gpus", "16",
                           "--cp", "2", "--precision", "fp8", "--ep", "8", "--context", "16K"});
  EXPECT_EQ(j["attention"]["kind"], "mla");
  EXPECT_EQ(j["attention"]["kv_cache_bytes_per_token"], 1152);
  EXPECT_NEAR(j["simgrid"]["ttft_s"].get<double>(), j["analytic"]["ttft_s"].get<double>(),
              1e-6 * j["analytic"]["ttft_s"].get<double>());
}

}  // namespace
}  // namespace ringsim
