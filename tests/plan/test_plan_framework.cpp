// Framework profiles (models/plan/framework.hpp): FSDP2's and Megatron's
// distributed optimizer bytes per parameter, JAX/XLA's usable memory and
// runtime terms, its blockwise FFN and loss, and the longest context each
// gives. Expected numbers are counted by hand below.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "helpers.hpp"
#include "models/core/errors.hpp"

namespace ringsim {
namespace {

using plan_testing::hardware;
using plan_testing::request;
using plan_testing::tiny_shape;

const PlanMemoryItem* item(const PlanMemory& m, const std::string& name) {
  for (const auto& i : m.items)
    if (i.name == name) return &i;
  return nullptr;
}

TEST(PlanFramework, PytorchFsdpIsTorchTitansFsdp2) {
  const auto& p = framework_profile(Framework::PytorchFsdp);
  // fp32 sharded params 4 + fp32 grads 4 + Adam m, v 8.
  EXPECT_EQ(p.param_bytes, 4);
  EXPECT_EQ(p.grad_bytes, 4);
  EXPECT_EQ(p.optimizer_bytes, 8);
  EXPECT_TRUE(p.runtime_terms);
  EXPECT_EQ(p.allocator_reserve, PlanConstants::kFragmentation);
  EXPECT_TRUE(p.fsdp_gathered_with_pp);
  EXPECT_EQ(p.usable_hbm_fraction_gpu, 1);
  EXPECT_EQ(p.block_tokens, 0);
  EXPECT_EQ(parse_framework("--framework", "megatron"), Framework::Megatron);
  EXPECT_THROW(parse_framework("--framework", "deepspeed"), InputError);
}

TEST(PlanFramework, MegatronDistributedOptimizerIs4Plus12OverD) {
  const auto hw = hardware("h100-sxm");
  auto r = request(find_model("--model", "llama3-8b"), 131072, 64);
  r.framework = Framework::Megatron;
  const auto m = training_memory(r, hw, Layout::Zigzag, 8, 1, 1);
  const double N = static_cast<double>(total_params(r.shape));  // 8,030,261,248
  // tp 1, d = cp x dp = 64: params 2N, grads 2N (bf16), optimizer 12N / 64.
  EXPECT_DOUBLE_EQ(item(m, "params_bf16")->bytes, 2 * N);
  EXPECT_DOUBLE_EQ(item(m, "grads_bf16")->bytes, 2 * N);
  EXPECT_DOUBLE_EQ(item(m, "optimizer_fp32_master_m_v")->bytes, 12 * N / 64);
  const double per_param = (item(m, "params_bf16")->bytes + item(m, "grads_bf16")->bytes +
                            item(m, "optimizer_fp32_master_m_v")->bytes) /
                           N;
  EXPECT_DOUBLE_EQ(per_param, 4 + 12.0 / 64);  // 4.1875 B/param
  // Weights are not sharded over data parallel: no FSDP gather or unsharded-grad unit.
  EXPECT_EQ(item(m, "fsdp_gathered_params"), nullptr);
  EXPECT_EQ(item(m, "fsdp_unsharded_grads"), nullptr);
  EXPECT_EQ(item(m, "grads_fp32"), nullptr);
  // TP 2 halves each: d = 64 / 2 = 32, 2N/2 + 2N/2 + 12N/2/32.
  const auto m2 = training_memory(r, hw, Layout::Zigzag, 8, 2, 1);
  EXPECT_DOUBLE_EQ(item(m2, "params_bf16")->bytes, N);
  EXPECT_DOUBLE_EQ(item(m2, "optimizer_fp32_master_m_v")->bytes, 12 * N / 2 / 32);
  // The runtime and the allocator as under PyTorch, itemised.
  EXPECT_DOUBLE_EQ(item(m, "cuda_context")->bytes, 400e6);
  ASSERT_NE(item(m, "allocator_reserve"), nullptr);
  EXPECT_EQ(item(m, "allocator_reserve")->pool, "allocator");
  EXPECT_EQ(item(m, "nccl_buffers")->pool, "runtime");
}

TEST(PlanFramework, JaxXlaUsesTheWholeGpuAndNoAllocatorReserve) {
  const auto a100 = hardware("a100-80gb");
  auto r = request(tiny_shape(), 1024, 4);
  EXPECT_DOUBLE_EQ(usable_hbm_bytes(r, a100), 81920.0 * 1024 * 1024);  // nvidia-smi's total
  r.framework = Framework::JaxXla;
  // JAX's "0.75+" policy: XLA's pool may grow to all of it.
  EXPECT_DOUBLE_EQ(usable_hbm_bytes(r, a100), 81920.0 * 1024 * 1024);
  r.hbm_bytes = 100e9;  // --hbm
  EXPECT_DOUBLE_EQ(usable_hbm_bytes(r, a100), 100e9);
  r.hbm_bytes = 0;
  // A TPU: JAX's bytes_limit (tpu-v4: 33,014,415,360 B).
  r.tpu = true;
  EXPECT_DOUBLE_EQ(usable_hbm_bytes(r, hardware("tpu-v4")), 33014415360.0);
  r.tpu = false;
  const auto m = training_memory(r, a100, Layout::Ring, 2, 1, 1);
  EXPECT_EQ(item(m, "allocator_reserve"), nullptr);
  EXPECT_EQ(item(m, "blas_workspace"), nullptr);  // XLA's buffers
  ASSERT_NE(item(m, "cuda_context"), nullptr);
  EXPECT_DOUBLE_EQ(m.reserved, m.allocated);
  EXPECT_DOUBLE_EQ(m.total, m.allocated + item(m, "cuda_context")->bytes +
                                item(m, "driver_reserved")->bytes + item(m, "nccl_buffers")->bytes);
}

TEST(PlanFramework, JaxXlaBlockwiseFfnAndLoss) {
  const auto hw = hardware("a100-80gb");
  // 8,192 tokens on a device (context 16,384, cp 2): the loss and the FFN hold 2,048 at a time.
  auto r = request(tiny_shape(), 16384, 4);
  const auto pt = training_memory(r, hw, Layout::Ring, 2, 1, 1);
  r.framework = Framework::JaxXla;
  const auto jx = training_memory(r, hw, Layout::Ring, 2, 1, 1);
  // Logits: 12 B x 2,048 x vocab 1,000 = 24,576,000 (eager: 12 x 8,192 x 1,000 = 98,304,000).
  EXPECT_DOUBLE_EQ(item(jx, "logits_and_loss_fp32")->bytes, 24576000);
  EXPECT_DOUBLE_EQ(item(pt, "logits_and_loss_fp32")->bytes, 98304000);
  // Recomputed layer under full checkpointing: none (8D + 2d(H + 2kvh) + 2Hd
  // + 4H + 8F = 512 + 256 + 128 + 16 + 1024 = 1,936) - 2D (128) = 1,808
  // B/token; its FFN part 8F = 1,024 is held for 2,048 tokens only:
  // 784 x 8,192 + 1,024 x 2,048 = 6,422,528 + 2,097,152 = 8,519,680.
  // Eager PyTorch also keeps the eager RMSNorm's fp32 inputs (8D = 512).
  EXPECT_DOUBLE_EQ(item(pt, "recomputed_layer_activations")->bytes, 2320.0 * 8192);
  EXPECT_DOUBLE_EQ(item(jx, "recomputed_layer_activations")->bytes, 8519680);
  EXPECT_STREQ(remat_policy_name(static_cast<int>(Checkpointing::Full)), "nothing_saveable");
  EXPECT_STREQ(remat_policy_name(static_cast<int>(Checkpointing::Selective)), "dots_saveable");
  EXPECT_STREQ(remat_policy_name(static_cast<int>(Checkpointing::None)), "everything_saveable");
}

TEST(PlanFramework, MaxContextFollowsTheFrameworkRules) {
  // The done-when case: Llama 2 7B on 8 A100 80GB.
  const auto hw = hardware("a100-80gb");
  auto r = request(find_model("--model", "llama2-7b"), 1, 8);
  const auto pt = max_context(r, hw, std::int64_t{1} << 30);
  r.framework = Framework::JaxXla;
  const auto jx = max_context(r, hw, std::int64_t{1} << 30);
  r.framework = Framework::Megatron;
  const auto mg = max_context(r, hw, std::int64_t{1} << 30);
  // pytorch-fsdp is bound by the eager fp32 logits; jax-xla's blockwise loss
  // removes them; Megatron's in-place vocab-parallel loss (6 B a logit) too.
  EXPECT_GT(jx.tokens, pt.tokens);
  EXPECT_GT(mg.tokens, 0);
  // Each answer fits its own rules and one step more does not.
  for (auto f : {Framework::PytorchFsdp, Framework::JaxXla, Framework::Megatron}) {
    r.framework = f;
    const auto mc = max_context(r, hw, std::int64_t{1} << 30);
    const auto& best = mc.by_config.front();
    auto at = r;
    at.context = best.max_context;
    EXPECT_LE(training_memory(at, hw, best.layout, best.cp, best.tp, 1).total,
              usable_hbm_bytes(r, hw))
        << to_string(f);
    at.context = best.max_context + best.granularity;
    EXPECT_GT(training_memory(at, hw, best.layout, best.cp, best.tp, 1).total,
              usable_hbm_bytes(r, hw))
        << to_string(f);
  }
}

using plan_testing::run_cli;

TEST(PlanFramework, CliFp8OnA100IsRefusedNamingTheDevice) {
  const auto r = run_cli({"plan", "--model", "llama3-8b", "--context", "128K", "--gpus", "16",
                          "--gpu", "a100-80gb", "--precision", "fp8"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "ringsim: error: --precision: fp8 needs FP8 tensor cores; a100-80gb has none (catalog "
            "peak_flops.fp8 = 0); use bf16\n");
}

TEST(PlanFramework, CliJaxXlaOnTpuChargesNoCudaTerms) {
  const auto r = run_cli({"plan", "--model", "llama2-7b", "--gpus", "32", "--gpu", "tpu-v4",
                          "--framework", "jax-xla", "--max-context", "--json", "--top", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("framework"), "jax-xla");
  EXPECT_DOUBLE_EQ(j.at("hbm_bytes").get<double>(), 33014415360.0);  // JAX's bytes_limit
  EXPECT_GT(j.at("max_context").at("tokens").get<std::int64_t>(), 0);
  const auto& mem = j.at("configs").at(0).at("memory_breakdown");
  for (const char* k : {"cuda_context", "nccl_buffers", "driver_reserved", "allocator_reserve"})
    EXPECT_FALSE(mem.contains(k)) << k;
}

}  // namespace
}  // namespace ringsim
