// Framework profiles (models/plan/framework.hpp): Megatron's distributed
// optimizer bytes per parameter, JAX/XLA's usable HBM without the CUDA and
// allocator terms, its blockwise FFN and loss, and the longest context each
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

TEST(PlanFramework, PytorchFsdpIsTheOriginalRules) {
  const auto& p = framework_profile(Framework::PytorchFsdp);
  EXPECT_EQ(p.param_bytes + p.grad_bytes + p.optimizer_bytes, 16);
  EXPECT_EQ(p.fixed_overhead_bytes, PlanConstants::kFixedOverheadBytes);
  EXPECT_EQ(p.fragmentation, PlanConstants::kFragmentation);
  EXPECT_EQ(p.usable_hbm_fraction_gpu, 1);
  EXPECT_EQ(p.block_tokens, 0);
  EXPECT_EQ(parse_framework("--framework", "megatron"), Framework::Megatron);
  EXPECT_THROW(parse_framework("--framework", "deepspeed"), InputError);
}

TEST(PlanFramework, MegatronDistributedOptimizerIs6Plus12OverD) {
  const auto hw = hardware("h100-sxm");
  auto r = request(find_model("--model", "llama3-8b"), 131072, 64);
  r.framework = Framework::Megatron;
  const auto m = training_memory(r, hw, Layout::Zigzag, 8, 1, 1);
  const double N = static_cast<double>(total_params(r.shape));  // 8,030,261,248
  // tp 1, d = cp x dp = 64: params 2N, grads 4N (fp32), optimizer 12N / 64.
  EXPECT_DOUBLE_EQ(item(m, "params_bf16")->bytes, 2 * N);
  EXPECT_DOUBLE_EQ(item(m, "grads_fp32")->bytes, 4 * N);
  EXPECT_DOUBLE_EQ(item(m, "optimizer_fp32_master_m_v")->bytes, 12 * N / 64);
  const double per_param = (item(m, "params_bf16")->bytes + item(m, "grads_fp32")->bytes +
                            item(m, "optimizer_fp32_master_m_v")->bytes) /
                           N;
  EXPECT_DOUBLE_EQ(per_param, 6 + 12.0 / 64);  // 6.1875 B/param
  // Weights are not sharded over data parallel: no FSDP gather or unsharded-grad unit.
  EXPECT_EQ(item(m, "fsdp_gathered_params"), nullptr);
  EXPECT_EQ(item(m, "fsdp_unsharded_grads"), nullptr);
  EXPECT_EQ(item(m, "grads_bf16"), nullptr);
  // TP 2 halves each: d = 64 / 2 = 32, 2N/2 + 4N/2 + 12N/2/32.
  const auto m2 = training_memory(r, hw, Layout::Zigzag, 8, 2, 1);
  EXPECT_DOUBLE_EQ(item(m2, "params_bf16")->bytes, N);
  EXPECT_DOUBLE_EQ(item(m2, "optimizer_fp32_master_m_v")->bytes, 12 * N / 2 / 32);
  // Same fixed CUDA term and 5% fragmentation as PyTorch.
  EXPECT_DOUBLE_EQ(item(m, "framework_fixed")->bytes, 1.5 * 1024 * 1024 * 1024);
  ASSERT_NE(item(m, "allocator_fragmentation"), nullptr);
}

TEST(PlanFramework, JaxXlaUsableHbmAndNoFixedOverhead) {
  const auto a100 = hardware("a100-80gb");
  auto r = request(tiny_shape(), 1024, 4);
  EXPECT_DOUBLE_EQ(usable_hbm_bytes(r, a100), 80e9);  // pytorch-fsdp: all of it
  r.framework = Framework::JaxXla;
  // JAX preallocates 75% of a GPU's memory: 0.75 x 80e9 = 60e9.
  EXPECT_DOUBLE_EQ(usable_hbm_bytes(r, a100), 60e9);
  r.hbm_bytes = 100e9;  // --hbm: 75% of it
  EXPECT_DOUBLE_EQ(usable_hbm_bytes(r, a100), 75e9);
  r.hbm_bytes = 0;
  // A TPU: the whole HBM (tpu-v4: 32 GiB = 34,359,738,368 B).
  r.tpu = true;
  EXPECT_DOUBLE_EQ(usable_hbm_bytes(r, hardware("tpu-v4")), 34359738368.0);
  r.tpu = false;
  const auto m = training_memory(r, a100, Layout::Ring, 2, 1, 1);
  EXPECT_EQ(item(m, "framework_fixed"), nullptr);
  EXPECT_EQ(item(m, "allocator_fragmentation"), nullptr);
  EXPECT_EQ(m.overhead, 0);
  EXPECT_DOUBLE_EQ(m.total, m.persistent + std::max(m.loss_phase, m.backward_phase));
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
  EXPECT_DOUBLE_EQ(item(pt, "recomputed_layer_activations")->bytes, 1808.0 * 8192);
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
  // removes them (though it has only 60 GB); Megatron's unsharded params and
  // fp32 grads (6 B x 6.74B = 40 GB) leave less room than ZeRO-3's 13.5 GB.
  EXPECT_GT(jx.tokens, pt.tokens);
  EXPECT_LT(mg.tokens, pt.tokens);
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
  EXPECT_DOUBLE_EQ(j.at("hbm_bytes").get<double>(), 34359738368.0);  // all of a TPU's HBM
  EXPECT_GT(j.at("max_context").at("tokens").get<std::int64_t>(), 0);
  const auto& mem = j.at("configs").at(0).at("memory_breakdown");
  EXPECT_FALSE(mem.contains("framework_fixed"));
  EXPECT_FALSE(mem.contains("allocator_fragmentation"));
}

}  // namespace
}  // namespace ringsim
