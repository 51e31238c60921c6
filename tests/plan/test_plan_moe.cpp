// Mixture of experts in the planner (models/plan/moe.hpp), by hand: the
// catalog's MoE models against their published parameter counts, the
// dispatch all-to-all's bytes per layer, tokens per expert under a capacity
// factor, the sampled routing's imbalance, the experts' memory under expert
// parallelism, and the commands that refuse a MoE model.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "models/plan/memory.hpp"
#include "models/plan/moe.hpp"

namespace ringsim {
namespace {

using plan_testing::hardware;
using plan_testing::items;
using plan_testing::request;
using plan_testing::run_cli;

TEST(Moe, CatalogModelsMatchTheirPublishedParameterCounts) {
  // Mixtral 8x7B: a layer is attention 4096 x 128 x (32 + 16) + 32 x 128 x
  // 4096, 8 experts of 3 x 4096 x 14336, the router 4096 x 8 and two norms:
  // 1,451,270,144; x 32 + two 32000 x 4096 embeddings + the final norm.
  const auto& m = find_model("--model", "mixtral-8x7b");
  EXPECT_EQ(layer_params(m), 1451270144u);
  EXPECT_EQ(total_params(m), 46702792704u);   // the paper's 46.7B
  EXPECT_EQ(active_params(m), 12879925248u);  // 12.9B: 2 of 8 experts
  EXPECT_EQ(expert_layer_params(m), 3ull * 4096 * 8 * 14336);
  // A token passes through top-2 x 14336: what its activations see.
  EXPECT_EQ(m.ffn, 2 * 14336);
  const auto& q = find_model("--model", "qwen3-30b-a3b");
  EXPECT_EQ(total_params(q), 30532110336u);  // 30.5B (model card)
  EXPECT_EQ(active_params(q), 3353020416u);  // 3.3B
  EXPECT_NEAR(total_params(find_model("--model", "qwen3-235b-a22b")) / 1e9, 235, 1);
  EXPECT_NEAR(active_params(find_model("--model", "qwen3-235b-a22b")) / 1e9, 22, 0.5);
  EXPECT_NEAR(total_params(find_model("--model", "mixtral-8x22b")) / 1e9, 141, 1);
  EXPECT_NEAR(active_params(find_model("--model", "mixtral-8x22b")) / 1e9, 39, 0.5);
  // Model FLOPs count the active parameters: 6 x (active - embedding) + attention.
  EXPECT_DOUBLE_EQ(model_flops_per_token(m, 4096, false),
                   6.0 * (12879925248.0 - 32000.0 * 4096) + 12.0 * 32 * 32 * 128 * 4096);
}

TEST(Moe, DispatchBytesAndTokensPerExpertByHand) {
  const auto& m = find_model("--model", "mixtral-8x7b");
  // 4096 tokens on a tp-2 GPU: 2048 x top-2 x 4096 x 2 B = 33,554,432 B per
  // all-to-all, 7/8 of it leaving the GPU in an EP group of 8.
  EXPECT_DOUBLE_EQ(ep_alltoall_bytes(m, 4096, 2), 33554432.0);
  // EP 8 over 8 experts, 4096 tokens per rank: 8 x 4096 x 2 / 8 = 8192 rows
  // per expert at the mean, x1.25 on a rank 25% over it.
  EXPECT_DOUBLE_EQ(rows_per_expert(m, 4096, 8, 1.0), 8192.0);
  EXPECT_DOUBLE_EQ(rows_per_expert(m, 4096, 8, 1.25), 10240.0);
  // A capacity factor caps the slowest rank's load: at 1.0 every rank takes
  // its even share (the rest dropped).
  EXPECT_DOUBLE_EQ(routing_imbalance(64, 2, 8, 1.0, 7), 1.0);
  EXPECT_LE(routing_imbalance(64, 2, 8, 1.05, 7), 1.05);
  EXPECT_DOUBLE_EQ(routing_imbalance(4096, 2, 1, 0, 7), 1.0);  // one rank holds every expert
}

TEST(Moe, SampledRoutingIsReproducibleAndEvensOutWithMoreTokens) {
  // The balanced router's multinomial: the slowest rank sits above the mean,
  // by about sqrt(2 ln EP x EP / n) of it, so 1,024 routed copies over 8
  // ranks land far above 1 and a million close to it.
  const double few = routing_imbalance(64, 2, 8, 0, 1);
  const double many = routing_imbalance(65536, 2, 8, 0, 1);
  EXPECT_DOUBLE_EQ(few, routing_imbalance(64, 2, 8, 0, 1));  // same seed, same draw
  EXPECT_GT(few, 1.02);
  EXPECT_GT(many, 1.0);
  EXPECT_LT(many, 1.01);
  EXPECT_GT(few, many);
}

TEST(Moe, TokenPermutationsByHand) {
  // Mixtral, 4096 tokens on a tp-2 GPU, EP 8 (one expert per rank: no sort
  // by local expert): permute 2048 + 4096, unpermute 4096 + 2048 elements of
  // 4096 x 2 B = 100,663,296 B per pass.
  const auto& m = find_model("--model", "mixtral-8x7b");
  EXPECT_DOUBLE_EQ(permute_bytes(m, 4096, 2, 8), 2.0 * 4096 * (2048 + 4096 + 4096 + 2048));
  // EP 4: two experts per rank, so the received chunks are sorted by local
  // expert and back (4 x 4096 elements more).
  EXPECT_DOUBLE_EQ(permute_bytes(m, 4096, 2, 4),
                   2.0 * 4096 * (2048 + 4096 + 4 * 4096 + 4096 + 2048));
}

TEST(Moe, AllToAllTimeIsTwoPerPassOverTheEpGroup) {
  auto r = request(find_model("--model", "mixtral-8x7b"), 4096, 8);
  r.ep = 8;
  const auto hw = hardware("h100-sxm");
  const auto t = moe_layer_time(r, hw, 4096, 1, bf16_gemm_rates(hw), true);
  const double bytes = 4096.0 * 2 * 4096 * 2;
  EXPECT_DOUBLE_EQ(t.a2a_bytes, bytes);
  // Staged all-to-all: 7 rounds of bytes / 8 to one peer (analytic.hpp).
  const double one = 7 * (bytes / 8 / alltoall_bandwidth(hw, 8) + alltoall_latency(hw, 8));
  EXPECT_DOUBLE_EQ(t.a2a_f, 2 * one);
  EXPECT_DOUBLE_EQ(t.a2a_b, 2 * one);
  r.ep = 1;
  const auto alone = moe_layer_time(r, hw, 4096, 1, bf16_gemm_rates(hw), true);
  EXPECT_DOUBLE_EQ(alone.a2a_f, 0);
  EXPECT_GT(alone.experts_f, 0);
}

TEST(Moe, ExpertParallelismShardsTheExpertsMegatronKeepsWhole) {
  // Qwen3-30B-A3B under Megatron, tp 1: params and the main-gradient buffer
  // are not sharded over data parallelism, so a device holds every dense
  // weight and its EP rank's experts: N - 48 layers x experts x (1 - 1/8).
  const auto& q = find_model("--model", "qwen3-30b-a3b");
  auto r = request(q, 4096, 64);
  r.framework = Framework::Megatron;
  const auto hw = hardware("h100-sxm");
  const double n = 30532110336.0, experts = 3.0 * 2048 * 128 * 768;
  r.ep = 8;
  auto it = items(training_memory(r, hw, Layout::Ring, 1, 1, 1));
  EXPECT_DOUBLE_EQ(it.at("params_bf16"), 2 * (n - 48 * experts * 7 / 8));
  EXPECT_DOUBLE_EQ(it.at("grads_bf16"), 2 * (n - 48 * experts * 7 / 8));
  // The optimizer state: dense weights sharded over the 64 cp x dp ranks,
  // the EP rank's 1/8 of the experts over the 64 / 8 ranks holding them:
  // 12 B x N / 64 either way.
  EXPECT_DOUBLE_EQ(it.at("optimizer_fp32_master_m_v"), 12 * n / 64);
  // The dispatch copies: 2 x 4096 tokens x top-8 x 2048 x 2 B.
  EXPECT_DOUBLE_EQ(it.at("moe_dispatch_buffers"), 2.0 * 4096 * 8 * 2048 * 2);
  r.ep = 1;
  EXPECT_DOUBLE_EQ(items(training_memory(r, hw, Layout::Ring, 1, 1, 1)).at("params_bf16"), 2 * n);
  // FP8 weights (--fp8-weights): the EP rank's linear weights at 1 B, the
  // rest (norms: 2 x 2048 per layer; embeddings, final norm) at 2 B.
  r.ep = 8;
  r.precision = Precision::FP8;
  const double lin = 48 * (layer_params(q) - 2.0 * 2048 - experts * 7 / 8);
  it = items(training_memory(r, hw, Layout::Ring, 1, 1, 1));
  EXPECT_DOUBLE_EQ(it.at("params_fp8_bf16"), (n - 48 * experts * 7 / 8 - lin) * 2 + lin);
}

TEST(Moe, ExpertTensorParallelismFoldsEpOverTheTpRanks) {
  // Qwen3-30B-A3B, Megatron, tp 2 with etp 1: the dense weights split over
  // tp (/ 2), the experts are whole on each GPU and split over ep 8 only.
  const auto& q = find_model("--model", "qwen3-30b-a3b");
  auto r = request(q, 4096, 16);
  r.framework = Framework::Megatron;
  const auto hw = hardware("h100-sxm");
  const double n = 30532110336.0, experts = 3.0 * 2048 * 128 * 768;
  r.ep = 8;
  r.etp = 1;
  EXPECT_DOUBLE_EQ(experts_elsewhere(r, 2), experts * (1 - 2.0 / 8));
  const auto it = items(training_memory(r, hw, Layout::Ring, 1, 2, 1));
  EXPECT_DOUBLE_EQ(it.at("params_bf16"), 2 * ((n - 48 * experts) / 2 + 48 * experts / 8));
  // The MoE input of a GPU is its own sequence-parallel half: 4096 / 2
  // tokens x top-8 x 2048 x 2 B per all-to-all either way, and the experts'
  // rows are those of 2048 tokens per rank.
  const auto t = moe_layer_time(r, hw, 4096, 2, bf16_gemm_rates(hw), true);
  EXPECT_DOUBLE_EQ(t.a2a_bytes, 2048.0 * 8 * 2048 * 2);
  // Eight GPUs in a row (etp 1: stride 1) fit one node; at etp 2 the same
  // EP group spans 16 GPUs, two nodes, and its all-to-all is slower.
  r.etp = 2;
  EXPECT_GT(moe_layer_time(r, hw, 4096, 2, bf16_gemm_rates(hw), true).a2a_f, t.a2a_f);
}

TEST(Moe, EpDegreesSearchedDivideTheExpertsAndTheDataRanks) {
  auto r = request(find_model("--model", "mixtral-8x7b"), 4096, 64);
  EXPECT_EQ(ep_degrees(r, 16), (std::vector<std::int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(ep_degrees(r, 4), (std::vector<std::int64_t>{1, 2, 4}));
  r.ep_degrees = {8};
  EXPECT_EQ(ep_degrees(r, 4), (std::vector<std::int64_t>{8}));  // kept: the row says why not
  EXPECT_EQ(ep_degrees(request(find_model("--model", "llama3-8b"), 4096, 8), 8),
            (std::vector<std::int64_t>{1}));
}

TEST(Moe, PlanItemisesTheExpertsAndRefusesWhatItCannotShard) {
  const auto r =
      run_cli({"plan",      "--model",  "qwen3-30b-a3b", "--context", "32K",  "--gpus", "64",
               "--cluster", "dgx-h100", "--framework",   "megatron",  "--tp", "1",      "--cp",
               "2",         "--layout", "zigzag",        "--ep",      "8",    "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto c = nlohmann::json::parse(r.out).at("configs").at(0);
  EXPECT_EQ(c.at("ep").get<int>(), 8);
  EXPECT_GT(c.at("time_breakdown").at("ep_alltoall_s").get<double>(), 0);
  EXPECT_GT(c.at("time_breakdown").at("expert_compute_s").get<double>(), 0);
  // 16384-token blocks x micro-batch: the all-to-all's bytes per GPU.
  const double tokens = 16384.0 * c.at("micro_batch").get<double>();
  EXPECT_DOUBLE_EQ(c.at("moe").at("alltoall_bytes_per_gpu").get<double>(), tokens * 8 * 2048 * 2);
  // 4 GPUs: tp x cp x dp = 4 cannot hold an EP group of 8.
  const auto small = run_cli({"plan", "--model", "qwen3-30b-a3b", "--context", "4K", "--gpus", "4",
                              "--tp", "1", "--ep", "8", "--memory-check", "off"});
  EXPECT_NE(small.out.find("ep 8 x etp 1 does not divide tp x cp x dp = 4"), std::string::npos)
      << small.out;
  for (auto cmd : {std::vector<std::string>{"run", "--model", "mixtral-8x7b"},
                   std::vector<std::string>{"infer", "--model", "mixtral-8x7b", "--context", "8K",
                                            "--gpus", "8"},
                   std::vector<std::string>{"plan", "--model", "llama3-8b", "--context", "8K",
                                            "--gpus", "8", "--ep", "2"}}) {
    const auto x = run_cli(cmd);
    EXPECT_EQ(x.code, 2) << cmd[0];
    EXPECT_NE(x.err.find("experts"), std::string::npos) << x.err;
  }
}

}  // namespace
}  // namespace ringsim
