// Frameworks as they execute (models/plan/execution.hpp), by hand: compute
// beside an overlapped collective, and a layer too small for its kernels'
// dispatch (host-bound), through `ringsim plan --json`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "models/core/catalog.hpp"
#include "models/plan/execution.hpp"

namespace ringsim {
namespace {

using plan_testing::run_cli;

// `ringsim plan` on a 2-layer model of width 256 (4 heads of 64, MLP 512,
// vocabulary 1024), then `rest`.
std::vector<std::string> tiny_model(const std::vector<std::string>& rest) {
  std::vector<std::string> a{"plan",       "--d-model", "256",        "--heads", "4",
                             "--kv-heads", "4",         "--head-dim", "64",      "--ffn",
                             "512",        "--layers",  "2",          "--vocab", "1024"};
  a.insert(a.end(), rest.begin(), rest.end());
  return a;
}

// `ringsim plan --json` on it, TP and PP 1, no calibration, one sequence per
// replica; `extra` names the device, the context, the GPUs and the rest.
cli_testing::CliResult tiny_plan(const std::vector<std::string>& extra) {
  auto a = tiny_model({"--tp", "1", "--pp", "1", "--calibration", "none", "--global-batch-tokens",
                       "replica", "--json"});
  a.insert(a.end(), extra.begin(), extra.end());
  return run_cli(a);
}

// The time breakdown of the best row of tiny_plan(extra).
nlohmann::json tiny_breakdown(const std::vector<std::string>& extra) {
  const auto r = tiny_plan(extra);
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out).at("configs").at(0).at("time_breakdown");
}

TEST(Execution, CollectiveCtasSlowTheComputeBesideThem) {
  // 10 ms of compute beside 2 ms of collective holding 16 of 132 SMs: the
  // 2 ms run at 116/132 speed, so 2 x 16/132 = 0.2424 ms more.
  EXPECT_NEAR(overlapped_compute(10e-3, 2e-3, 132, 16), 10e-3 + 2e-3 * 16.0 / 132, 1e-15);
  // A collective that outlasts the compute: all of it at 116/132 speed.
  EXPECT_NEAR(overlapped_compute(10e-3, 50e-3, 132, 16), 10e-3 * 132 / 116, 1e-15);
  EXPECT_DOUBLE_EQ(overlapped_compute(10e-3, 0, 132, 16), 10e-3);
}

TEST(Execution, ATinyLayerIsHostBound) {
  // A 2-layer model of width 256 on one H100, eager PyTorch, full
  // checkpointing (the default): each layer issues 38 + 80 kernels, and 38
  // more to recompute its forward, at 10 us of host dispatch = 1.56 ms, far
  // more than its microseconds of device work. The step is at least
  // 2 x 1.56 ms, the host-bound time is charged, and the device's gaps are
  // 2 x 156 x 0.9 us = 280.8 us.
  const auto r = tiny_plan({"--context", "1K", "--gpus", "1", "--gpu", "h100-sxm"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& c = j.at("configs").at(0);
  ASSERT_TRUE(c.at("feasible").get<bool>());
  EXPECT_GE(c.at("step_time_s").get<double>(), 2 * 156 * 10e-6);
  EXPECT_GT(c.at("time_breakdown").at("host_bound_s").get<double>(), 0);
  EXPECT_NEAR(c.at("time_breakdown").at("launch_s").get<double>(), 2 * 156 * 0.9e-6, 1e-12);
}

// A 2-layer eager PyTorch step (no checkpointing) with the norm as --norm says.
nlohmann::json eager_breakdown(const std::string& norm) {
  return tiny_breakdown({"--context", "1K", "--gpus", "1", "--gpu", "h100-sxm",
                         "--activation-checkpointing", "none", "--norm", norm});
}

TEST(Execution, AFusedNormIsOneKernelInTheStepAsInMemory) {
  // --norm fused drops the eager composite RMSNorm's extra 36 B per element
  // (40 against 4) for each of a layer's two norms, forward and twice that
  // backward: 2 layers x 3 x 2 x 36 B x 256 x 1024 tokens at achievable HBM,
  // and 2 x (6 + 12) kernels' device gaps of 0.9 us per layer.
  const auto eager = eager_breakdown("eager"), fused = eager_breakdown("fused");
  const auto& dev = Catalog::embedded().device("h100-sxm");
  const double hbm = dev.hbm_bandwidth * dev.hbm_efficiency;
  EXPECT_NEAR(eager.at("pointwise_s").get<double>() - fused.at("pointwise_s").get<double>(),
              2 * 3 * 2 * 36.0 * 256 * 1024 / hbm, 1e-12);
  EXPECT_NEAR(eager.at("launch_s").get<double>() - fused.at("launch_s").get<double>(),
              2 * 2 * (6 + 12) * 0.9e-6, 1e-12);
}

// The tiny model on one H100 node's TP group of 4 under Megatron, full
// recompute, one 1K-token sequence, sequence parallel on or off.
nlohmann::json megatron_tp4(const std::string& sp) {
  const auto r = run_cli(tiny_model({"--framework",
                                     "megatron",
                                     "--tp",
                                     "4",
                                     "--pp",
                                     "1",
                                     "--cp",
                                     "1",
                                     "--gpus",
                                     "4",
                                     "--gpu",
                                     "h100-sxm",
                                     "--context",
                                     "1K",
                                     "--micro-batch",
                                     "1",
                                     "--activation-checkpointing",
                                     "full",
                                     "--calibration",
                                     "none",
                                     "--global-batch-tokens",
                                     "replica",
                                     "--sequence-parallel",
                                     sp,
                                     "--json"}));
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out).at("configs").at(0);
}

TEST(Execution, WithoutSequenceParallelEveryTpRankRunsTheResidualStreamWhole) {
  const auto on = megatron_tp4("on"), off = megatron_tp4("off");
  const auto& dev = Catalog::embedded().device("h100-sxm");
  const double hbm = dev.hbm_bandwidth * dev.hbm_efficiency;
  // Time: the norms and residual adds (20D = 5120 B a token) run on all 1024
  // tokens instead of a quarter, in the forward, its recompute and twice in
  // the backward, on 2 layers: 2 x 4 x 5120 x 3/4 x 1024 B at achievable HBM.
  auto b = [](const nlohmann::json& c, const char* k) {
    return c.at("time_breakdown").at(k).get<double>();
  };
  EXPECT_NEAR(b(off, "pointwise_s") - b(on, "pointwise_s"), 2 * 4 * 5120 * 0.75 * 1024 / hbm,
              1e-12);
  // Two all-reduces a pass in place of two all-gathers and two
  // reduce-scatters: the same bytes, half the calls' base latency.
  EXPECT_LT(b(off, "tp_comm_s"), b(on, "tp_comm_s"));
  // Memory: each layer's saved input (2D B a token) and the residual's
  // gradient are whole on every TP rank, not a quarter.
  auto mem = [](const nlohmann::json& c, const char* k) {
    return c.at("memory_breakdown").at(k).at("bytes").get<double>();
  };
  EXPECT_DOUBLE_EQ(mem(on, "activations_layer_inputs"), 2 * 512.0 * 1024 / 4);
  EXPECT_DOUBLE_EQ(mem(off, "activations_layer_inputs"), 2 * 512.0 * 1024);
  EXPECT_DOUBLE_EQ(mem(off, "residual_grad"), 4 * mem(on, "residual_grad"));
}

TEST(Execution, SequenceParallelIsMegatronsFlag) {
  const auto r = tiny_plan(
      {"--context", "1K", "--gpus", "1", "--gpu", "h100-sxm", "--sequence-parallel", "off"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--sequence-parallel: Megatron-LM's flag, for --framework megatron"),
            std::string::npos)
      << r.err;
}

TEST(Execution, TpOverlapNeedsSequenceParallelAsInMegatron) {
  // Megatron's default TP overlap follows sequence parallelism off: the
  // all-reduces are on the layer's path (the row above already ran so).
  const auto off = megatron_tp4("off");
  EXPECT_GT(off.at("time_breakdown").at("tp_exposed_s").get<double>(), 0);
  const auto r =
      run_cli(tiny_model({"--framework", "megatron", "--gpus", "4", "--gpu", "h100-sxm",
                          "--context", "1K", "--sequence-parallel", "off", "--tp-overlap", "on"}));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--tp-overlap on: Megatron-LM overlaps TP communication only with sequence "
                       "parallelism"),
            std::string::npos)
      << r.err;
}

// The tiny model's attention as standard attention on one A100, no
// checkpointing, with the probabilities dropped out at `p`.
nlohmann::json unfused_a100(const std::string& p) {
  return tiny_breakdown({"--context", "1K", "--gpus", "1", "--gpu", "a100-80gb", "--kernel",
                         "unfused", "--activation-checkpointing", "none", "--framework", "megatron",
                         "--attention-dropout", p});
}

TEST(Execution, AttentionDropoutIsOneMoreOpOverMaterialisedScores) {
  // 2 layers x 4 heads x 1024 x 1024 scores, 5 B forward (read 2, write 2
  // and a 1-byte mask) and 5 B backward (read the gradient and the mask,
  // write 2), at the A100's achievable HBM rate.
  const auto& dev = Catalog::embedded().device("a100-80gb");
  const double hbm = dev.hbm_bandwidth * dev.hbm_efficiency;
  const double scores = 2 * 4 * 1024.0 * 1024;
  EXPECT_NEAR(unfused_a100("0.1").at("attention_s").get<double>() -
                  unfused_a100("0").at("attention_s").get<double>(),
              scores * 10 / hbm, 1e-12);
  // A fused kernel draws the mask inside: nothing more is charged.
  auto fa2 = [](const std::string& p) {
    return tiny_breakdown({"--context", "1K", "--gpus", "1", "--gpu", "a100-80gb", "--kernel",
                           "fa2", "--attention-dropout", p})
        .at("attention_s")
        .get<double>();
  };
  EXPECT_DOUBLE_EQ(fa2("0.1"), fa2("0"));
  // Whole rows of the context: refused where documents bound them.
  const auto r = tiny_plan({"--context", "1K", "--gpus", "1", "--gpu", "a100-80gb", "--kernel",
                            "unfused", "--documents", "256", "--attention-dropout", "0.1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--attention-dropout: counts each query's whole row"), std::string::npos)
      << r.err;
}

// A jax-xla step under MaxText's remat policies, through `plan --json`.
nlohmann::json jax_breakdown(const std::string& policy) {
  std::vector<std::string> a{"--context",   "8K",      "--gpus", "4", "--gpu",    "tpu-v5p",
                             "--framework", "jax-xla", "--cp",   "4", "--layout", "ring"};
  if (!policy.empty())
    a.insert(a.end(), {"--remat-policy", policy});
  else
    a.insert(a.end(), {"--activation-checkpointing", "none"});
  return tiny_breakdown(a);
}

TEST(Execution, JaxRematReRunsOnlyWhatTheBackwardReadsAndNoPolicySaved) {
  const auto none = jax_breakdown("");
  auto extra = [&](const std::string& p, const char* key) {
    return jax_breakdown(p).at(key).get<double>() - none.at(key).get<double>();
  };
  // Saving the context spares the attention forward and its ring; without
  // it the whole attention forward runs again (attention_s is fwd + bwd).
  EXPECT_DOUBLE_EQ(jax_breakdown("custom:context").at("attention_recompute_s").get<double>(), 0);
  const double attn = jax_breakdown("minimal").at("attention_recompute_s").get<double>();
  EXPECT_GT(attn, 0);
  EXPECT_DOUBLE_EQ(jax_breakdown("full").at("attention_recompute_s").get<double>(), attn);
  EXPECT_NEAR(extra("full", "cp_link_s"),
              jax_breakdown("full").at("cp_link_s").get<double>() -
                  jax_breakdown("custom:context").at("cp_link_s").get<double>(),
              1e-15);
  // Linears: minimal saves every dot; full's re-run is the sum of its
  // parts, and saving all but the down projection re-runs nothing, so the
  // down projection is never re-run.
  EXPECT_DOUBLE_EQ(extra("minimal", "other_compute_s"), 0);
  EXPECT_NEAR(extra("full", "other_compute_s"),
              extra("custom:mlpwi_0,mlpwi_1", "other_compute_s") +
                  extra("custom:query_proj,key_proj,value_proj,out_proj", "other_compute_s"),
              1e-15);
  EXPECT_GT(extra("custom:mlpwi_0,mlpwi_1", "other_compute_s"), 0);
  EXPECT_DOUBLE_EQ(
      extra("custom:query_proj,key_proj,value_proj,out_proj,mlpwi_0,mlpwi_1", "other_compute_s"),
      0);
}

}  // namespace
}  // namespace ringsim
