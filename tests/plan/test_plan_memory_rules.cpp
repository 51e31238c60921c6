// Each framework's memory rules counted by hand on the tiny shape (L 2, D 64,
// H 4, kvh 2, d 16, F 128, V 1000: 202,048 parameters): Megatron's
// distributed optimizer and Megatron FSDP, FP8 weights, Transformer
// Engine's saved activations in bf16 and FP8, MaxText's remat policies,
// partial recompute and offloading, the loss per framework, FSDP under a
// pipeline, the pipeline layouts and interleaved 1F1B's chunks in flight,
// the runtime on a TPU, and the reported capacities.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "models/plan/activations.hpp"
#include "models/plan/execution.hpp"
#include "models/plan/runtime_memory.hpp"

namespace ringsim {
namespace {

using plan_testing::hardware;
using plan_testing::items;
using plan_testing::request;
using plan_testing::tiny_shape;

PlanRequest megatron(std::int64_t gpus) {
  auto r = request(tiny_shape(), 1024, gpus);
  r.framework = Framework::Megatron;
  return r;
}

TEST(MemoryRules, DistributedOptimizerShardsOverDataAndContextParallel) {
  // 8 devices, tp 2, cp 2: d = cp x dp = 4. Per device: params 2 N / t, bf16
  // grads 2 N / t (not sharded), optimizer 12 N / t / d.
  const auto hw = hardware("h100-sxm");
  auto r = megatron(8);
  const auto it = items(training_memory(r, hw, Layout::Ring, 2, 2, 1));
  EXPECT_DOUBLE_EQ(it.at("params_bf16"), 2.0 * 202048 / 2);
  EXPECT_DOUBLE_EQ(it.at("grads_bf16"), 2.0 * 202048 / 2);
  EXPECT_DOUBLE_EQ(it.at("optimizer_fp32_master_m_v"), 12.0 * 202048 / 2 / 4);
  r.grad_bytes = 4;  // --grad-dtype fp32: Megatron-LM's own bf16 default
  EXPECT_DOUBLE_EQ(items(training_memory(r, hw, Layout::Ring, 2, 2, 1)).at("grads_fp32"),
                   4.0 * 202048 / 2);
  EXPECT_EQ(items(training_memory(r, hw, Layout::Ring, 2, 2, 1)).count("fsdp_gathered_params"), 0u);
}

TEST(MemoryRules, MegatronFsdpShardsEveryState) {
  const auto hw = hardware("h100-sxm");
  auto r = megatron(8);
  r.fsdp = 1;
  const auto it = items(training_memory(r, hw, Layout::Ring, 2, 2, 1));
  // 2 + 2 + 12 bytes per parameter over all 8 devices.
  EXPECT_DOUBLE_EQ(it.at("params_bf16_shard"), 2.0 * 202048 / 8);
  EXPECT_DOUBLE_EQ(it.at("grads_bf16_shard"), 2.0 * 202048 / 8);
  EXPECT_DOUBLE_EQ(it.at("optimizer_fp32_master_m_v"), 12.0 * 202048 / 8);
  EXPECT_EQ(it.count("fsdp_gathered_params"), 1u);
}

TEST(MemoryRules, JaxXlaHoldsNoRootUnitAndLayerGradientsAtTheReduceScattersBytes) {
  // XLA frees a gathered weight after its last use (no FSDP root unit): two
  // layers gathered through the step (2 x 36992 x 2 B), the output head
  // (1000 x 64) gathered at the loss only; a layer's gradients held at the
  // bytes the step time's reduce-scatter carries (bf16, 2 x 36992).
  const auto hw = hardware("tpu-v5e");
  auto r = request(tiny_shape(), 1024, 4);
  r.framework = Framework::JaxXla;
  const auto m = training_memory(r, hw, Layout::Ring, 2, 1, 1);
  const auto it = items(m);
  EXPECT_DOUBLE_EQ(it.at("fsdp_gathered_params"), 2.0 * 36992 * 2);
  EXPECT_DOUBLE_EQ(it.at("fsdp_gathered_head"), 2.0 * 64000);
  EXPECT_EQ(execution(r).grad_reduce_bytes, 2);
  EXPECT_DOUBLE_EQ(it.at("fsdp_unsharded_grads"), execution(r).grad_reduce_bytes * 36992);
  for (const auto& i : m.items)
    if (i.name == "fsdp_gathered_head") EXPECT_EQ(i.phase, "loss");
  // The same request under pytorch-fsdp keeps its root unit gathered.
  r.framework = Framework::PytorchFsdp;
  const auto p = items(training_memory(r, hardware("h100-sxm"), Layout::Ring, 2, 1, 1));
  EXPECT_DOUBLE_EQ(p.at("fsdp_gathered_params"), 404096);
  EXPECT_EQ(p.count("fsdp_gathered_head"), 0u);
}

TEST(MemoryRules, Fp8WeightsReplaceTheBf16CopyAndTheCache) {
  // Linear params per layer: 36992 - 2 x 64 norms = 36864; 2 layers = 73728.
  const auto hw = hardware("h100-sxm");
  auto r = megatron(4);
  r.precision = Precision::FP8;
  r.fp8_weights = 0;
  const auto off = items(training_memory(r, hw, Layout::Ring, 1, 1, 1));
  EXPECT_DOUBLE_EQ(off.at("params_bf16"), 2.0 * 202048);
  EXPECT_DOUBLE_EQ(off.at("fp8_weight_copies"), 2.0 * 73728);
  r.fp8_weights = 1;
  const auto on = items(training_memory(r, hw, Layout::Ring, 1, 1, 1));
  EXPECT_DOUBLE_EQ(on.at("params_fp8_bf16"), 2.0 * (202048 - 73728) + 73728);
  EXPECT_DOUBLE_EQ(on.at("fp8_weight_transposes"), 73728);
  EXPECT_EQ(on.count("fp8_weight_copies"), 0u);
}

TEST(MemoryRules, TransformerEngineSavedActivations) {
  auto r = megatron(4);
  // None: input 128 + ln_out 128 + rsigma 4 + Q 128 + K, V 64 each + O 128 + LSE 16
  // + residual 128 + ln_out 128 + rsigma 4 + gate, up 256 each + product 256 = 1688.
  r.checkpointing = Checkpointing::None;
  EXPECT_DOUBLE_EQ(saved_bytes_per_token(r), 1688);
  // Selective recomputes the core attention: its LSE goes.
  r.checkpointing = Checkpointing::Selective;
  EXPECT_DOUBLE_EQ(saved_bytes_per_token(r), 1672);
  // FP8: the two norm outputs and fc2's input as FP8 casts (-2D - F), the
  // output projection's FP8 input (+Hd): 1688 - 128 - 128 + 64 = 1496.
  r.precision = Precision::FP8;
  r.checkpointing = Checkpointing::None;
  EXPECT_DOUBLE_EQ(saved_bytes_per_token(r), 1496);
  // Selective under FP8: the bf16 attention output is recomputed too (-LSE - O).
  r.checkpointing = Checkpointing::Selective;
  EXPECT_DOUBLE_EQ(saved_bytes_per_token(r), 1496 - 16 - 128);
  r.checkpointing = Checkpointing::Full;
  EXPECT_DOUBLE_EQ(saved_bytes_per_token(r), 128);
}

TEST(MemoryRules, MaxTextRematPolicies) {
  auto r = request(tiny_shape(), 1024, 4);
  r.framework = Framework::JaxXla;
  auto saved = [&](const char* p) {
    r.remat_policy = p;
    return saved_bytes_per_token(r);
  };
  // input 128; Q 128, K 64, V 64; context 128; out_proj 128; mlpwi_0/1 256 each; mlpwo 128.
  EXPECT_DOUBLE_EQ(saved("full"), 128);
  EXPECT_DOUBLE_EQ(saved("minimal"), 128 + 256 + 128 + 512 + 128);
  EXPECT_DOUBLE_EQ(saved("minimal_with_context"), 128 + 256 + 128 + 512 + 128 + 128);
  EXPECT_DOUBLE_EQ(saved("save_dot_except_mlpwi"), 128 + 256 + 128 + 128);
  EXPECT_DOUBLE_EQ(saved("save_dot_except_mlp"), 128 + 256 + 128);
  EXPECT_DOUBLE_EQ(saved("save_qkv_proj"), 128 + 256);
  EXPECT_DOUBLE_EQ(saved("save_out_proj"), 128 + 128);
  EXPECT_DOUBLE_EQ(saved("qkv_proj_offloaded"), 128);  // on host, not on the device
  // remat_policy=custom with the named tensors on the device.
  EXPECT_DOUBLE_EQ(saved("custom:context"), 128 + 128);
  EXPECT_DOUBLE_EQ(saved("custom:context,out_proj,mlpwo"), 128 + 128 + 128 + 128);
  EXPECT_DOUBLE_EQ(saved("custom:query_proj,kv_proj"), 128 + 256);
  EXPECT_TRUE(valid_custom_remat_policy("custom:context,mlpwi_0"));
  EXPECT_FALSE(valid_custom_remat_policy("custom:"));
  EXPECT_FALSE(valid_custom_remat_policy("custom:context,"));
  EXPECT_FALSE(valid_custom_remat_policy("custom:contxt"));
  EXPECT_FALSE(valid_custom_remat_policy("context"));
  EXPECT_EQ(remat_policy_checkpointing("full"), Checkpointing::Full);
  EXPECT_EQ(remat_policy_checkpointing("minimal"), Checkpointing::Selective);
}

TEST(MemoryRules, MaxTextRematPoliciesRecomputeWhatTheBackwardReadsAndNobodySaved) {
  // {attention, Q/K/V, output projection, MLP input projections}: what the
  // backward re-runs; the down projection is never among them.
  auto r = request(tiny_shape(), 1024, 4);
  r.framework = Framework::JaxXla;
  auto re = [&](const char* p) {
    r.remat_policy = p;
    const auto x = jax_remat_recompute(r);
    return std::vector<bool>{x.attention, x.qkv, x.out_proj, x.mlp_in};
  };
  using V = std::vector<bool>;
  EXPECT_EQ(re("full"), (V{true, true, true, true}));
  EXPECT_EQ(re("minimal"), (V{true, false, false, false}));
  EXPECT_EQ(re("minimal_with_context"), (V{false, false, false, false}));
  EXPECT_EQ(re("save_dot_with_context_except_mlp"), (V{false, false, false, true}));
  EXPECT_EQ(re("save_dot_except_mlpwi"), (V{true, false, false, true}));
  EXPECT_EQ(re("save_qkv_proj"), (V{true, false, true, true}));
  EXPECT_EQ(re("save_out_proj"), (V{true, true, false, true}));
  // Offloaded tensors come back from host: not re-run.
  EXPECT_EQ(re("qkv_proj_offloaded"), (V{true, false, true, true}));
  EXPECT_EQ(re("minimal_offloaded"), (V{true, false, false, false}));
  EXPECT_EQ(re("custom:context"), (V{false, true, true, true}));
  EXPECT_EQ(re("custom:query_proj,key_proj"), (V{true, true, true, true}));  // V re-run
  EXPECT_EQ(re("custom:query_proj,kv_proj,mlpwi_0"), (V{true, false, true, true}));
  // No policy and no checkpointing: nothing re-runs.
  r.remat_policy.clear();
  r.checkpointing = Checkpointing::None;
  EXPECT_EQ(re(""), (V{false, false, false, false}));
}

TEST(MemoryRules, PartialRecomputeAndOffloading) {
  // 2 layers, full checkpointing: 2 x 128 B per token at 1024 tokens.
  const auto hw = hardware("h100-sxm");
  auto r = megatron(4);
  r.checkpointing = Checkpointing::Full;
  const double all =
      items(training_memory(r, hw, Layout::Ring, 1, 1, 1)).at("activations_layer_inputs");
  EXPECT_DOUBLE_EQ(all, 2 * 128.0 * 1024);
  // --recompute-layers 1: one layer recomputes (128 B), the other keeps 1688 B.
  r.recompute_layers = 1;
  EXPECT_DOUBLE_EQ(items(training_memory(r, hw, Layout::Ring, 1, 1, 1)).at("activations_saved"),
                   (128.0 + 1688) * 1024);
  EXPECT_DOUBLE_EQ(recompute_fraction(r, 2, 1), 0.5);
  // --offload-layers 2 of 2: one layer's stays while it is copied.
  r.recompute_layers = 0;
  r.offload_layers = 2;
  EXPECT_DOUBLE_EQ(
      items(training_memory(r, hw, Layout::Ring, 1, 1, 1)).at("activations_layer_inputs"),
      128.0 * 1024);
}

TEST(MemoryRules, LossBytesPerLogitByImplementation) {
  // 1024 tokens x 1000 vocabulary on one device (tp 1), or 1/2 of the vocabulary (tp 2).
  const auto hw = hardware("h100-sxm");
  auto r = request(tiny_shape(), 1024, 4);
  auto loss = [&](std::int64_t tp) {
    return items(training_memory(r, hw, Layout::Ring, 1, tp, 1)).at("logits_and_loss_fp32");
  };
  EXPECT_DOUBLE_EQ(loss(1), 12.0 * 1024 * 1000);      // eager
  EXPECT_DOUBLE_EQ(loss(2), 16.0 * 1024 * 1000 / 2);  // loss_parallel
  r.loss = LossImpl::Compiled;
  EXPECT_DOUBLE_EQ(loss(1), 4.0 * 1024 * 1000);
  // flash-attn's fused cross-entropy (LLM Foundry's MPT): bf16 logits and
  // gradient, and no freed bf16 block left cached beside fp32 buffers.
  r.loss = LossImpl::Fused;
  EXPECT_DOUBLE_EQ(loss(1), 4.0 * 1024 * 1000);
  EXPECT_DOUBLE_EQ(loss(2), 4.0 * 1024 * 1000 / 2);
  EXPECT_EQ(items(training_memory(r, hw, Layout::Ring, 1, 1, 1)).count("logits_block_cached"), 0u);
  r.framework = Framework::Megatron;
  r.loss = LossImpl::Eager;
  EXPECT_DOUBLE_EQ(loss(2), 6.0 * 1024 * 1000 / 2);  // vocab-parallel, in place
  EXPECT_EQ(items(training_memory(r, hw, Layout::Ring, 1, 2, 1)).count("logits_block_cached"), 0u);
}

TEST(MemoryRules, FsdpUnderAPipelineKeepsTheStageGathered) {
  // pp 2 on 4 devices: the stage holds 1 layer (36992) + the embedding (64000)
  // on stage 0; its 2 devices shard 16 B per parameter; gathered bf16 and the
  // unsharded fp32 gradients accumulated across microbatches.
  const auto hw = hardware("h100-sxm");
  auto r = request(tiny_shape(), 1024, 4);
  StageMemoryView v;
  v.stage = 0;
  v.stages = 2;
  v.layers = 1;
  v.params = 36992 + 64000;
  v.devices = 2;
  v.embedding = true;
  v.head = false;
  v.in_flight = 2;
  const auto it = items(training_memory(r, hw, Layout::Ring, 1, 1, 1, &v));
  EXPECT_DOUBLE_EQ(it.at("params_fp32_shard"), 4.0 * (36992 + 64000) / 2);
  EXPECT_DOUBLE_EQ(it.at("fsdp_gathered_params"), 2.0 * (36992 + 64000));
  EXPECT_DOUBLE_EQ(it.at("fsdp_accumulated_grads_fp32"), 4.0 * (36992 + 64000));
  EXPECT_EQ(it.count("fsdp_unsharded_grads"), 0u);
  EXPECT_EQ(it.count("logits_and_loss_fp32"), 0u);  // the loss is the last stage's
  EXPECT_DOUBLE_EQ(it.at("activations_layer_inputs"), 1 * 128.0 * 1024 * 2);
}

TEST(MemoryRules, InterleavedChunksInFlightAsMegatronsWarmup) {
  // Megatron: rank 0 warms up 2 (p - 1) + (V - 1) p chunk forwards, then one
  // more: V p + p - 1 chunks, each 1/V of the stage: p = 8, V = 8: 71/8.
  EXPECT_DOUBLE_EQ(in_flight_microbatches(8, 8, 128, 0), 71.0 / 8);
  // The last stage: (V - 1) p + 1 = 57 chunks.
  EXPECT_DOUBLE_EQ(in_flight_microbatches(8, 8, 128, 7), 57.0 / 8);
  // 1F1B: min(m, p - i).
  EXPECT_DOUBLE_EQ(in_flight_microbatches(8, 1, 128, 0), 8);
  EXPECT_DOUBLE_EQ(in_flight_microbatches(8, 1, 4, 0), 4);
}

TEST(MemoryRules, PipelineLayoutsSplitAsMegatronDoes) {
  auto r = request(find_model("--model", "llama3-405b"), 8192, 512);
  // 126 layers, pp 8 x V 8: balanced cannot give whole chunks; auto takes
  // embedding-loss: 128 units, 16 per stage, edges one layer short.
  const auto a = stage_split(r, 8, 8);
  EXPECT_EQ(a.layout, PipelineLayout::EmbeddingLoss);
  EXPECT_TRUE(a.rule.empty()) << a.rule;
  EXPECT_EQ(a.layers, (std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15}));
  r.pp_layout = PipelineLayout::Even;  // 126 over 64 chunks: refused
  EXPECT_FALSE(stage_split(r, 8, 8).rule.empty());
  EXPECT_EQ(stage_split(r, 2, 1).layers, (std::vector<int>{63, 63}));
  r.pp_layout = PipelineLayout::Auto;
  r.pp_first_layers = 14;  // Megatron's uneven edges: the rest even over the middle
  r.pp_last_layers = 28;
  const auto e = stage_split(r, 8, 2);
  EXPECT_TRUE(e.rule.empty()) << e.rule;
  EXPECT_EQ(e.layers, (std::vector<int>{14, 14, 14, 14, 14, 14, 14, 28}));
  EXPECT_EQ(e.text(), "first 14, last 28");
  r.pp_first_layers = 15;  // 83 do not split over 6 middle stages
  EXPECT_FALSE(stage_split(r, 8, 1).rule.empty());
}

TEST(MemoryRules, RuntimeTermsOnGpusNotOnTpus) {
  const auto gpu = items(
      training_memory(request(tiny_shape(), 1024, 4), hardware("h100-sxm"), Layout::Ring, 1, 1, 1));
  EXPECT_EQ(gpu.count("cuda_context"), 1u);
  EXPECT_EQ(gpu.count("driver_reserved"), 1u);
  // One communicator (the shard group of 4): 16 channels x 2 x 9633792 B.
  EXPECT_DOUBLE_EQ(gpu.at("nccl_buffers"), NcclConstants::per_communicator());
  EXPECT_DOUBLE_EQ(NcclConstants::per_communicator(), 16 * 2 * 9633792.0);
  auto r = request(tiny_shape(), 1024, 4);
  r.framework = Framework::JaxXla;
  r.tpu = true;
  const auto tpu = items(training_memory(r, hardware("tpu-v5p"), Layout::Ring, 1, 1, 1));
  for (const char* k : {"cuda_context", "driver_reserved", "nccl_buffers", "allocator_reserve"})
    EXPECT_EQ(tpu.count(k), 0u) << k;
}

TEST(MemoryRules, CapacitiesAsTheDevicesReportThem) {
  // nvidia-smi's totals in MiB, rocm-smi's and JAX's bytes.
  EXPECT_DOUBLE_EQ(hardware("h100-sxm").hbm_bytes, 81559.0 * 1024 * 1024);
  EXPECT_GE(hardware("h100-sxm").hbm_bytes / (1024.0 * 1024 * 1024), 79);
  EXPECT_DOUBLE_EQ(hardware("a100-80gb").hbm_bytes, 81920.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(hardware("h200").hbm_bytes, 143771.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(hardware("b200").hbm_bytes, 183359.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(hardware("gb200").hbm_bytes, 189471.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(hardware("mi300x").hbm_bytes, 206158430208.0);
  EXPECT_DOUBLE_EQ(hardware("tpu-v5e").hbm_bytes, 16909332480.0);
  EXPECT_DOUBLE_EQ(hardware("tpu-v4").hbm_bytes, 33014415360.0);
  EXPECT_TRUE(hardware("tpu-v5p").tpu);
}

using plan_testing::run_cli;

TEST(MemoryRules, NemosLlama405BLayoutIsAccepted) {
  // PP 8 x VP 8 of 126 layers: the embedding and the loss count as layers.
  const auto r = run_cli({"plan",        "--model", "llama3-405b", "--gpus",    "512",
                          "--tp",        "8",       "--pp",        "8",         "--pp-virtual",
                          "8",           "--cp",    "2",           "--context", "8K",
                          "--precision", "fp8",     "--framework", "megatron",  "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& c = j.at("configs").at(0);
  ASSERT_TRUE(c.at("feasible").get<bool>()) << c.at("reason");
  EXPECT_EQ(c.at("pp_layout"), "embedding-loss");
  EXPECT_EQ(c.at("stage_layers"), (std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15}));
}

TEST(MemoryRules, HardwareJsonReportsCapacitiesWithSources) {
  const auto r = run_cli({"hardware", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NE(j.at("units").at("hbm_bytes").get<std::string>().find("nvidia-smi"), std::string::npos);
  for (const auto& d : j.at("devices")) {
    EXPECT_FALSE(d.at("hbm_source").get<std::string>().empty()) << d.at("name");
    EXPECT_FALSE(d.at("hbm_reported_by").get<std::string>().empty()) << d.at("name");
    if (d.at("name") == "h100-sxm") {
      EXPECT_GE(d.at("hbm_gib").get<double>(), 79);
      EXPECT_EQ(d.at("hbm_reported_by"), "nvidia-smi");
    }
  }
}

TEST(MemoryRules, RefusalSaysByHowMuchAndWhatWouldFit) {
  // Llama 3 8B at 32K on 8 H100 with selective checkpointing and no CP.
  const auto r =
      run_cli({"plan", "--model", "llama3-8b", "--context", "32K", "--gpus", "8", "--tp", "1",
               "--pp", "1", "--cp", "1", "--activation-checkpointing", "selective", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& c = j.at("configs").at(0);
  ASSERT_FALSE(c.at("feasible").get<bool>());
  EXPECT_NE(c.at("reason").get<std::string>().find("over by"), std::string::npos);
  const auto hint = c.at("infeasible").at("hint").get<std::string>();
  EXPECT_NE(hint.find("--activation-checkpointing full ("), std::string::npos) << hint;
  EXPECT_NE(hint.find("--cp 2 ("), std::string::npos) << hint;
  // Nothing fits at all: the catalog's larger devices are named.
  const auto big = run_cli({"plan", "--model", "llama3-70b", "--context", "32K", "--gpus", "8",
                            "--tp", "8", "--pp", "1", "--activation-checkpointing", "selective"});
  EXPECT_NE(big.out.find("a device that holds it: "), std::string::npos) << big.out;
}

}  // namespace
}  // namespace ringsim
