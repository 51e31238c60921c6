// Precision (models/plan/precision.hpp): FP8 projections and MLP at the
// device's FP8 peak x FP8 GEMM efficiency, the output head in bf16, the FP8
// casts by HBM bandwidth, FP8 all-gathers, FP8 memory terms, fp32 attention,
// and the refusals. Every expected number is counted by hand below.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "models/core/catalog.hpp"
#include "models/core/errors.hpp"
#include "models/core/profile.hpp"
#include "models/plan/activations.hpp"

namespace ringsim {
namespace {

using plan_testing::hardware;
using plan_testing::request;
using plan_testing::tiny_shape;

// Llama 3 8B at 128K on 64 H100, zigzag cp 8, tp 1, dp 8: 16,384 tokens per device.
PlanRequest llama8b_128k(Precision p) {
  auto r = request(find_model("--model", "llama3-8b"), 131072, 64);
  r.precision = p;
  const auto& dev = Catalog::embedded().device("h100-sxm");
  r.fp8_flops = dev.peak_fp8;
  r.fp8_gemm_efficiency = dev.fp8_gemm_efficiency;
  return r;
}

PlanConfig eval(const PlanRequest& r, const Hardware& hw, std::int64_t cp) {
  RooflineModel cm(hw.effective_flops());
  return evaluate(r, hw, cm, Layout::Zigzag, cp, 1, 1);
}

TEST(PlanPrecision, CatalogFp8PeaksAndEfficiency) {
  const auto& cat = Catalog::embedded();
  // H100/H200 datasheets: 3,958 TF FP8 with sparsity = 1,979 dense.
  EXPECT_DOUBLE_EQ(cat.device("h100-sxm").peak_fp8, 1979e12);
  EXPECT_DOUBLE_EQ(cat.device("h200").peak_fp8, 1979e12);
  // stas00/ml-engineering's MAMF table, FP8 (torch._scaled_mm): H100 SXM
  // 1402.6 of 1,979 TF -> 0.709; H200 1453.4 -> 0.734; B200 3432.5 of 4,500.
  EXPECT_DOUBLE_EQ(cat.device("h100-sxm").fp8_gemm_efficiency, 0.709);
  EXPECT_DOUBLE_EQ(cat.device("h200").fp8_gemm_efficiency, 0.734);
  EXPECT_DOUBLE_EQ(cat.device("b200").fp8_gemm_efficiency, 0.763);
  EXPECT_DOUBLE_EQ(cat.device("b200").peak_fp8, 4500e12);
  EXPECT_DOUBLE_EQ(cat.device("mi300x").peak_fp8, 2614.9e12);
  for (const char* none : {"a100-80gb", "tpu-v3", "tpu-v4", "tpu-v5e", "tpu-v5p"})
    EXPECT_EQ(cat.device(none).peak_fp8, 0) << none;
}

TEST(PlanPrecision, Fp8GemmTimeIsFlopsOverFp8PeakTimesEfficiency) {
  // Without the tiles' fill (models/kernel/gemm.hpp), which
  // GemmByShape.ATileFillCostsShortInnerDimensions checks by hand.
  auto hw = hardware("h100-sxm");
  hw.gemm_fill_bf16 = hw.gemm_fill_fp8 = GemmFill{};
  const auto bf = eval(llama8b_128k(Precision::BF16), hw, 8);
  const auto f8 = eval(llama8b_128k(Precision::FP8), hw, 8);
  ASSERT_TRUE(bf.feasible) << bf.reason();
  ASSERT_TRUE(f8.feasible) << f8.reason();
  // Per token forward: QKV 2 x 4096 x (32 + 2 x 8) x 128 = 50,331,648; Wo
  // 2 x 4096 x 4096 = 33,554,432; SwiGLU 6 x 4096 x 14336 = 352,321,536;
  // total 436,207,616. Full checkpointing: fwd + 2x bwd + fwd again = 4x.
  // x 16,384 tokens x 32 layers = 914,793,674,309,632 FLOPs per step.
  const double flops = 4.0 * 436207616.0 * 16384 * 32;
  EXPECT_DOUBLE_EQ(flops, 914793674309632.0);
  // FP8: 1979e12 x 0.709 x 0.9185 (its sustained share at 700 W, catalog
  // gemm_sustained) = 1.289e15 FLOP/s -> 0.709826 s; bf16: 989e12 x 0.803 x
  // 0.8921 -> 1.291213 s. GEMMs by shape (models/kernel/gemm.hpp): the tile
  // and wave quantisation of these shapes adds 0.6%, no more than 1%.
  const double f8_rate = 1979e12 * 0.709 * 0.9185, bf_rate = 989e12 * 0.803 * 0.8921;
  EXPECT_GE(f8.time.other_compute_s, flops / f8_rate);
  EXPECT_LE(f8.time.other_compute_s, 1.01 * flops / f8_rate);
  EXPECT_GE(bf.time.other_compute_s, flops / bf_rate);
  EXPECT_LE(bf.time.other_compute_s, 1.01 * flops / bf_rate);
  // The output head stays bf16: the same seconds either way.
  EXPECT_DOUBLE_EQ(f8.time.head_s, bf.time.head_s);
  // bf16 charges no casts; FP8 makes the step shorter here.
  EXPECT_EQ(bf.time.fp8_cast_s, 0);
  EXPECT_LT(f8.time.step_time_s, bf.time.step_time_s);
}

TEST(PlanPrecision, CastOverheadBytesByHand) {
  const auto hw = hardware("h100-sxm");
  const auto r = llama8b_128k(Precision::FP8);
  // Elements per token per layer, forward: wq, wk, wv 3D + wo Hd + w1, w3 2D
  // + w2 F = 5 x 4096 + 4096 + 14336 = 38,912.
  EXPECT_DOUBLE_EQ(fp8_cast_elements_fwd(r), 38912);
  // Megatron runs Q/K/V as one GEMM and gate/up as one: one cast each, D
  // + D + Hd + F = 26,624; its backward casts the same output gradients and
  // reuses the saved FP8 inputs (Transformer Engine): 43,008.
  auto te = r;
  te.framework = Framework::Megatron;
  EXPECT_DOUBLE_EQ(fp8_cast_elements_fwd(te), 26624);
  EXPECT_DOUBLE_EQ(fp8_cast_elements_bwd(te), 43008);
  // Backward (torchao): output grads Hd + 2 kvh d + 2D + 2F = 4096 + 2048 +
  // 8192 + 28672 = 43,008, plus the inputs recast (38,912) = 81,920.
  EXPECT_DOUBLE_EQ(fp8_cast_elements_bwd(r), 81920);
  // Linear params per layer: 218,112,000 - two norms (8,192) = 218,103,808.
  EXPECT_DOUBLE_EQ(fp8_linear_params(r.shape), 218103808);
  // Forward, 16,384 tokens, tp 1, FSDP shard group 64: (38,912 x 16,384 +
  // 218,103,808 / 64) x 3 B = (637,534,208 + 3,407,872) x 3 = 1,922,826,240 B,
  // at the nominal 3.35 TB/s.
  const double hbm = 3.35e12;
  EXPECT_NEAR(fp8_cast_seconds(r, hw, 16384, 1, 64, false), 1922826240.0 / hbm, 1e-15);
  // Backward: 81,920 x 16,384 x 3 B = 4,026,531,840 B.
  EXPECT_NEAR(fp8_cast_seconds(r, hw, 16384, 1, 64, true), 4026531840.0 / hbm, 1e-15);
  // Step: 32 layers x (forward + backward + the recomputed forward).
  const auto c = eval(r, hw, 8);
  EXPECT_NEAR(c.time.fp8_cast_s, 32 * (2 * 1922826240.0 + 4026531840.0) / hbm, 1e-12);
  // bf16: nothing.
  EXPECT_EQ(fp8_cast_seconds(llama8b_128k(Precision::BF16), hw, 16384, 1, 64, false), 0);
}

TEST(PlanPrecision, TensorwiseCurrentScalingReadsEveryCastInputTwice) {
  const auto hw = hardware("h100-sxm");
  auto r = llama8b_128k(Precision::FP8);
  r.framework = Framework::Megatron;
  // Delayed scaling (Megatron-LM's default): read bf16 2 B + write fp8 1 B.
  EXPECT_EQ(fp8_cast_bytes_per_element(r), 3);
  const double delayed = fp8_cast_seconds(r, hw, 16384, 1, 64, false);
  // Tensorwise (Transformer Engine's Float8CurrentScaling): the amax kernel
  // reads the input first, 2 B more, so every cast costs 5/3 of delayed's.
  r.fp8_recipe = Fp8Recipe::Tensorwise;
  EXPECT_EQ(fp8_cast_bytes_per_element(r), 5);
  EXPECT_NEAR(fp8_cast_seconds(r, hw, 16384, 1, 64, false), delayed * 5 / 3, 1e-15);
  // The step carries it, and nothing else moves: the step grows by exactly
  // the casts' difference.
  const auto cd = [&] {
    auto q = r;
    q.fp8_recipe = Fp8Recipe::Delayed;
    return eval(q, hw, 8);
  }();
  const auto ct = eval(r, hw, 8);
  EXPECT_NEAR(ct.time.fp8_cast_s, cd.time.fp8_cast_s * 5 / 3, 1e-12);
  EXPECT_GT(ct.time.step_time_s, cd.time.step_time_s);
  // A copy of the request under another framework (plan's "best other
  // framework") keeps that framework's own scaling: one read.
  auto other = r;
  other.framework = Framework::JaxXla;
  EXPECT_FALSE(fp8_current_scaling(other));
  EXPECT_EQ(fp8_cast_bytes_per_element(other), 3);
}

TEST(PlanPrecision, Fp8AllGatherHalvesTheLinearWeightsOnly) {
  auto r = llama8b_128k(Precision::FP8);
  // (218,103,808 x 1 B + 8,192 x 2 B) / (218,112,000 x 2 B) = 218,120,192 / 436,224,000.
  EXPECT_DOUBLE_EQ(fsdp_allgather_fraction(r), 218120192.0 / 436224000.0);
  r.framework = Framework::Megatron;  // FP8 weights (--fp8-param-gather): gathered as FP8 too
  EXPECT_DOUBLE_EQ(fsdp_allgather_fraction(r), 218120192.0 / 436224000.0);
  r.fp8_weights = 0;  // bf16 weights: Megatron FSDP gathers bf16
  EXPECT_EQ(fsdp_allgather_fraction(r), 1);
  EXPECT_EQ(fsdp_allgather_fraction(llama8b_128k(Precision::BF16)), 1);
}

const PlanMemoryItem* item(const PlanMemory& m, const std::string& name) {
  for (const auto& i : m.items)
    if (i.name == name) return &i;
  return nullptr;
}

TEST(PlanPrecision, Fp8MemoryTermsByHand) {
  const auto hw = hardware("h100-sxm");
  auto s = tiny_shape();
  s.vocab = 10;  // so a layer (36,992 params) is the largest FSDP unit, not the embedding (640)
  auto r = request(s, 1024, 4);
  const auto bf = training_memory(r, hw, Layout::Ring, 2, 1, 1);
  r.precision = Precision::FP8;
  r.fp8_flops = 1979e12;
  r.fp8_gemm_efficiency = 0.709;
  const auto f8 = training_memory(r, hw, Layout::Ring, 2, 1, 1);
  // Layer params: 64 x 16 x 8 + 64 x 64 + 3 x 64 x 128 + 128 = 36,992 (36,864 in linears).
  // bf16: 2 units x 36,992 x 2 B = 147,968; FP8 all-gather: 2 x (36,864 x 1 + 128 x 2) = 74,240;
  // both + the root unit (embedding, head, norm: 2 x 640 + 64) x 2 B = 2,688, kept bf16.
  EXPECT_DOUBLE_EQ(item(bf, "fsdp_gathered_params")->bytes, 147968 + 2688);
  EXPECT_DOUBLE_EQ(item(f8, "fsdp_gathered_params")->bytes, 74240 + 2688);
  // Scales: 2 layers x 7 linears x 3 tensors x 4 B (dynamic: one fp32 scale) = 168.
  ASSERT_NE(item(f8, "fp8_scales"), nullptr);
  EXPECT_DOUBLE_EQ(item(f8, "fp8_scales")->bytes, 168);
  EXPECT_EQ(item(bf, "fp8_scales"), nullptr);
  // Megatron (Transformer Engine, delayed scaling, amax history 1): scale +
  // scale_inv + 1 amax = 12 B per tensor: 2 x 7 x 3 x 12 = 504; FP8 weight
  // and transpose: 2 layers x 36,864 x 2 B / tp 1 = 147,456.
  r.framework = Framework::Megatron;
  r.fp8_weights = 0;  // bf16 weights: Transformer Engine caches FP8 copies
  const auto te = training_memory(r, hw, Layout::Ring, 2, 1, 1);
  EXPECT_DOUBLE_EQ(item(te, "fp8_scales")->bytes, 504);
  EXPECT_DOUBLE_EQ(item(te, "fp8_weight_copies")->bytes, 147456);
  EXPECT_EQ(item(f8, "fp8_weight_copies"), nullptr);  // torchao recasts, keeps none
}

TEST(PlanPrecision, TransformerEngineSavesFp8Inputs) {
  const auto hw = hardware("h100-sxm");
  auto r = request(tiny_shape(), 1024, 4);
  r.checkpointing = Checkpointing::None;
  r.framework = Framework::Megatron;
  const auto bf = training_memory(r, hw, Layout::Ring, 2, 1, 1);
  r.precision = Precision::FP8;
  const auto f8 = training_memory(r, hw, Layout::Ring, 2, 1, 1);
  // Per token per layer: + Hd (FP8 copy of O) - D - D (norm outputs in FP8)
  // - F (SwiGLU product in FP8) = 64 - 128 - 128 = -192 B (1,688 -> 1,496);
  // 2 layers x 512 tokens (cp 2) x -192 = -196,608 B.
  auto bf16 = r;
  bf16.precision = Precision::BF16;
  EXPECT_DOUBLE_EQ(saved_bytes_per_token(r) - saved_bytes_per_token(bf16), -192);
  EXPECT_DOUBLE_EQ(item(f8, "activations_saved")->bytes - item(bf, "activations_saved")->bytes,
                   -196608);
  r.checkpointing = bf16.checkpointing = Checkpointing::Full;  // the layer input alone, in bf16
  EXPECT_DOUBLE_EQ(saved_bytes_per_token(r), saved_bytes_per_token(bf16));
}

TEST(PlanPrecision, Fp32AttentionKeepsQkvoInFp32) {
  auto r = request(tiny_shape(), 1024, 4);
  auto bf16 = r;
  r.attention_dtype = DType::FP32;
  auto more = [&](Checkpointing c) {
    r.checkpointing = bf16.checkpointing = c;
    return saved_bytes_per_token(r) - saved_bytes_per_token(bf16);
  };
  // Nothing recomputed: Q, K, V and O twice their bf16 bytes, 2 d (H + 2 kvh)
  // + 2 H d = 256 + 128 = 384 more B/token.
  EXPECT_DOUBLE_EQ(more(Checkpointing::None), 384);
  // TorchTitan's SAC keeps O and half the projections: 128 + 256 / 2 = 256.
  EXPECT_DOUBLE_EQ(more(Checkpointing::Selective), 256);
  EXPECT_DOUBLE_EQ(more(Checkpointing::Full), 0);
  // The attention workload runs fp32: its buffers are counted at 4 B.
  EXPECT_EQ(attention_workload(r, Layout::Ring, 2, 1, 0).dtype, DType::FP32);
}

TEST(PlanPrecision, AttentionFp8IsRefusedWithTheReason) {
  try {
    parse_attention_precision("--attention-precision", "fp8");
    FAIL() << "fp8 attention accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--attention-precision: fp8 attention is not modelled (no kernel in the catalog has "
              "an FP8 curve); choose bf16 or fp32");
  }
  EXPECT_EQ(parse_attention_precision("--attention-precision", "fp32"), DType::FP32);
  EXPECT_THROW(parse_precision("--precision", "fp4"), InputError);
}

TEST(PlanPrecision, JaxFp8RunsOnGpusAndIsRefusedOnTpus) {
  // Flax's Fp8DotGeneralOp on an H100: the same plan in FP8 is faster than in
  // bf16; a TPU v5p has no FP8 unit: one line naming it, exit 2.
  auto step = [](const char* precision) {
    const auto r = plan_testing::run_cli({"plan", "--model", "llama3-70b", "--context", "8K",
                                          "--gpus", "64", "--framework", "jax-xla", "--tp", "1",
                                          "--cp", "1", "--precision", precision, "--json"});
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out).at("configs").at(0).at("step_time_s").get<double>();
  };
  EXPECT_LT(step("fp8"), step("bf16"));
  const auto tpu =
      plan_testing::run_cli({"plan", "--model", "llama3-8b", "--context", "32K", "--gpus", "16",
                             "--framework", "jax-xla", "--gpu", "tpu-v5p", "--precision", "fp8"});
  EXPECT_EQ(tpu.code, 2);
  EXPECT_NE(tpu.err.find("tpu-v5p has none"), std::string::npos) << tpu.err;
}

}  // namespace
}  // namespace ringsim
