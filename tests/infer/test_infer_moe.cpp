// A mixture-of-experts MLP in inference (models/infer/moe.hpp), on cases
// worked out by hand: a tiny MoE layer (D 64, 4 experts of width 32, top 2,
// gated) on a device whose GEMMs are bound by reading their operands at
// 1 GB/s (the FLOP rate is out of reach), so every time is bytes / 1e9.
#include <gtest/gtest.h>

#include "models/analytic/collectives.hpp"
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

// CP 2 with TP 1 (so --ep 2 spans both CP ranks).
InferRequest two_cp_ranks(std::int64_t ep) {
  auto r = moe_request(1, ep);
  r.cp = r.gpus = 2;
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
  const auto m = infer_moe_mlp(r, slow_flat(), 1, reading_bound(), reading_bound(), true);
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
  const auto sliced =
      infer_moe_mlp(moe_request(4, 1), slow_flat(), 1, reading_bound(), reading_bound(), true);
  const auto ep =
      infer_moe_mlp(moe_request(4, 4), slow_flat(), 1, reading_bound(), reading_bound(), true);
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

// EP across CP ranks: --ep above --tp must be --tp times a divisor of --cp.
TEST(InferMoeRules, EpAboveTpSpansADivisorOfTheCpRanks) {
  auto r = two_cp_ranks(2);
  EXPECT_NO_THROW(check_request(r));
  EXPECT_EQ(ep_span(r), 2);
  EXPECT_EQ(expert_tp(r), 1);
  r.ep = 4;  // 4 CP ranks, but only 2
  EXPECT_THROW(check_request(r), InputError);
  r = moe_request(2, 4);
  r.cp = 3;
  r.gpus = 6;
  EXPECT_THROW(check_request(r), InputError);  // 4 / 2 = 2 does not divide cp 3
  r = moe_request(2, 3);
  r.cp = 3;
  r.gpus = 6;
  EXPECT_THROW(check_request(r), InputError);  // 3 is not a multiple of tp 2
}

// CP 2, TP 1, EP 2 (each GPU holds 2 of the 4 experts, whole), 64 tokens:
// 32 per rank. Each GPU dispatches its 32 tokens' 2 copies of D = 64 in bf16:
// 32 x 2 x 64 x 2 = 8192 B, half of it to the other GPU: on the flat 100 kB/s
// ring one all-to-all is 4096 B / 1e5 = 40.96 ms, dispatch and combine
// 81.92 ms per layer (the one layer is MoE). The experts' weights (4 x 3
// matrices x 64 x 32 x 2 B = 49152 B) are halved on each GPU, and the
// dispatch's send and receive buffers (2 x 8192 B) join the ring buffers.
TEST(InferMoeHand, EpAcrossCpRanksDispatchesAndCombines) {
  Roofline rf;
  const auto hw = slow_flat();
  auto r = two_cp_ranks(1);
  const auto inside = infer_layer(r, hw, rf.im, InferVariant::PassKv, false);
  const auto m_in = infer_memory(r, hw, InferVariant::PassKv);
  r.ep = 2;
  const auto across = infer_layer(r, hw, rf.im, InferVariant::PassKv, false);
  EXPECT_DOUBLE_EQ(across.moe.alltoall_bytes, 8192);
  EXPECT_NEAR(across.ep_s, 81.92e-3, 1e-12);
  EXPECT_EQ(inside.ep_s, 0);
  const auto t = layer_times(across, r, hw);
  EXPECT_NEAR(t.total_s - layer_times(inside, r, hw).total_s,
              81.92e-3 + across.dense_s - inside.dense_s, 1e-12);
  const auto m = infer_memory(r, hw, InferVariant::PassKv);
  EXPECT_DOUBLE_EQ(m_in.weights - m.weights, 49152.0 / 2);
  EXPECT_DOUBLE_EQ(m.ring_buffers - m_in.ring_buffers, 2 * 8192.0);
  // The group routes both ranks' 64 tokens: 128 copies over 4 experts.
  EXPECT_GE(across.moe.imbalance, 1);
}

// A decode step's token is on both CP ranks: no dispatch, one all-reduce of
// its 64 x 2 B output over the EP group's 2 GPUs.
TEST(InferMoeHand, EpAcrossCpRanksDecodeSumsOverTheGroup) {
  Roofline rf;
  const auto hw = slow_flat();
  const auto r = two_cp_ranks(2);
  const auto d = infer_layer(r, hw, rf.im, InferVariant::PassKv, true);
  EXPECT_EQ(d.moe.alltoall_bytes, 0);
  EXPECT_DOUBLE_EQ(d.ep_s,
                   collective_time(Collective::AllReduce, 128, placed_group(hw, 2), hw).seconds);
  EXPECT_GT(d.ep_s, 0);
}

}  // namespace
}  // namespace ringsim
