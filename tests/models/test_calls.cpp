// The kernel calls each layout makes, and the tiles a kernel touches in them:
// hand-counted cases, a brute-force tile walk, and the contract with the
// exact pair counts (models/core/work.hpp).
#include <gtest/gtest.h>

#include "models/core/calls.hpp"
#include "models/core/work.hpp"
#include "tests/models/helpers.hpp"

namespace ringsim {
namespace {

using testing::make_workload;

// Walks every tile of a call the way a FlashAttention-style kernel does.
std::uint64_t brute_tiles(const KernelCall& c, std::int64_t tq, std::int64_t tk) {
  std::uint64_t e = 0;
  for (std::int64_t r0 = 0; r0 < c.q; r0 += tq) {
    const auto r1 = std::min(c.q, r0 + tq);  // rows [r0, r1)
    std::int64_t keys = c.k;
    if (c.mask == CallMask::Causal) {
      keys = std::clamp<std::int64_t>(r1 - 1 + c.shift + 1, 0, c.k);  // last row's visible keys
      keys = std::min(c.k, (keys + tk - 1) / tk * tk);                // whole key tiles
    }
    e += static_cast<std::uint64_t>((r1 - r0) * keys);
  }
  return e * c.heads;
}

std::uint64_t brute_pairs(const KernelCall& c) {
  std::uint64_t e = 0;
  for (std::int64_t r = 0; r < c.q; ++r)
    e += c.mask == CallMask::Full
             ? static_cast<std::uint64_t>(c.k)
             : static_cast<std::uint64_t>(std::clamp<std::int64_t>(r + c.shift + 1, 0, c.k));
  return e * c.heads;
}

TEST(Calls, TilesOfACausalSquareByHand) {
  // 256 x 256, tiles 128 x 128: the first query tile runs one key tile, the
  // second two: 128*128 + 128*256 = 49152 of 256*257/2 = 32896 visible.
  const KernelCall sq{256, 256, CallMask::Causal, 0, 1};
  EXPECT_EQ(call_pairs(sq), 32896u);
  EXPECT_EQ(call_tile_pairs(sq, 128, 128), 49152u);
  // FlashAttention-2's head-dim-128 forward tile, 128 x 64: the same here.
  EXPECT_EQ(call_tile_pairs(sq, 128, 64), 49152u);
  // Striped's strict diagonal touches the same tiles, for 256 fewer pairs.
  const KernelCall strict{256, 256, CallMask::Causal, -1, 1};
  EXPECT_EQ(call_pairs(strict), 32896u - 256u);
  EXPECT_EQ(call_tile_pairs(strict, 128, 128), 49152u);
  // 200 x 200: one whole tile (128 x 128) and a short one of 72 rows that
  // reaches all 200 keys (two key tiles, cut at the matrix edge).
  const KernelCall odd{200, 200, CallMask::Causal, 0, 3};
  EXPECT_EQ(call_tile_pairs(odd, 128, 128), 3u * (128 * 128 + 72 * 200));
  // A full call computes every pair; tiles change nothing.
  const KernelCall full{300, 700, CallMask::Full, 0, 2};
  EXPECT_EQ(call_tile_pairs(full, 128, 128), 2u * 300 * 700);
}

TEST(Calls, ClosedFormsMatchABruteForceWalk) {
  for (std::int64_t q : {1, 7, 64, 100, 128, 129, 300})
    for (std::int64_t k : {1, 64, 129, 300, 520})
      for (std::int64_t shift : {-3, -1, 0, 5, 200})
        for (auto [tq, tk] : {std::pair<std::int64_t, std::int64_t>{128, 128},
                              {128, 64},
                              {64, 128},
                              {80, 128},
                              {192, 128},
                              {128, 176}}) {
          const KernelCall c{q, k, CallMask::Causal, shift, 2};
          ASSERT_EQ(call_pairs(c), brute_pairs(c)) << q << " " << k << " " << shift;
          ASSERT_EQ(call_tile_pairs(c, tq, tk), brute_tiles(c, tq, tk))
              << q << " " << k << " " << shift << " " << tq << "x" << tk;
        }
}

TEST(Calls, BottomRightCallsSplitIntoARectangleAndASquare) {
  // Llama 3's all-gather call: 4 query rows at the end of 12 keys.
  const KernelCall c{4, 12, CallMask::Causal, 8, 1};
  const auto p = split_call(c);
  EXPECT_EQ(p.full, (KernelCall{4, 8, CallMask::Full, 0, 1}));
  EXPECT_EQ(p.causal, (KernelCall{4, 4, CallMask::Causal, 0, 1}));
  EXPECT_EQ(call_pairs(p.full) + call_pairs(p.causal), call_pairs(c));
  // A top-left square is its own causal part.
  const KernelCall sq{16, 16, CallMask::Causal, 0, 1};
  EXPECT_EQ(split_call(sq).causal, sq);
  EXPECT_EQ(split_call(sq).full.q, 0);
}

TEST(Calls, EachLayoutsCallsCoverExactlyItsPairs) {
  for (bool causal : {true, false})
    for (Layout l : {Layout::Ring, Layout::Striped, Layout::Zigzag, Layout::Allgather,
                     Layout::Hybrid, Layout::Ulysses}) {
      const auto n = l == Layout::Ulysses ? 8 : 6;
      const auto w = make_workload(n, 64, l, causal);
      for (std::int64_t d = 0; d < n; ++d)
        for (std::int64_t s = 0; s < num_steps(w); ++s) {
          std::uint64_t sum = 0;
          for (const auto& c : step_calls(w, d, s)) sum += call_pairs(c);
          EXPECT_EQ(sum, step_entries(w, d, s)) << to_string(l) << causal << " d" << d << " s" << s;
        }
    }
}

TEST(Calls, ZigzagStepsAreACausalBlockThenHalfShapes) {
  const auto w = make_workload(4, 4096, Layout::Zigzag, true);
  const std::uint64_t H = 32;
  EXPECT_EQ(step_calls(w, 2, 0), (std::vector<KernelCall>{{4096, 4096, CallMask::Causal, 0, H}}));
  // Step 1: device 2 holds device 1's block (earlier): all queries, its first chunk.
  EXPECT_EQ(step_calls(w, 2, 1), (std::vector<KernelCall>{{4096, 2048, CallMask::Full, 0, H}}));
  // Step 3: device 2 holds device 3's block (later): the second query chunk, all keys.
  EXPECT_EQ(step_calls(w, 2, 3), (std::vector<KernelCall>{{2048, 4096, CallMask::Full, 0, H}}));
  // Striped: every step is a causal block, strict for a higher device's keys.
  const auto st = make_workload(4, 4096, Layout::Striped, true);
  EXPECT_EQ(step_calls(st, 2, 3).front().shift, -1);
  EXPECT_EQ(step_calls(st, 2, 1).front().shift, 0);
  // Contiguous ring: a later block gives no call at all.
  const auto ring = make_workload(4, 4096, Layout::Ring, true);
  EXPECT_TRUE(step_calls(ring, 1, 2).empty());
  // All-gather: two bottom-right calls, one per query chunk.
  const auto ag = make_workload(4, 4096, Layout::Allgather, true);
  EXPECT_EQ(step_calls(ag, 1, 0),
            (std::vector<KernelCall>{{2048, 4096, CallMask::Causal, 2048, H},
                                     {2048, 14336, CallMask::Causal, 12288, H}}));
}

}  // namespace
}  // namespace ringsim
