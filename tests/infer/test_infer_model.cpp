// The inference closed forms on cases worked out by hand (tests/infer/helpers.hpp:
// a 1-layer model of 4 query / 2 KV heads of dim 16 on 1 MFLOP/s devices,
// 1 GB/s HBM and 100 kB/s links), the pass-kv / pass-q choice, memory, and
// the inference work contract (models/core/infer_work.hpp).
#include <gtest/gtest.h>

#include "models/core/errors.hpp"
#include "models/core/infer_work.hpp"
#include "models/plan/basics.hpp"
#include "tests/infer/helpers.hpp"

namespace ringsim {
namespace {

using namespace infer_testing;

constexpr double kRel = 1e-12;

// Two CP ranks, 8 new tokens, nothing cached, ring layout: rank 0 holds
// tokens 0-3, rank 1 tokens 4-7.
//   step 0: each rank its own causal 4x4 block: 10 pairs x 4 heads = 40,
//           4 d pairs / 1e6 = 4 x 16 x 40 / 1e6 = 2.56 ms.
//   step 1: pass-kv: rank 1 sees rank 0's (earlier) keys: 16 x 4 = 64 pairs,
//           4.096 ms; rank 0 sees rank 1's (later) keys: none.
//           pass-q: rank 0 runs rank 1's queries on its keys: 64 pairs, the
//           same 4.096 ms.
//   ring message after step 0: pass-kv K and V of 4 tokens x 2 KV heads x 16
//           x 2 B = 512 B; pass-q Q of 4 tokens x 4 heads x 16 x 2 B = 512 B;
//           either 5.12 ms at 100 kB/s, longer than step 0's compute.
//   attention = 5.12 + 4.096 = 9.216 ms (exposed: 5.12 - 2.56 = 2.56 ms).
//   pass-q return: each rank holds 4 queries x 4 heads x (16 x 2 + 4) B =
//           576 B of partials for the other; the all-to-all takes 5.76 ms.
//   dense: 4 tokens x (2 D (H + 2 kvh) d + 2 H d D + 6 D F) = 4 x 73728
//           flops = 294.912 ms at 1 MFLOP/s (weights: 36992 x 2 B in 74 us).
//   pointwise: 4 x (20 D + 4 d (H + kvh) + 6 F) = 4 x 2432 B / 1 GB/s = 9.728 us.
//   head: 2 D V = 128000 flops = 128 ms (its weights read in 128 us).
//   fixed: 16 kernels + 2 attention calls, a 0.9 us device gap each =
//           16.2 us, charged with the dense phase (the host's 10 us
//           dispatch per kernel hides behind 295 ms of work).
TEST(InferHand, PrefillPassKvAndPassQ) {
  Roofline rf;
  const auto hw = slow_flat();
  auto r = tiny_request(2, 8, 0);
  r.auto_variant = false;
  r.variant = InferVariant::PassKv;
  const auto kv = infer(r, hw, rf.im);
  r.variant = InferVariant::PassQ;
  const auto q = infer(r, hw, rf.im);

  EXPECT_NEAR(kv.prefill_layer.step_compute_s[0], 2.56e-3, 1e-15);
  EXPECT_NEAR(kv.prefill_layer.step_compute_s[1], 4.096e-3, 1e-15);
  EXPECT_NEAR(kv.prefill_layer.step_comm_s[0], 5.12e-3, 1e-15);
  EXPECT_EQ(kv.prefill_layer.step_comm_s[1], 0);
  EXPECT_NEAR(kv.attention_s, 9.216e-3, 9.216e-3 * kRel);
  EXPECT_NEAR(kv.attention_exposed_s, 2.56e-3, 1e-14);
  EXPECT_NEAR(kv.dense_s, 0.294912 + 16.2e-6, 0.294912 * kRel);
  EXPECT_NEAR(kv.pointwise_s, 9.728e-6, 9.728e-6 * kRel);
  EXPECT_NEAR(kv.head_s, 0.128, 0.128 * kRel);
  EXPECT_EQ(kv.return_s, 0);
  EXPECT_EQ(kv.tp_s, 0);
  const double ttft_kv = 9.216e-3 + 0.294912 + 16.2e-6 + 9.728e-6 + 0.128;
  EXPECT_NEAR(kv.ttft_s, ttft_kv, ttft_kv * kRel);

  EXPECT_NEAR(q.attention_s, 9.216e-3, 9.216e-3 * kRel);
  EXPECT_NEAR(q.return_s, 5.76e-3, 5.76e-3 * kRel);
  EXPECT_NEAR(q.ttft_s, ttft_kv + 5.76e-3, (ttft_kv + 5.76e-3) * kRel);
  // The parts add up to the TTFT.
  for (const auto* x : {&kv, &q})
    EXPECT_NEAR(x->attention_s + x->return_s + x->merge_s + x->dense_s + x->pointwise_s + x->tp_s +
                    x->head_s,
                x->ttft_s, x->ttft_s * kRel);
}

// TP 2 on one CP rank, 8 new tokens: an inference TP group all-reduces
// without sequence parallelism, so each GPU runs the norms and residual adds
// (20 D = 1280 B a token) on all 8 tokens, and half of RoPE and SwiGLU
// (4 d (H + kvh) + 6 F = 1152 B): 8 x (1280 + 576) B / 1 GB/s = 14.848 us.
TEST(InferHand, ATpRankRunsTheResidualStreamWhole) {
  Roofline rf;
  auto hw = slow_flat();
  hw.gpus_per_node = 2;
  auto r = tiny_request(1, 8, 0);
  r.tp = 2;
  r.gpus = 2;
  const auto x = infer(r, hw, rf.im);
  EXPECT_NEAR(x.pointwise_s, 14.848e-6, 14.848e-6 * kRel);
}

// Decode at the same 8 tokens (all cached now), one query token at position 8,
// whose K/V joins rank 0 (round-robin), as Meta's pass-Q decode: the query,
// padded to the 2 ranks, travels the ring, so each rank attends every
// rank's query over its own shard (2 calls), then the partials go home.
//   rank 0's call: 1 query x (4 cached + 1 own) keys x 4 heads = 20 pairs:
//           1.28 ms of compute (its 5 keys' K/V, 640 B, read in 0.64 us);
//           rank 1's: 16 pairs, 1.024 ms; the slowest rank sets each step.
//   Q after step 0: 2 padded rows x 4 heads x 16 x 2 B = 256 B: 2.56 ms at
//           100 kB/s, longer than the call: attention = 2.56 + 1.28 = 3.84 ms.
//   all-to-all of partials: 2 rows x 4 heads x (16 x 2 + 4) B = 288 B held,
//           144 B to the other rank: 1.44 ms.
//   dense: 73728 flops = 73.728 ms; pointwise 2.432 us; head 128 ms;
//   fixed: 16 kernels + 2 calls x 0.9 us = 16.2 us (CUDA graphs: no dispatch).
TEST(InferHand, DecodeOverShardedCache) {
  Roofline rf;
  const auto r = tiny_request(2, 8, 0);
  const auto a = infer(r, slow_flat(), rf.im);
  EXPECT_NEAR(a.decode_layer.attention_s, 3.84e-3, 1e-15);
  EXPECT_NEAR(a.decode_layer.return_s, 1.44e-3, 1e-15);
  const double expect = 3.84e-3 + 1.44e-3 + 73.728e-3 + 16.2e-6 + 2.432e-6 + 0.128;
  EXPECT_NEAR(a.decode_s_per_token, expect, expect * kRel);
  EXPECT_NEAR(a.tokens_per_s, 1 / expect, 1 / expect * kRel);
}

TEST(InferHand, DecodeWithoutCudaGraphsPaysTheHostsDispatch) {
  // One rank, no CP: the layer's 17 kernels (16 + one attention call) cost
  // the host 170 us, against 73.728 ms of device work: hidden.
  Roofline rf;
  auto r = tiny_request(1, 8, 0);
  const auto graphs = infer(r, slow_flat(), rf.im);
  r.cuda_graphs = false;
  const auto eager = infer(r, slow_flat(), rf.im);
  EXPECT_DOUBLE_EQ(graphs.decode_s_per_token, eager.decode_s_per_token);
  // 1000x faster device: about 80 us of device work per layer (the GEMMs
  // now bound by reading their weights, the attention call, the pointwise
  // ops) under 170 us of dispatch: eager decode waits for the host, the
  // difference between the two, on its one layer.
  Hardware fast = slow_flat();
  fast.flops = 1e9;
  const auto g2 = infer(tiny_request(1, 8, 0), fast, rf.im);
  const auto e2 = infer(r, fast, rf.im);
  const double device = g2.decode_layer.total_s - g2.decode_layer.fixed_s;
  ASSERT_LT(device, 170e-6);
  EXPECT_NEAR(e2.decode_s_per_token - g2.decode_s_per_token, 170e-6 - device, 1e-12);
}

TEST(InferHand, Fp8MlpWeightsTakeOneBytePerWeight) {
  // --precision fp8: the MLP's 3 D F weights per layer at 1 byte instead of 2.
  Roofline rf;
  auto r = tiny_request(2, 8, 0);
  const auto bf = infer_memory(r, slow_flat(), InferVariant::PassKv);
  r.fp8_mlp = true;
  const auto f8 = infer_memory(r, slow_flat(), InferVariant::PassKv);
  const double mlp = 3.0 * r.shape.d_model * r.shape.ffn * r.shape.layers;
  EXPECT_DOUBLE_EQ(bf.weights - f8.weights, mlp / static_cast<double>(r.tp));
  // The total also sheds the allocator's 5% reserve on them.
  EXPECT_NEAR(bf.total - f8.total, 1.05 * mlp / static_cast<double>(r.tp), 1e-3);
}

TEST(InferHand, Fp8MlpQuantisesItsInputsRowWise) {
  // --precision fp8: FBGEMM quantises each FP8 GEMM's input row-wise, 3 B per
  // element (the bf16 row read once, the FP8 row written). The tiny MLP's
  // inputs: D 64 + F 128 = 192 elements per token; a prefill rank's 4 tokens:
  // 3 x 192 x 4 = 2304 B at 1 GB/s = 2.304 us, inside the pointwise phase;
  // a decode token: 576 B, 0.576 us.
  Roofline rf;
  auto r = tiny_request(2, 8, 0);
  const auto bf = infer(r, slow_flat(), rf.im);
  EXPECT_EQ(bf.quantise_s, 0);
  r.fp8_mlp = true;
  r.fp8_flops = 2e6;
  r.fp8_gemm_efficiency = 1;
  const auto f8 = infer(r, slow_flat(), rf.im);
  EXPECT_NEAR(f8.prefill_layer.quantise_s, 2.304e-6, 1e-18);
  EXPECT_NEAR(f8.prefill_layer.pointwise_s - bf.prefill_layer.pointwise_s, 2.304e-6, 1e-18);
  EXPECT_NEAR(f8.decode_layer.quantise_s, 0.576e-6, 1e-18);
  EXPECT_DOUBLE_EQ(f8.quantise_s, f8.prefill_layer.quantise_s);  // one layer
  // A MoE model: its dense layers alike, averaged over the layers; the
  // experts' inputs are not charged. 4 layers, the first of them dense of
  // width 96: (1/4) x 3 x (64 + 96) x 4 tokens = 480 B, 0.48 us.
  r.shape.layers = 4;
  r.shape.experts = 4;
  r.shape.experts_per_token = 1;
  r.shape.expert_ffn = 32;
  r.shape.dense_layers = 1;
  r.shape.dense_ffn = 96;
  EXPECT_NEAR(infer(r, slow_flat(), rf.im).prefill_layer.quantise_s, 0.48e-6, 1e-18);
  r.shape.dense_layers = 0;
  EXPECT_EQ(infer(r, slow_flat(), rf.im).prefill_layer.quantise_s, 0);
}

TEST(InferHand, TensorParallelAllReduce) {
  // 4 GPUs of one node, 1 MB per GPU: reduce-scatter + all-gather, 2 x 3
  // rounds of 250 kB at 1e11 B/s + 1 us = 6 x 3.5 us = 21 us, plus NCCL's
  // base latency per call, 8.4 us (models/analytic/collectives.hpp) = 29.4 us.
  Hardware hw = slow_flat(1e11, 1e-6);
  hw.platform = Platform::Nodes;
  hw.gpus_per_node = 4;
  EXPECT_NEAR(tp_allreduce_seconds(1000000, 4, hw), 29.4e-6, 1e-18);
  EXPECT_EQ(tp_allreduce_seconds(1000000, 1, hw), 0);
}

TEST(InferChoice, FewNewTokensOnALongCachePickPassQ) {
  // 32 ranks; 1M-token context with 4096 new tokens: a pass-kv step sends the
  // K/V of 32K tokens (2 x 32768 x 2 x 16 x 2 B = 4 MiB, 41.9 s at 100 kB/s)
  // and a pass-q step the queries of 128 (16 KiB, 0.16 s); on 1 PFLOP/s
  // devices a step computes in about a microsecond, so every transfer is
  // exposed and pass-q wins by far.
  RooflineModel fast(1e15);
  const auto im = bare_implementation(fast);
  auto hw = slow_flat();
  hw.flops = 1e15;
  auto r = tiny_request(32, 1 << 20, (1 << 20) - 4096, Layout::Zigzag);
  r.gpus = 32;
  const auto a = infer(r, hw, im);
  EXPECT_EQ(a.choice.variant, InferVariant::PassQ);
  EXPECT_EQ(a.choice.message_bytes[0], 2ull * 32768 * 2 * 16 * 2);
  EXPECT_EQ(a.choice.message_bytes[1], 128ull * 4 * 16 * 2);
  EXPECT_LT(a.choice.ttft_s[1], a.choice.ttft_s[0]);
  EXPECT_NE(a.choice.reason.find("pass-q"), std::string::npos);
  // Nothing cached, GQA 2: a shard's queries (4 heads) weigh as much as its
  // K and V (2 x 2 heads), and pass-q adds the return of partials: pass-kv.
  auto full = tiny_request(32, 1 << 20, 0, Layout::Zigzag);
  full.gpus = 32;
  EXPECT_EQ(infer(full, hw, im).choice.variant, InferVariant::PassKv);
}

TEST(InferChoice, GivenVariantIsKept) {
  Roofline rf;
  auto r = tiny_request(2, 8, 0);
  r.auto_variant = false;
  r.variant = InferVariant::PassQ;
  const auto a = infer(r, slow_flat(), rf.im);
  EXPECT_EQ(a.choice.variant, InferVariant::PassQ);
  EXPECT_FALSE(a.choice.automatic);
}

TEST(InferMemory, HandCountedTerms) {
  // tiny, tp 1, cp 2, context 8 (nothing cached), batch 1, bf16:
  //   weights: total params x 2 B; KV cache: 2 x 1 layer x 4 tokens x 2 heads
  //   x 16 x 2 B = 512 B; pass-kv ring buffers: 2 x 512 B.
  const auto r = tiny_request(2, 8, 0);
  const auto m = infer_memory(r, slow_flat(), InferVariant::PassKv);
  EXPECT_EQ(m.weights, static_cast<double>(total_params(tiny())) * 2);
  EXPECT_EQ(m.kv_cache, 512);
  EXPECT_EQ(m.ring_buffers, 1024);
  EXPECT_EQ(m.total, m.weights + m.kv_cache + m.activations + m.ring_buffers + m.overhead);
  EXPECT_TRUE(m.fits());
  // More CP ranks shard the cache further.
  auto r4 = tiny_request(4, 8, 0);
  EXPECT_EQ(infer_memory(r4, slow_flat(), InferVariant::PassKv).kv_cache, 256);
}

// n ranks of 4 heads (2 KV heads of 8): `cached` tokens, then 4 new ones per
// rank to prefill, or `decode` new tokens to decode.
InferWork small_work(Layout layout, InferMode mode, std::int64_t n, std::int64_t cached,
                     std::int64_t decode) {
  InferWork w;
  w.ranks = n;
  w.layout = layout;
  w.mode = mode;
  w.heads = 4;
  w.kv_heads = 2;
  w.head_dim = 8;
  w.cached = cached;
  w.fresh = mode == InferMode::Prefill ? 2 * n * 2 : decode;
  return w;
}

TEST(InferWork, EntriesSumToTheTotalForEveryMode) {
  for (auto layout : {Layout::Ring, Layout::Striped, Layout::Zigzag})
    for (auto mode : {InferMode::Prefill, InferMode::Decode})
      for (auto variant : {InferVariant::PassKv, InferVariant::PassQ})
        for (bool causal : {true, false})
          for (std::int64_t n : {1, 2, 3, 4}) {
            auto w = small_work(layout, mode, n, 2 * n * 3, 3);
            w.variant = variant;
            w.causal = causal;
            check_infer(w);
            std::uint64_t sum = 0;
            for (std::int64_t i = 0; i < n; ++i)
              for (std::int64_t s = 0; s < infer_steps(w); ++s) sum += infer_step_entries(w, i, s);
            EXPECT_EQ(sum, infer_total_entries(w))
                << to_string(layout) << " " << to_string(mode) << " " << to_string(variant)
                << " n=" << n << (causal ? " causal" : "");
          }
}

TEST(InferWork, KeyCountIsTheListsSize) {
  // infer_kv_count counts what the two lists hold, for every mode and size,
  // the cache empty or not and decode tokens fewer or more than the ranks.
  for (auto layout : {Layout::Ring, Layout::Striped, Layout::Zigzag})
    for (auto mode : {InferMode::Prefill, InferMode::Decode})
      for (std::int64_t n : {1, 2, 3, 4})
        for (std::int64_t cached : {std::int64_t{0}, 2 * n * 3})
          for (std::int64_t fresh : {std::int64_t{1}, std::int64_t{3}, 2 * n * 2}) {
            const auto w = small_work(layout, mode, n, cached, fresh);
            for (std::int64_t i = 0; i < n; ++i)
              EXPECT_EQ(infer_kv_count(w, i),
                        static_cast<std::int64_t>(infer_cached_tokens(w, i).size() +
                                                  infer_fresh_kv_tokens(w, i).size()))
                  << to_string(layout) << " " << to_string(mode) << " n=" << n << " rank " << i;
          }
}

TEST(InferWork, HandCountedSmallCase) {
  // N = 2 ring, causal, 4 cached + 4 new tokens, 1 head: rank 0 holds cached
  // 0-1 and new 4-5, rank 1 cached 2-3 and new 6-7.
  //   pass-kv step 0, rank 0: queries 4,5 x cached 0,1 (4) + new 4,5 causal
  //   (3) = 7; rank 1: 2 x 2 + 3 = 7. Step 1: rank 0 gets rank 1's K/V:
  //   cached 2,3 (4) + new 6,7 after its queries (0) = 4; rank 1 gets rank
  //   0's: cached (4) + new 4,5 before 6,7 (4) = 8. Total 26 = 4 x 4 + 10.
  InferWork w;
  w.ranks = 2;
  w.layout = Layout::Ring;
  w.cached = 4;
  w.fresh = 4;
  w.heads = 1;
  w.kv_heads = 1;
  w.head_dim = 8;
  EXPECT_EQ(infer_step_entries(w, 0, 0), 7u);
  EXPECT_EQ(infer_step_entries(w, 1, 0), 7u);
  EXPECT_EQ(infer_step_entries(w, 0, 1), 4u);
  EXPECT_EQ(infer_step_entries(w, 1, 1), 8u);
  EXPECT_EQ(infer_total_entries(w), 26u);
  // Each rank's K/V: (2 cached + 2 new) x 1 head x 8, K and V: 64 elements.
  EXPECT_EQ(infer_ring_elements(w), 64u);
  EXPECT_EQ(infer_return_elements(w, 0), 0u);
  w.variant = InferVariant::PassQ;
  // Queries of 2 tokens x 8; the partial of 2 queries x (8 + 1) returns.
  EXPECT_EQ(infer_ring_elements(w), 16u);
  EXPECT_EQ(infer_return_elements(w, 0), 18u);
  // Pass-q rank 0 at step 1 runs rank 1's queries (6, 7) on its K/V: 0-1
  // cached (4) + 4, 5 (4) = 8, what pass-kv's rank 1 computed.
  EXPECT_EQ(infer_step_entries(w, 0, 1), 8u);
  EXPECT_EQ(infer_query_source(w, 0, 1), 1);
}

TEST(InferBadInput, OneLineNamingTheFlag) {
  Roofline rf;
  auto expect_error = [&](InferRequest r, const std::string& flag) {
    try {
      infer(r, slow_flat(), rf.im);
      ADD_FAILURE() << "accepted; expected an error naming " << flag;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(flag, 0), 0u) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  };
  auto r = tiny_request(2, 8, 0);
  r.cached = 8;
  expect_error(r, "--cached");
  r = tiny_request(2, 8, 2);  // 6 new tokens do not split in 2 x 2 zigzag chunks... ring: 3 each
  r.cached = 3;               // 3 cached tokens over 2 ranks: no
  expect_error(r, "--cached");
  r = tiny_request(4, 12, 0, Layout::Zigzag);  // 12 over 2 x 4 chunks: no
  expect_error(r, "--context");
  r = tiny_request(2, 8, 0);
  r.gpus = 3;
  expect_error(r, "--gpus");
  r = tiny_request(2, 8, 0);
  r.tp = 3;
  r.gpus = 6;
  expect_error(r, "--tp");
  r = tiny_request(2, 8, 0, Layout::Ulysses);
  expect_error(r, "--layout");
}

}  // namespace
}  // namespace ringsim
