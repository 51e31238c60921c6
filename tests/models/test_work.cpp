#include <gtest/gtest.h>

#include <set>

#include "helpers.hpp"
#include "models/core/work.hpp"

using namespace ringsim;
using ringsim::testing::make_workload;

namespace {
std::uint64_t brute_pairs(Layout l, std::int64_t n, std::int64_t c, bool causal, std::int64_t i,
                          std::int64_t j) {
  std::uint64_t p = 0;
  for (auto q : device_tokens(l, n, c, i))
    for (auto k : device_tokens(l, n, c, j)) p += (!causal || k <= q);
  return p;
}
}  // namespace

// The closed-form pair counts equal a brute-force count over the actual token
// sets, for every sharding and both masks.
TEST(Work, ShardPairsMatchBruteForce) {
  for (Layout l : {Layout::Ring, Layout::Striped, Layout::Zigzag})
    for (bool causal : {false, true})
      for (std::int64_t n : {1, 2, 3, 5})
        for (std::int64_t c : {2, 4, 6})
          for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < n; ++j)
              EXPECT_EQ(shard_pairs(l, n, c, causal, i, j), brute_pairs(l, n, c, causal, i, j))
                  << to_string(l) << " n=" << n << " c=" << c << " i=" << i << " j=" << j;
}

TEST(Work, ShardsPartitionTheSequence) {
  for (Layout l : {Layout::Ring, Layout::Striped, Layout::Zigzag}) {
    std::set<std::int64_t> all;
    for (std::int64_t i = 0; i < 4; ++i)
      for (auto t : device_tokens(l, 4, 6, i)) EXPECT_TRUE(all.insert(t).second) << to_string(l);
    EXPECT_EQ(all.size(), 24u);
    EXPECT_EQ(*all.rbegin(), 23);
  }
}

TEST(Work, TotalIsFullAttentionForEveryLayout) {
  for (Layout l : {Layout::Ring, Layout::Striped, Layout::Zigzag, Layout::Ulysses,
                   Layout::Allgather, Layout::Hybrid})
    for (bool causal : {false, true}) {
      auto w = make_workload(l == Layout::Ulysses ? 4 : 8, 6, l, causal);
      const std::uint64_t S = w.seq_len(), H = w.shape.heads;
      EXPECT_EQ(total_entries(w), H * (causal ? S * (S + 1) / 2 : S * S)) << to_string(l) << causal;
    }
}

TEST(Work, HandCountsForASmallCausalRing) {
  // 4 devices x 8 tokens, 32 heads. Device 3 at step 0 holds its own block:
  // the diagonal, 8*9/2 = 36 pairs; at step 1 block 2: full 64; device 0 at
  // step 1 holds block 3 (future tokens): 0.
  auto w = make_workload(4, 8, Layout::Ring, true);
  EXPECT_EQ(num_steps(w), 4);
  EXPECT_EQ(kv_source(w, 3, 1), 2);
  EXPECT_EQ(kv_source(w, 0, 1), 3);
  EXPECT_EQ(step_entries(w, 3, 0), 36u * 32);
  EXPECT_EQ(step_entries(w, 3, 1), 64u * 32);
  EXPECT_EQ(step_entries(w, 0, 1), 0u);
}

TEST(Work, StripedAndZigzagBalanceEveryStep) {
  // Striped: c(c-1)/2 + c when the key device is not after the query device,
  // else c(c-1)/2 (Striped Attention sec. 3). Zigzag: every step after the
  // first does exactly half a block on every device.
  auto s = make_workload(4, 8, Layout::Striped, true);
  EXPECT_EQ(step_entries(s, 2, 0), (28u + 8) * 32);
  EXPECT_EQ(step_entries(s, 0, 1), 28u * 32);
  auto z = make_workload(4, 8, Layout::Zigzag, true);
  for (std::int64_t st = 1; st < 4; ++st)
    for (std::int64_t d = 0; d < 4; ++d)
      EXPECT_EQ(step_entries(z, d, st), 32u * 32) << d << " " << st;
}

TEST(Work, RingElementsAreKAndVForwardPlusGradsBackward) {
  auto w = make_workload(4, 4096, Layout::Ring, true);
  EXPECT_EQ(ring_elements_per_step(w, false), 2u * 4096 * 8 * 128);
  EXPECT_EQ(ring_elements_per_step(w, true), 4u * 4096 * 8 * 128);
  EXPECT_EQ(ring_elements_per_step(make_workload(4, 4096, Layout::Ulysses, true), false), 0u);
}

TEST(Work, HybridRingsOverGroups) {
  // 8 devices, Ulysses degree 2: 4 ring steps over groups of 2; every device
  // in a group does the same work with 16 of 32 heads.
  auto w = make_workload(8, 4, Layout::Hybrid, false);
  EXPECT_EQ(num_steps(w), 4);
  EXPECT_EQ(kv_source(w, 5, 1), 1);  // group 2, step 1 -> group 1
  EXPECT_EQ(step_entries(w, 4, 2), step_entries(w, 5, 2));
  EXPECT_EQ(step_entries(w, 0, 0), 8u * 8 * 16);
}
