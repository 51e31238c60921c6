// Mixture of experts in the planner (models/plan/moe.hpp), by hand: the
// catalog's MoE models against their published parameter counts, the
// dispatch all-to-all's bytes per layer, tokens per expert under a capacity
// factor, the sampled routing's imbalance, the experts' memory under expert
// parallelism, and the commands that refuse a MoE model.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "models/analytic/collectives.hpp"
#include "models/plan/memory.hpp"
#include "models/plan/moe.hpp"

namespace ringsim {
namespace {

using plan_testing::hardware;
using plan_testing::items;
using plan_testing::request;
using plan_testing::run_cli;

// --layers N keeps a MoE model's share of dense layers: DeepSeek-V3's 3 of
// 61 round to none at 2 layers (not 2 - 3 MoE layers), Llama 4 Maverick's 24
// of 48 to 1 of 2; the mean MLP width follows.
TEST(Moe, FewerLayersKeepTheDenseShare) {
  auto v3 = find_model("--model", "deepseek-v3");
  set_layers(v3, 2);
  EXPECT_EQ(v3.layers, 2);
  EXPECT_EQ(v3.dense_layers, 0);
  EXPECT_EQ(moe_layers(v3), 2);
  EXPECT_EQ(v3.ffn, 9 * 2048);  // top-8 + 1 shared expert of 2048
  EXPECT_LT(total_params(v3), total_params(find_model("--model", "deepseek-v3")));
  auto mav = find_model("--model", "llama4-maverick");
  set_layers(mav, 2);
  EXPECT_EQ(mav.dense_layers, 1);
  EXPECT_EQ(moe_layers(mav), 1);
  EXPECT_EQ(mav.ffn, (2 * 8192 + 16384) / 2);
  set_layers(mav, 1);  // one layer: the MoE one stays (at most n - 1 dense)
  EXPECT_EQ(mav.dense_layers, 0);
  auto same = find_model("--model", "deepseek-v3");
  set_layers(same, 61);
  EXPECT_EQ(same.dense_layers, 3);
  EXPECT_EQ(same.ffn, find_model("--model", "deepseek-v3").ffn);
}

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

// Expert TP above 1: the dispatcher gathers the routed rows over the ETP
// group after the dispatch and scatters them before the combine; both join
// the all-to-all's time, and nothing of it at etp 1. A MoE layer runs no
// dense MLP, so its sequence-parallel all-gather and reduce-scatter are not
// charged: half of a layer's four, in the share of layers that are MoE.
TEST(Moe, ExpertTensorParallelismGathersTheRoutedTokensOverItsGroup) {
  const auto& q = find_model("--model", "qwen3-30b-a3b");
  auto r = request(q, 4096, 16);
  r.framework = Framework::Megatron;
  r.ep = 4;
  const auto hw = hardware("h100-sxm");
  r.etp = 2;
  const auto t = moe_layer_time(r, hw, 4096, 2, bf16_gemm_rates(hw), true);
  // 4096 tokens x etp 2 / tp 2 gathered, top 8, d_model 2048, bf16, the
  // slowest rank's share.
  const double bytes = t.imbalance * 4096.0 * 8 * 2048 * 2;
  const auto g = placed_group(hw, 2);
  const double want = collective_time(Collective::AllGather, bytes, g, hw).seconds +
                      collective_time(Collective::ReduceScatter, bytes, g, hw).seconds;
  EXPECT_DOUBLE_EQ(t.etp_f, want);
  EXPECT_DOUBLE_EQ(t.etp_b, want);
  r.etp = 1;
  EXPECT_EQ(moe_layer_time(r, hw, 4096, 2, bf16_gemm_rates(hw), true).etp_f, 0);
  EXPECT_DOUBLE_EQ(sequence_parallel_share(find_model("--model", "llama3-8b")), 1);
  EXPECT_DOUBLE_EQ(sequence_parallel_share(q), 0.5);
  // DeepSeek-V3: 58 of its 61 layers are MoE.
  EXPECT_DOUBLE_EQ(sequence_parallel_share(find_model("--model", "deepseek-v3")),
                   1 - 0.5 * 58 / 61);
}

TEST(Moe, EpDegreesSearchedDivideTheExpertsAndTheDataRanks) {
  auto r = request(find_model("--model", "mixtral-8x7b"), 4096, 64);
  EXPECT_EQ(ep_degrees(r, 16), (std::vector<std::int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(ep_degrees(r, 4), (std::vector<std::int64_t>{1, 2, 4}));
  r.ep_degrees = {8};
  EXPECT_EQ(ep_degrees(r, 4), (std::vector<std::int64_t>{8}));  // kept: the row says why not
  EXPECT_EQ(ep_degrees(request(find_model("--model", "llama3-8b"), 4096, 8), 8),
            (std::vector<std::int64_t>{1}));
  // No rank left for EP (an --etp wider than the ranks): EP 1, so the row is
  // evaluated and says which rule it breaks.
  r.ep_degrees.clear();
  EXPECT_EQ(ep_degrees(r, 0), (std::vector<std::int64_t>{1}));
}

// --etp 16 on 8 GPUs: every row is refused with its reason (it used to be
// "no configuration fits" and nothing else), and a refused row's JSON holds
// null where its shape leaves a value undefined (it held dp 1 and block 0).
TEST(Moe, AnEtpWiderThanTheGpusSaysWhyOnEveryRow) {
  const auto r = run_cli({"plan", "--model", "mixtral-8x7b", "--context", "32K", "--gpus", "8",
                          "--etp", "16", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto configs = nlohmann::json::parse(r.out).at("configs");
  ASSERT_FALSE(configs.empty());
  for (const auto& c : configs) {
    EXPECT_FALSE(c.at("feasible").get<bool>());
    EXPECT_NE(c.at("reason").get<std::string>().find("etp 16 does not divide"), std::string::npos)
        << c.at("reason");
    // tp x cp x pp divides 8 GPUs and cp the context here: dp and block are
    // defined; the micro-steps are not (the row never reached the batch).
    const auto tp = c.at("tp").get<int>(), cp = c.at("cp").get<int>(), pp = c.at("pp").get<int>();
    EXPECT_EQ(c.at("dp").get<int>(), 8 / (tp * cp * pp)) << c.at("label");
    EXPECT_EQ(c.at("block").get<int>(), 32768 / cp) << c.at("label");
    EXPECT_TRUE(c.at("grad_accum_steps").is_null()) << c.at("label");
  }
}

TEST(Moe, DeepSeekV3MlaAndDenseFirstLayersByHand) {
  const auto& m = find_model("--model", "deepseek-v3");
  // MLA per layer: Q down 7168 x 1536 + its norm 1536 + Q up 1536 x 128 x
  // 192; the KV latent and RoPE key 7168 x (512 + 64) + the latent's norm
  // 512; K and V up 512 x 128 x (128 + 128); Wo 128 x 128 x 7168.
  EXPECT_EQ(attention_params(m),
            11010048u + 1536 + 37748736 + 4128768 + 512 + 16777216 + 117440512);  // 187,107,328
  // 61 x (attention + two norms) + 58 MoE layers (257 experts of 3 x 7168 x
  // 2048 and the 7168 x 256 router) + 3 dense of 3 x 7168 x 18432 + two
  // 129280 x 7168 embeddings + the final norm: the report's 671B.
  EXPECT_EQ(total_params(m), 671026404352u);
  // Active: 248 idle routed experts of each MoE layer taken off: 37.6B (37B).
  EXPECT_EQ(active_params(m), 671026404352u - 58ull * 248 * 3 * 7168 * 2048);
  // The attention core runs at the mean head width: (192 + 128) / 2.
  EXPECT_EQ(m.head_dim, 160);
  // ffn is the layers' mean width: 58 x 9 x 2048 and 3 x 18432 over 61.
  EXPECT_EQ(m.ffn, 18432);
  // The dense layers carry no experts: the all-to-alls are 58/61 of an
  // all-MoE model's, per layer on the mean.
  auto r = request(m, 4096, 64);
  r.ep = 8;
  auto all_moe = r;
  all_moe.shape.dense_layers = 0;
  const auto hw = hardware("h100-sxm");
  const auto t = moe_layer_time(r, hw, 4096, 1, bf16_gemm_rates(hw), true);
  const auto u = moe_layer_time(all_moe, hw, 4096, 1, bf16_gemm_rates(hw), true);
  EXPECT_DOUBLE_EQ(t.a2a_f, u.a2a_f * 58 / 61);
  EXPECT_DOUBLE_EQ(t.experts_b, u.experts_b * 58 / 61);
}

TEST(Moe, AllToAllAcrossNodesSharesNvlinkAndTheNicByHand) {
  // Two nodes of 8: NVLink 400 GB/s, one 50 GB/s NIC per GPU, no latency.
  Hardware hw;
  hw.platform = Platform::Nodes;
  hw.gpus_per_node = 8;
  hw.intra_bw = 400e9;
  hw.inter_bw = 50e9;
  const auto& q = find_model("--model", "qwen3-30b-a3b");
  // alltoall: 7/16 of 16 MB to the node's other GPUs over NVLink (17.5 us)
  // while 8/16 leaves on the NIC (160 us): the NIC's share sets it.
  EXPECT_DOUBLE_EQ(ep_alltoall_seconds(q, 16e6, 16, hw, false), 8e6 / 50e9);
  // flex: a token crosses to the other node once when that node holds one
  // of its 8 experts (64 of the 128 there): 1 - C(64,8)/C(128,8) of the
  // tokens, one copy in 8 routed copies.
  double none = 1;
  for (int i = 0; i < 8; ++i) none *= (64.0 - i) / (128.0 - i);
  EXPECT_DOUBLE_EQ(flex_remote_share(q, 2), (1 - none) / 8);
  EXPECT_DOUBLE_EQ(ep_alltoall_seconds(q, 16e6, 16, hw, true),
                   std::max(7e6 / 400e9, 16e6 * (1 - none) / 8 / 50e9));
  // Eight experts, top-2, two domains of four: P(none there) = 4/8 x 3/7.
  auto m = q;
  m.experts = 8;
  m.experts_per_token = 2;
  EXPECT_DOUBLE_EQ(flex_remote_share(m, 2), (1 - 3.0 / 14) / 2);
  // Inside one node: the staged all-to-all as before.
  EXPECT_DOUBLE_EQ(ep_alltoall_seconds(q, 16e6, 8, hw, false),
                   alltoall_time(16000000, 8, alltoall_bandwidth(hw, 8), alltoall_latency(hw, 8)));
}

// Group-limited routing (DeepSeek-V3: 256 experts in 8 groups of 32, a
// token picks 4 groups, then its 8 experts among those 128): over 8 nodes
// (a node per group) a remote node gets the token when its group is picked
// (4/8) and one of the 8 experts falls in its 32 of the 128: 7 x that / 8.
// Over 2 nodes of 4 groups each: j of the node's 4 groups picked with the
// hypergeometric chance C(4,j) C(4,4-j) / C(8,4), then one of the 8 experts
// among its j x 32 of the 128. Without the limit (the same experts, drawn
// from all 256), more nodes are reached.
TEST(Moe, GroupLimitedRoutingReachesFewerNodesByHand) {
  const auto& v3 = find_model("--model", "deepseek-v3");
  ASSERT_EQ(v3.expert_groups, 8);
  ASSERT_EQ(v3.groups_per_token, 4);
  auto none = [](double n, double a) {
    double p = 1;
    for (int i = 0; i < 8; ++i) p *= (n - a - i) / (n - i);
    return p;
  };
  EXPECT_NEAR(flex_remote_share(v3, 8), 7 * 0.5 * (1 - none(128, 32)) / 8, 1e-15);
  const double c[5] = {1.0 / 70, 16.0 / 70, 36.0 / 70, 16.0 / 70, 1.0 / 70};  // j = 0..4
  double hit = 0;
  for (int j = 1; j <= 4; ++j) hit += c[j] * (1 - none(128, 32.0 * j));
  EXPECT_NEAR(flex_remote_share(v3, 2), hit / 8, 1e-15);
  auto free = v3;
  free.expert_groups = free.groups_per_token = 0;
  EXPECT_NEAR(flex_remote_share(free, 8), 7 * (1 - none(256, 32)) / 8, 1e-15);
  EXPECT_LT(flex_remote_share(v3, 8), 0.75 * flex_remote_share(free, 8));
  // 16 nodes, two per group: a node holds half a group.
  EXPECT_NEAR(flex_remote_share(v3, 16), 15 * 0.5 * (1 - none(128, 16)) / 8, 1e-15);
}

TEST(Moe, EpOverlapHidesTheAllToAllsBehindTheOtherMicroBatch) {
  auto run = [](const std::string& overlap) {
    const auto r = run_cli({"plan",
                            "--model",
                            "qwen3-30b-a3b",
                            "--context",
                            "4K",
                            "--gpus",
                            "16",
                            "--cluster",
                            "dgx-h100",
                            "--framework",
                            "megatron",
                            "--tp",
                            "1",
                            "--pp",
                            "1",
                            "--cp",
                            "1",
                            "--ep",
                            "16",
                            "--micro-batch",
                            "1",
                            "--global-batch-tokens",
                            "64K",
                            "--ep-overlap",
                            overlap,
                            "--calibration",
                            "none",
                            "--json"});
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out).at("configs").at(0);
  };
  const auto off = run("off"), on = run("on");
  // The same all-to-alls, charged in full off the path: the step is shorter
  // by at most their time.
  const double a2a = off.at("time_breakdown").at("ep_alltoall_s").get<double>();
  EXPECT_DOUBLE_EQ(on.at("time_breakdown").at("ep_alltoall_s").get<double>(), a2a);
  const double saved = off.at("step_time_s").get<double>() - on.at("step_time_s").get<double>();
  EXPECT_GT(saved, 0);
  EXPECT_LE(saved, a2a * (1 + 1e-9));
  const auto bad = run_cli({"plan", "--model", "qwen3-30b-a3b", "--context", "4K", "--gpus", "16",
                            "--ep-dispatcher", "deepep"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--ep-dispatcher"), std::string::npos) << bad.err;
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
  for (auto cmd : {std::vector<std::string>{"run", "--model", "llama3-8b", "--scope", "layer",
                                            "--devices", "8", "--ep", "2"},
                   std::vector<std::string>{"infer", "--model", "llama3-8b", "--context", "8K",
                                            "--gpus", "8", "--ep", "2"},
                   std::vector<std::string>{"plan", "--model", "llama3-8b", "--context", "8K",
                                            "--gpus", "8", "--ep", "2"}}) {
    const auto x = run_cli(cmd);
    EXPECT_EQ(x.code, 2) << cmd[0];
    EXPECT_NE(x.err.find("experts"), std::string::npos) << x.err;
  }
}

}  // namespace
}  // namespace ringsim
