#include <gtest/gtest.h>

#include "helpers.hpp"
#include "models/analytic/memory.hpp"

using namespace ringsim;
using ringsim::testing::make_workload;

TEST(Memory, RingForwardByHand) {
  // c = 1024, 32 heads, 8 KV heads, d = 128, bf16.
  auto m = attention_memory(make_workload(8, 1024, Layout::Ring, true));
  const std::uint64_t q = 1024ull * 32 * 128 * 2, o = 1024ull * 32 * 128 * 4,
                      st = 1024ull * 32 * 2 * 4;
  const std::uint64_t kv = 2ull * 1024 * 8 * 128 * 2;
  EXPECT_EQ(m.total(), q + o + st + 2 * kv);
}

TEST(Memory, PapersSixBlocksForMHA) {
  // MHA, with the output and stats counted in bf16-equivalent the paper's
  // 6 blocks appear: query + 2 current K/V + 2 incoming K/V = 5 bf16 blocks.
  auto w = make_workload(4, 512, Layout::Ring, false);
  w.shape.kv_heads = 32;
  auto m = attention_memory(w);
  std::uint64_t bf16_blocks = 0;
  for (const auto& it : m.items)
    if (it.name == "query" || it.name == "kv_current" || it.name == "kv_incoming")
      bf16_blocks += it.bytes;
  EXPECT_EQ(bf16_blocks, 5ull * 512 * 32 * 128 * 2);
}

TEST(Memory, RingDoesNotGrowWithDevicesButAllgatherDoes) {
  EXPECT_EQ(attention_memory(make_workload(8, 1024, Layout::Ring, true)).total(),
            attention_memory(make_workload(64, 1024, Layout::Ring, true)).total());
  EXPECT_LT(attention_memory(make_workload(8, 1024, Layout::Allgather, true)).total(),
            attention_memory(make_workload(64, 1024, Layout::Allgather, true)).total());
}

TEST(Memory, BackwardAddsGradients) {
  EXPECT_GT(attention_memory(make_workload(8, 1024, Layout::Ring, true, Pass::Bwd)).total(),
            attention_memory(make_workload(8, 1024, Layout::Ring, true, Pass::Fwd)).total());
}
