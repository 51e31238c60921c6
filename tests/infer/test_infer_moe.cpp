// A mixture-of-experts MLP in inference (models/infer/moe.hpp), on cases
// worked out by hand: a tiny MoE layer (D 64, 4 experts of width 32, top 2,
// gated) on a device whose GEMMs are bound by reading their operands at
// 1 GB/s (the FLOP rate is out of reach), so every time is bytes / 1e9.
#include <gtest/gtest.h>

#include "models/core/errors.hpp"
#include "models/infer/infer.hpp"
#include "models/infer/moe.hpp"
#include "models/kernel/gemm.hpp"
#include "models/plan/basics.hpp"
#include "models/plan/moe.hpp"
#include "tests/infer/helpers.hpp"

namespace ringsim {
namespace {

using namespace infer_testing;

ModelShape tiny_moe() {
  auto s = tiny();
  s.name = "tiny-moe";
  s.experts = 4;
  s.experts_per_token = 2;
  s.expert_ffn = 32;
  s.ffn = 2 * 32;  // the width a token passes through: top-2 x expert_ffn
  return s;
}

InferRequest moe_request(std::int64_t tp, std::int64_t ep) {
  auto r = tiny_request(1, 64, 0);
  r.shape = tiny_moe();
  r.tp = tp;
  r.gpus = tp;
  r.ep = ep;
  return r;
}

// Reading-bound rates: 1 GB/s, bf16 in and out, no SMs (no tiles).
GemmRates reading_bound() {
  GemmRates g;
  g.peak = 1e30;
  g.hbm = 1e9;
  return g;
}

// One decoded token on one GPU (tp 1): it takes 2 distinct experts, 1 row
// each. Up (gate and up fused, n = 64, k = D = 64), one grouped GEMM over
// the two: A 2 x 64, two experts' B 64 x 64, C 2 x 64, all bf16:
// (128 + 8192 + 128) x 2 = 16896 B = 16.896 us. Down (n = 64, k = 32):
// (64 + 4096 + 128) x 2 = 8576 B = 8.576 us. Router (1 x 4 x 64):
// (64 + 256 + 4) x 2 = 648 B = 0.648 us.
TEST(InferMoeHand, OneDecodedTokenReadsItsTwoExpertsWeights) {
  const auto r = moe_request(1, 1);
  const auto m = infer_moe_mlp(r, 1, reading_bound(), reading_bound());
  EXPECT_EQ(m.experts_touched, 2);
  EXPECT_NEAR(m.routed_s, 25.472e-6, 1e-15);
  EXPECT_NEAR(m.seconds, 25.472e-6 + 0.648e-6, 1e-15);
  EXPECT_EQ(m.imbalance, 1);
}

// TP 4. Sliced (--ep 1): each GPU holds a quarter of every expert (width 8)
// and reads the two touched experts' quarters: up (n 16): (128 + 2 x 1024 +
// 32) x 2 = 4416 B; down (n 64, k 8): (16 + 2 x 512 + 128) x 2 = 2336 B:
// 6.752 us. EP 4 inside the TP group: each GPU holds one whole expert; the
// two touched experts sit on two GPUs, each reading a whole expert for its
// row: up (64 + 4096 + 64) x 2 = 8448 B, down (32 + 2048 + 64) x 2 = 4288 B:
// 12.736 us, and the slowest GPU has 1 of the 2 rows where the mean is 0.5.
TEST(InferMoeHand, ExpertParallelismReadsWholeExpertsOnFewerGpus) {
  const auto sliced = infer_moe_mlp(moe_request(4, 1), 1, reading_bound(), reading_bound());
  const auto ep = infer_moe_mlp(moe_request(4, 4), 1, reading_bound(), reading_bound());
  EXPECT_NEAR(sliced.routed_s, 6.752e-6, 1e-15);
  EXPECT_NEAR(ep.routed_s, 12.736e-6, 1e-15);
  EXPECT_EQ(ep.imbalance, 2);
}

// A long prefill deals its routed copies as a multinomial: every copy lands
// somewhere, and the draw is the seed's.
TEST(InferMoeRouting, MultinomialCountsSumToTheCopiesAndFollowTheSeed) {
  const auto a = multinomial_counts(1000003, 128, 7), b = multinomial_counts(1000003, 128, 7);
  EXPECT_EQ(a, b);
  std::int64_t sum = 0;
  for (auto x : a) sum += x;
  EXPECT_EQ(sum, 1000003);
  EXPECT_NE(a, multinomial_counts(1000003, 128, 8));
  // E (1 - (1 - k/E)^t): one token touches exactly k experts; many touch all.
  EXPECT_DOUBLE_EQ(expected_experts_touched(8, 2, 1), 2);
  EXPECT_NEAR(expected_experts_touched(8, 2, 1000), 8, 1e-9);
}

// A grouped GEMM shares its waves: two 64-row problems on 4 SMs with one
// 64 x 64 tile each fill one wave together, where timed apart they take a
// wave each.
TEST(GroupedGemm, ProblemsShareTheWaves) {
  GemmRates g;
  g.peak = 4e12;
  g.sms = 4;
  g.tiles = {{64, 64}};
  const std::int64_t rows[2] = {64, 64};
  const auto both = grouped_gemm_time(rows, 2, 64, 1024, g);
  const auto one = gemm_time({64, 64, 1024}, g);
  EXPECT_EQ(both.waves, 1);
  EXPECT_DOUBLE_EQ(both.compute_s, one.compute_s);
  EXPECT_DOUBLE_EQ(gemm_time({64, 64, 1024}, g).seconds,
                   grouped_gemm_time(rows, 1, 64, 1024, g).seconds);
}

// FP8 weights: every expert's MLP matrices at one byte, the rest at two.
TEST(InferMoeHand, Fp8StoresEveryExpertAtOneByte) {
  auto r = moe_request(1, 1);
  const auto hw = slow_flat();
  const double bf16 = infer_memory(r, hw, InferVariant::PassKv).weights;
  r.fp8_mlp = true;
  const double fp8 = infer_memory(r, hw, InferVariant::PassKv).weights;
  EXPECT_DOUBLE_EQ(bf16 - fp8, 4.0 * 3 * 64 * 32);  // 4 experts x 3 matrices x D x expert_ffn
}

TEST(InferMoeRules, EpDividesTheTpGroupAndTheExperts) {
  auto r = moe_request(4, 3);
  EXPECT_THROW(check_request(r), InputError);
  r = moe_request(8, 8);  // 4 experts cannot spread over 8 GPUs
  r.shape.heads = 8;
  r.shape.kv_heads = 8;
  EXPECT_THROW(check_request(r), InputError);
  r = moe_request(4, 2);
  EXPECT_NO_THROW(check_request(r));
  auto dense = tiny_request(1, 64, 0);
  dense.ep = 2;
  EXPECT_THROW(check_request(dense), InputError);
}

}  // namespace
}  // namespace ringsim
