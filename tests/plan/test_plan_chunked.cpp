// Chunked attention (Llama 4's iRoPE; docs/plan.md, "Chunked attention"):
// the catalog's Llama 4 models counted by hand, the chunks a layer attends
// within, the model FLOPs, and the step's attention: global layers over the
// whole sequence, the others causal inside their 8K chunk.
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "models/analytic/analytic.hpp"
#include "models/plan/moe.hpp"
#include "models/plan/plan.hpp"
#include "models/plan/step_time.hpp"
#include "proc/resolve.hpp"

namespace ringsim {
namespace {

using plan_testing::hardware;
using plan_testing::request;

// The H100's default attention implementation, as plan builds it.
std::shared_ptr<const Implementation> h100_implementation(const Hardware& hw) {
  proc::HardwareSpec hs;
  hs.gpu = "h100-sxm";
  return proc::make_implementation(hs, Catalog::embedded(), hw, DType::BF16);
}

TEST(ChunkedAttention, Llama4MatchesItsPublishedParameterCounts) {
  // Scout: a layer is attention 5120 x 128 x (40 + 16) + 40 x 128 x 5120
  // (62,914,560), 16 experts and one shared expert of 3 x 5120 x 8192
  // (125,829,120 each), the router 5120 x 16 and two norms; x 48, plus two
  // 202048 x 5120 embeddings and the final norm: 107.77B (Meta: 109B with
  // the vision encoder), 17.17B active (17B).
  const auto& s = find_model("--model", "llama4-scout");
  EXPECT_EQ(layer_params(s), 62914560u + 17 * 125829120u + 5120 * 16 + 2 * 5120);
  EXPECT_EQ(total_params(s), 48 * layer_params(s) + 2ull * 202048 * 5120 + 5120);
  EXPECT_EQ(active_params(s), 48ull * (62914560 + 2 * 125829120 + 5120 * 16 + 2 * 5120) +
                                  2ull * 202048 * 5120 + 5120);
  // Maverick: 24 MoE layers of 128 experts and 24 dense of 16384: 400B, 17B active.
  const auto& m = find_model("--model", "llama4-maverick");
  EXPECT_NEAR(total_params(m) / 1e9, 400, 2);
  EXPECT_NEAR(active_params(m) / 1e9, 17, 0.5);
  EXPECT_EQ(global_attention_layers(s), 12);  // layers 4, 8, ..., 48
  EXPECT_EQ(chunked_attention_layers(s), 36);
}

TEST(ChunkedAttention, ChunksAndModelFlopsByHand) {
  const auto& s = find_model("--model", "llama4-scout");
  EXPECT_TRUE(attention_chunks(s, 8192).empty());  // one chunk: every layer global
  EXPECT_EQ(attention_chunks(s, 20000), (std::vector<std::int64_t>{8192, 8192, 3616}));
  EXPECT_EQ(attention_chunks(s, 131072).size(), 16u);
  EXPECT_TRUE(attention_chunks(find_model("--model", "llama3-8b"), 131072).empty());
  // 6 x (active - the input embedding) + 12 H d x (12 global layers x 128K +
  // 36 chunked x 8K), halved by the causal mask.
  const double n = static_cast<double>(active_params(s)) - 202048.0 * 5120;
  EXPECT_DOUBLE_EQ(model_flops_per_token(s, 131072, true),
                   6 * n + 12.0 * 40 * 128 * (12.0 * 131072 + 36.0 * 8192) / 2);
  // Within one chunk the chunked layers see the whole sequence.
  EXPECT_DOUBLE_EQ(model_flops_per_token(s, 4096, true), 6 * n + 12.0 * 40 * 128 * 48 * 4096 / 2);
}

// The step's attention on one device (cp 1): the 12 global layers as one
// 128K causal call each, the 36 chunked ones as 16 causal 8K documents, which
// is what the same analysis charges for the documents by itself.
TEST(ChunkedAttention, StepChargesGlobalAndChunkedLayersApart) {
  const auto hw = hardware("h100-sxm");
  const auto cm = h100_implementation(hw);
  auto chunked = request(find_model("--model", "llama4-scout"), 131072, 8);
  auto global = chunked;
  global.shape.attention_chunk = 0;
  global.shape.global_every = 0;
  StepShape sh;
  sh.block = 131072;
  const auto tc = step_time(chunked, hw, *cm, sh, std::nullopt);
  const auto tg = step_time(global, hw, *cm, sh, std::nullopt);
  auto w = attention_workload(chunked, Layout::Ring, 1, 1, 0);
  w.layers = 1;
  const double one_global = analyze_time(w, hw, *cm);
  w.documents = attention_chunks(chunked.shape, 131072);
  const double one_chunked = analyze_time(w, hw, *cm);
  EXPECT_NEAR(tg.attention_s, 48 * one_global, 48 * one_global * 1e-9);
  EXPECT_NEAR(tc.attention_s, 12 * one_global + 36 * one_chunked, tc.attention_s * 1e-9);
  // A chunked layer does 1/16 of a global one's causal pairs (plus the
  // diagonals), so the chunked model's attention is near 12/48 + 36/48/16.
  EXPECT_LT(tc.attention_s, tg.attention_s * (12.0 / 48 + 36.0 / 48 / 16) * 1.2);
  EXPECT_GT(tc.attention_s, tg.attention_s * 12.0 / 48);
  // The rest of the step is the same.
  EXPECT_DOUBLE_EQ(tc.other_compute_s, tg.other_compute_s);
}

// The search shares one attention time among the configs of one shape
// (AttentionMemoScope): every config it returns has the step time that the
// same config evaluated alone, outside any search, has.
TEST(ChunkedAttention, TheSearchsSharedAttentionTimesAreEachConfigsOwn) {
  const auto hw = hardware("h100-sxm");
  const auto cm = h100_implementation(hw);
  auto r = request(find_model("--model", "llama4-scout"), 131072, 64);
  r.framework = Framework::Megatron;
  r.memory_check = false;
  const auto configs = search(r, hw, *cm);
  int checked = 0;
  for (const auto& c : configs) {
    if (!c.evaluated || checked >= 40) continue;
    auto q = r;
    q.ep = c.ep;
    q.dp_replicate = c.dp_replicate;
    const auto alone = evaluate(q, hw, *cm, c.layout, c.cp, c.tp, c.micro_batch, std::nullopt,
                                false, {c.pp, c.pp_virtual, c.pp_schedule});
    EXPECT_EQ(alone.time.attention_s, c.time.attention_s) << c.label();
    EXPECT_EQ(alone.time.step_time_s, c.time.step_time_s) << c.label();
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

}  // namespace
}  // namespace ringsim
