// Training memory: every term of a tiny model counted by hand, the published
// Llama 3 8B parameter count, the HBM boundary, and orderings that must hold
// (checkpointing policies, chunked loss, more context-parallel devices).
#include <gtest/gtest.h>

#include <map>

#include "helpers.hpp"
#include "models/analytic/memory.hpp"
#include "models/core/profile.hpp"

namespace ringsim {
namespace {

using plan_testing::hardware;
using plan_testing::request;
using plan_testing::tiny_shape;

std::map<std::string, double> items(const PlanMemory& m) {
  std::map<std::string, double> out;
  for (const auto& i : m.items) out[i.name] = i.bytes;
  return out;
}

TEST(PlanParams, TinyShapeByHand) {
  const auto s = tiny_shape();
  // Wq,Wk,Wv 64*16*(4+2*2) = 8192; Wo 4*16*64 = 4096; MLP 3*64*128 = 24576; norms 2*64 = 128.
  EXPECT_EQ(layer_params(s), 36992u);
  EXPECT_EQ(embedding_params(s), 64000u);  // 1000 x 64
  // 2 layers + embedding + head + final norm: 73984 + 128000 + 64.
  EXPECT_EQ(total_params(s), 202048u);
}

TEST(PlanParams, Llama3_8BMatchesThePublishedCount) {
  // Meta's Llama 3 8B checkpoint holds 8,030,261,248 parameters.
  EXPECT_EQ(total_params(find_model("--model", "llama3-8b")), 8030261248u);
}

TEST(PlanActivations, BytesPerTokenByHand) {
  const auto s = tiny_shape();
  // None: 8D 512 + QKV 2*16*(4+4) 256 + O 2*4*16 128 + LSE 4*4 16 + 8F 1024.
  EXPECT_DOUBLE_EQ(activation_bytes_per_token(s, Checkpointing::None), 1936);
  // Selective: 2D + QKV + O + LSE + 2D + gate/up 4F = 128+256+144+128+512.
  EXPECT_DOUBLE_EQ(activation_bytes_per_token(s, Checkpointing::Selective), 1168);
  // Full: the layer input only, 2D.
  EXPECT_DOUBLE_EQ(activation_bytes_per_token(s, Checkpointing::Full), 128);
}

TEST(PlanMemory, EveryTermOfATinyConfigByHand) {
  const auto hw = hardware("h100-sxm");
  auto r = request(tiny_shape(), 1024, 4);  // cp 2 -> 512 tokens per device
  const auto m = training_memory(r, hw, Layout::Ring, 2, 1, 1);
  const auto it = items(m);
  EXPECT_DOUBLE_EQ(it.at("params_bf16"), 101024);  // 2 * 202048 / 4
  EXPECT_DOUBLE_EQ(it.at("grads_bf16"), 101024);
  EXPECT_DOUBLE_EQ(it.at("optimizer_fp32_master_m_v"), 606144);  // 12 * 202048 / 4
  EXPECT_DOUBLE_EQ(it.at("fsdp_gathered_params"), 256000);       // 2 units x 64000 x 2 B
  EXPECT_DOUBLE_EQ(it.at("fsdp_unsharded_grads"), 128000);
  EXPECT_DOUBLE_EQ(it.at("activations_layer_inputs"), 131072);      // 2 layers x 128 B x 512
  EXPECT_DOUBLE_EQ(it.at("logits_and_loss_fp32"), 6144000);         // 12 B x 512 x 1000
  EXPECT_DOUBLE_EQ(it.at("recomputed_layer_activations"), 925696);  // (1936 - 128) x 512
  EXPECT_DOUBLE_EQ(it.at("residual_grad"), 65536);                  // 2 * 64 * 512
  // Attention buffers come from models/analytic/memory.hpp for the same workload.
  PlanConfig c;
  c.cp = 2;
  c.block = 512;
  const auto w = attention_workload(r, c);
  EXPECT_EQ(w.pass, Pass::FwdBwd);
  const double attn = static_cast<double>(attention_memory(w).total());
  ASSERT_GT(attn, 6.0 * 128 * 512) << "the tiny case should be bound by the attention buffers";
  EXPECT_DOUBLE_EQ(it.at("attention_buffers"), attn);
  EXPECT_EQ(it.count("mlp_grads"), 0u);

  const double persistent = 2 * 101024 + 606144 + 256000 + 128000 + 131072;
  EXPECT_DOUBLE_EQ(m.persistent, persistent);
  EXPECT_DOUBLE_EQ(m.loss_phase, 6144000);
  EXPECT_DOUBLE_EQ(m.backward_phase, 925696 + 65536 + attn);
  EXPECT_EQ(m.peak_phase, "loss");
  const double tensors = persistent + 6144000;
  EXPECT_DOUBLE_EQ(m.overhead, 1.5 * 1024 * 1024 * 1024 + 0.05 * tensors);
  EXPECT_DOUBLE_EQ(m.total, tensors + m.overhead);
}

TEST(PlanMemory, TensorParallelShardsEveryPerTokenTerm) {
  const auto hw = hardware("h100-sxm");
  auto s = tiny_shape();
  auto r = request(s, 1024, 4);
  const auto one = items(training_memory(r, hw, Layout::Ring, 2, 1, 1));
  const auto two = items(training_memory(r, hw, Layout::Ring, 2, 2, 1));
  for (const char* k : {"activations_layer_inputs", "logits_and_loss_fp32",
                        "recomputed_layer_activations", "residual_grad", "fsdp_gathered_params"})
    EXPECT_DOUBLE_EQ(two.at(k), one.at(k) / 2) << k;
  // ZeRO-3 over G / tp ranks of a 1/tp slice: per device params stay N / G.
  EXPECT_DOUBLE_EQ(two.at("params_bf16"), one.at("params_bf16"));
}

TEST(PlanMemory, InfeasibleExactlyWhenTheTotalExceedsHbm) {
  const auto hw = hardware("h100-sxm");
  auto r = request(tiny_shape(), 1024, 4);
  RooflineModel cm(hw.effective_flops());
  const double total = training_memory(r, hw, Layout::Zigzag, 2, 1, 1).total;
  r.hbm_bytes = total + 1;
  auto fits = evaluate(r, hw, cm, Layout::Zigzag, 2, 1, 1);
  EXPECT_TRUE(fits.feasible) << fits.reason();
  EXPECT_TRUE(fits.reason().empty());
  EXPECT_GT(fits.time.step_time_s, 0);
  r.hbm_bytes = total - 1;
  auto over = evaluate(r, hw, cm, Layout::Zigzag, 2, 1, 1);
  EXPECT_FALSE(over.feasible);
  EXPECT_DOUBLE_EQ(over.overflow_bytes, 1);
  // The reason names the largest term (the 1.5 GiB allowance in this tiny case) and the overflow.
  EXPECT_NE(over.reason().find("over by 0.00 GiB"), std::string::npos) << over.reason();
  EXPECT_NE(over.reason().find("framework_fixed"), std::string::npos) << over.reason();
  // The same, as data: the kind, the term, the bytes, no hint for this term.
  EXPECT_EQ(over.why.kind, Infeasibility::Kind::Memory);
  EXPECT_EQ(over.why.term, "framework_fixed");
  EXPECT_DOUBLE_EQ(over.why.needed_bytes - over.why.hbm_bytes, 1);
  EXPECT_EQ(over.why.hint, "");
}

TEST(PlanMemory, LogitsOverflowIsNamed) {
  // Llama 3 8B at 1M tokens on 32 x 80 GB: cp 16 holds 65536 tokens per
  // device, whose fp32 logits alone (12 B x 65536 x 128256 = 100.9 GB) overflow.
  const auto hw = hardware("h100-sxm");
  auto r = request(find_model("--model", "llama3-8b"), 1 << 20, 32);
  RooflineModel cm(hw.effective_flops());
  const auto c = evaluate(r, hw, cm, Layout::Zigzag, 16, 1, 1);
  EXPECT_FALSE(c.feasible);
  EXPECT_NE(c.reason().find("logits_and_loss_fp32"), std::string::npos) << c.reason();
  EXPECT_NEAR(items(c.memory).at("logits_and_loss_fp32"), 12.0 * 65536 * 128256, 1);
  // The chunked-loss hint is a field of its own, never part of the reason's text.
  EXPECT_EQ(c.why.term, "logits_and_loss_fp32");
  EXPECT_NE(c.why.hint.find("--loss chunked"), std::string::npos);
  EXPECT_EQ(c.why.text().find("--loss chunked"), std::string::npos);
}

TEST(PlanMemory, MoreContextParallelDevicesNeverIncreaseActivationMemory) {
  const auto hw = hardware("h100-sxm");
  auto r = request(find_model("--model", "llama3-8b"), 256 * 1024, 64);
  for (auto ckpt : {Checkpointing::None, Checkpointing::Selective, Checkpointing::Full}) {
    r.checkpointing = ckpt;
    for (auto layout : {Layout::Ring, Layout::Zigzag, Layout::Striped}) {
      PlanMemory prev;
      for (std::int64_t cp = 1; cp <= 64; cp *= 2) {
        const auto m = training_memory(r, hw, layout, cp, 1, 1);
        if (cp > 1) {
          const auto now = items(m), before = items(prev);
          for (const auto& [name, bytes] : now) {
            const bool per_token = name.rfind("activations", 0) == 0 ||
                                   name == "attention_buffers" || name == "residual_grad" ||
                                   name == "recomputed_layer_activations";
            if (per_token && before.count(name)) {
              EXPECT_LE(bytes, before.at(name)) << name << " cp " << cp;
            }
          }
          EXPECT_LE(m.total, prev.total) << to_string(layout) << " cp " << cp;
        }
        prev = m;
      }
    }
  }
}

TEST(PlanMemory, CheckpointingAndLossOrderings) {
  const auto hw = hardware("a100-80gb");
  auto r = request(find_model("--model", "llama2-7b"), 64 * 1024, 8);
  auto total = [&](Checkpointing c, LossImpl l) {
    r.checkpointing = c;
    r.loss = l;
    return training_memory(r, hw, Layout::Zigzag, 4, 1, 1).total;
  };
  for (auto l : {LossImpl::Eager, LossImpl::Chunked}) {
    EXPECT_LT(total(Checkpointing::Full, l), total(Checkpointing::Selective, l));
    EXPECT_LT(total(Checkpointing::Selective, l), total(Checkpointing::None, l));
  }
  for (auto c : {Checkpointing::None, Checkpointing::Selective, Checkpointing::Full})
    EXPECT_LE(total(c, LossImpl::Chunked), total(c, LossImpl::Eager));
}

}  // namespace
}  // namespace ringsim
