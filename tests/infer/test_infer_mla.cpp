// Multi-head latent attention in `infer` (models/infer/infer.hpp, InferDims;
// docs/inference.md, "Multi-head latent attention"), on cases worked out by
// hand on the tests' slow, flat cluster (tests/infer/helpers.hpp: 1 MFLOP/s,
// 1 GB/s HBM, 100 kB/s links).
#include <gtest/gtest.h>

#include "models/infer/infer.hpp"
#include "tests/infer/helpers.hpp"
#include "tests/models/helpers.hpp"

namespace ringsim {
namespace {

using namespace infer_testing;

constexpr double kRel = 1e-12;

// tiny (D 64, 4 heads, MLP 128, one layer) with the small MLA of
// tests/models/helpers.hpp.
ModelShape tiny_mla() {
  return testing::with_small_mla(tiny());
}

InferRequest mla_request(std::int64_t cp, std::int64_t context, std::int64_t cached) {
  auto r = tiny_request(cp, context, cached);
  r.shape = tiny_mla();
  return r;
}

TEST(InferMla, WidthsOfEachForm) {
  const auto p = infer_dims(tiny_mla(), false), d = infer_dims(tiny_mla(), true);
  EXPECT_TRUE(p.latent);
  EXPECT_EQ(p.query_dim, 12);
  EXPECT_EQ(p.out_dim, 8);
  EXPECT_EQ(d.query_dim, 28);  // latent 24 + RoPE 4
  EXPECT_EQ(d.out_dim, 24);
  // The latent entry is whole on every TP rank; GQA's K/V split over TP.
  EXPECT_EQ(decode_kv_elements_per_token(tiny_mla(), 1), 28);
  EXPECT_EQ(decode_kv_elements_per_token(tiny_mla(), 2), 28);
  EXPECT_EQ(decode_kv_elements_per_token(tiny(), 2), 2 * 1 * 16);
  EXPECT_EQ(decode_flops_per_pair(tiny_mla()), 2 * 28 + 2 * 24);
  EXPECT_EQ(decode_flops_per_pair(tiny()), 4 * 16);
  EXPECT_FALSE(infer_dims(tiny(), true).latent);
}

// Decode, 2 CP ranks, 8 cached tokens and one new at position 8 (rank 0):
//   rank 0's call: 1 query x 5 keys x 4 heads = 20 pairs x (2 x 28 + 2 x 24 =
//           104) flops = 2.08 ms (its 5 latents, 5 x 28 x 2 B = 280 B, read
//           in 0.28 us); rank 1's: 16 pairs, 1.664 ms.
//   Q after step 0: 2 padded rows x 4 heads x 28 x 2 B = 448 B: 4.48 ms at
//           100 kB/s: attention = 4.48 + 2.08 = 6.56 ms.
//   partials: 2 rows x 4 heads x (24 x 2 + 4) B = 416 B held, 208 B to the
//           other rank: 2.08 ms.
//   KV cache: 1 layer x 8 tokens / 2 ranks x 28 x 2 B = 224 B.
TEST(InferMla, DecodeReadsTheLatentOnce) {
  Roofline rf;
  const auto r = mla_request(2, 8, 0);
  const auto a = infer(r, slow_flat(), rf.im);
  EXPECT_NEAR(a.decode_layer.step_compute_s[0], 2.08e-3, 2.08e-3 * kRel);
  EXPECT_NEAR(a.decode_layer.attention_s, 6.56e-3, 6.56e-3 * kRel);
  EXPECT_NEAR(a.decode_layer.return_s, 2.08e-3, 2.08e-3 * kRel);
  EXPECT_EQ(a.memory.kv_cache, 224);
  auto tp2 = mla_request(2, 8, 0);
  tp2.tp = 2;
  tp2.gpus = 4;
  EXPECT_EQ(infer_memory(tp2, slow_flat(), InferVariant::PassKv).kv_cache, 224);
}

// Prefill, 2 CP ranks, ring, 8 new tokens (4 a rank):
//   step 0: 10 pairs x 4 heads x 4 x 10 flops (2 x 12 + 2 x 8) = 1.6 ms.
//   pass-kv message: 4 tokens x 4 heads x (12 + 8) x 2 B = 640 B.
//   pass-q message: 4 queries x 4 heads x 12 x 2 B = 384 B; its return:
//           2 x 4 x 4 x (8 x 2 + 4) B = 640 B.
//   dense per token: 2 x (8 x 64 + 48 x 8 + 28 x 64 + 64 x 24 + 64 x 32) =
//           12544 flops of projections + 6 x 64 x 128 = 49152 of MLP; 4
//           tokens: 246.784 ms.
TEST(InferMla, PrefillMovesEachWidth) {
  Roofline rf;
  const auto hw = slow_flat();
  const auto r = mla_request(2, 8, 0);
  const auto kv = infer_layer(r, hw, rf.im, InferVariant::PassKv, false);
  const auto q = infer_layer(r, hw, rf.im, InferVariant::PassQ, false);
  EXPECT_NEAR(kv.step_s[0][0], 1.6e-3, 1.6e-3 * kRel);
  EXPECT_EQ(kv.ring_bytes, 640u);
  EXPECT_EQ(q.ring_bytes, 384u);
  EXPECT_EQ(q.return_bytes, 640u);
  EXPECT_NEAR(kv.dense_s, 0.246784, 0.246784 * kRel);
}

// With 4 of the 8 tokens cached, each rank up-projects its 2 cached latents
// to per-head K and V before the ring: 2 x 2 x 64 x 24 = 6144 flops, beside
// 2 new tokens' 2 x 61696: 129.536 ms.
TEST(InferMla, PrefillUpProjectsTheCachedLatents) {
  Roofline rf;
  const auto l = infer_layer(mla_request(2, 8, 4), slow_flat(), rf.im, InferVariant::PassKv, false);
  EXPECT_NEAR(l.dense_s, 0.129536, 0.129536 * kRel);
}

// Pass-Q keeps the cached tokens' up-projected K and V beside the latent
// cache (pass-KV's ring buffers hold them): 2 cached tokens a rank x 4 heads
// x (12 + 8) x 2 B = 320 B more than pass-KV's activations.
TEST(InferMla, PassQHoldsTheCachedTokensUpProjected) {
  const auto r = mla_request(2, 8, 4);
  const auto kv = infer_memory(r, slow_flat(), InferVariant::PassKv);
  const auto q = infer_memory(r, slow_flat(), InferVariant::PassQ);
  EXPECT_EQ(q.activations - kv.activations, 320);
  EXPECT_EQ(infer_memory(mla_request(2, 8, 0), slow_flat(), InferVariant::PassQ).activations,
            infer_memory(mla_request(2, 8, 0), slow_flat(), InferVariant::PassKv).activations);
}

}  // namespace
}  // namespace ringsim
