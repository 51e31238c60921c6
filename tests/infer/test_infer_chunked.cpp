// Chunked attention in `infer` (Llama 4's chunked layers; models/infer/
// infer.hpp, infer_layer's `chunked`; docs/inference.md, "Chunked
// attention"), worked out by hand on the tests' slow, flat cluster
// (tests/infer/helpers.hpp: 1 MFLOP/s, 1 GB/s HBM, 100 kB/s links).
#include <gtest/gtest.h>

#include "models/infer/infer.hpp"
#include "tests/infer/helpers.hpp"

namespace ringsim {
namespace {

using namespace infer_testing;

constexpr double kRel = 1e-12;

// tiny with 2 layers: the first attends inside chunks of 4 tokens, the
// second (global_every 2) to the whole context.
InferRequest chunked_request() {
  auto r = tiny_request(2, 8, 0);
  r.shape.layers = 2;
  r.shape.attention_chunk = 4;
  r.shape.global_every = 2;
  return r;
}

TEST(InferChunked, LayersAlternateAsTheModelSays) {
  const auto s = chunked_request().shape;
  EXPECT_TRUE(layer_attends_in_chunks(s, 0));
  EXPECT_FALSE(layer_attends_in_chunks(s, 1));
  EXPECT_EQ(chunked_attention_layers(s), 1);
}

// Prefill, 2 ranks, ring layout: rank 0 holds tokens 0-3, rank 1 tokens 4-7,
// each block one chunk.
//   global layer (as InferHand.PrefillPassKvAndPassQ): 5.12 ms (step 0's
//     message, longer than its 2.56 ms) + 4.096 ms (step 1) = 9.216 ms.
//   chunked layer: step 0 the same 2.56 ms under the 5.12 ms message; step 1
//     brings keys of the other chunk: no pair, nothing computed: 5.12 ms.
//   each layer: dense 294.912 ms + 16.2 us of gaps, pointwise 9.728 us;
//   the head 128 ms.
TEST(InferChunked, AChunkedLayerComputesInsideItsChunk) {
  Roofline rf;
  auto r = chunked_request();
  r.auto_variant = false;
  r.variant = InferVariant::PassKv;
  const auto a = infer(r, slow_flat(), rf.im);
  EXPECT_EQ(a.chunked_layers, 1);
  EXPECT_NEAR(a.prefill_layer.attention_s, 9.216e-3, 9.216e-3 * kRel);
  EXPECT_NEAR(a.prefill_chunked_layer.step_compute_s[0], 2.56e-3, 2.56e-3 * kRel);
  EXPECT_EQ(a.prefill_chunked_layer.step_compute_s[1], 0);
  EXPECT_NEAR(a.prefill_chunked_layer.attention_s, 5.12e-3, 5.12e-3 * kRel);
  EXPECT_NEAR(a.attention_s, 9.216e-3 + 5.12e-3, 14.336e-3 * kRel);
  const double ttft = 9.216e-3 + 5.12e-3 + 2 * (0.294912 + 16.2e-6 + 9.728e-6) + 0.128;
  EXPECT_NEAR(a.ttft_s, ttft, ttft * kRel);
}

// Decode: the new token at position 8 opens a chunk of its own (chunks 4, 4,
// 1): in the chunked layer it sees itself only, on rank 0 (round-robin):
// 1 key x 4 heads x 4 x 16 flops = 0.256 ms (its K/V, 128 B, read in
// 0.128 us); rank 1 nothing. Q's 256 B message takes 2.56 ms: 2.56 + 0.256.
// KV cache: the global layer 2 x 4 tokens x 2 heads x 16 x 2 B = 512 B a
// rank, the chunked one its chunk, min(8, 4) / 2 tokens: 256 B.
TEST(InferChunked, DecodeReadsItsChunkAndCachesOneChunk) {
  Roofline rf;
  const auto r = chunked_request();
  const auto a = infer(r, slow_flat(), rf.im);
  EXPECT_NEAR(a.decode_chunked_layer.step_compute_s[0], 0.256e-3, 0.256e-3 * kRel);
  EXPECT_NEAR(a.decode_chunked_layer.attention_s, 2.816e-3, 2.816e-3 * kRel);
  EXPECT_NEAR(a.decode_layer.attention_s, 3.84e-3, 3.84e-3 * kRel);
  EXPECT_EQ(a.memory.kv_cache, 512 + 256);
}

}  // namespace
}  // namespace ringsim
