// The ring plan (kernels/cuda/ring_plan.hpp) with the emulated forward and LSE-merge
// kernels: n virtual devices, each step's partial result merged in, must give full
// causal attention for every layout. Mirrors kernels/cuda/ring_emulator.cu on the CPU.
#include <gtest/gtest.h>

#include <set>

#include "kernels/cuda/flash_fwd.cuh"
#include "kernels/cuda/lse_merge.cuh"
#include "kernels/cuda/ring_plan.hpp"
#include "tests/gpu/attn_case.hpp"

namespace ringsim::kernels::cuda {
namespace {

TEST(RingPlan, EveryTokenOnExactlyOneDevice) {
  for (auto l : {RingLayout::Ring, RingLayout::Zigzag, RingLayout::Striped}) {
    std::set<std::int64_t> seen;
    for (int r = 0; r < 4; ++r) {
      const auto t = layout_tokens(l, 64, 4, r);
      EXPECT_EQ(t.size(), 16u);
      EXPECT_TRUE(std::is_sorted(t.begin(), t.end())) << layout_name(l);
      seen.insert(t.begin(), t.end());
    }
    EXPECT_EQ(seen.size(), 64u) << layout_name(l);
  }
  EXPECT_EQ(layout_tokens(RingLayout::Zigzag, 16, 2, 0),
            (std::vector<std::int64_t>{0, 1, 2, 3, 12, 13, 14, 15}));
  EXPECT_THROW(layout_tokens(RingLayout::Zigzag, 12, 4, 0), InputError);
  EXPECT_EQ(kv_source(0, 1, 4), 3);
}

// The kernels place tokens by the models' one map (models/core/tokens.hpp),
// whose pair counts tests/models/test_work.cpp checks against shard_pairs:
// per layout, the emulator's placement is that map, token for token.
TEST(RingPlan, PlacementIsTheModelsTokenMap) {
  for (auto l : {RingLayout::Ring, RingLayout::Zigzag, RingLayout::Striped})
    for (int n : {1, 2, 3, 4})
      for (int r = 0; r < n; ++r) {
        const std::int64_t seq = 24 * n;
        EXPECT_EQ(layout_tokens(l, seq, n, r), device_tokens(l, n, seq / n, r))
            << layout_name(l) << " n=" << n << " r=" << r;
        for (int s = 0; s < n; ++s) EXPECT_EQ(kv_source(r, s, n), ring_kv_source(n, r, s));
      }
}

void ring_check(RingLayout layout, int n, std::int64_t seq, int head_dim) {
  const AttnShape s{seq, seq, 2, 1, head_dim, true};
  const auto in = testing::make_inputs(s, true, 21 + n);
  const auto all = testing::iota_pos(seq);
  const auto exact = reference_forward(s, in.qd, in.kd, in.vd, all, all);
  const auto low = testing::lowprec_forward(s, in, true, all, all);
  const std::int64_t c = seq / n, hd = s.heads * head_dim, kvd = s.kv_heads * head_dim;
  std::vector<std::uint16_t> out(in.q.size(), 0x7fff);
  std::vector<float> out_lse(static_cast<size_t>(seq * s.heads), NAN);
  std::vector<std::vector<std::int64_t>> tok(n);
  std::vector<std::vector<std::uint16_t>> q(n), k(n), v(n);
  for (int r = 0; r < n; ++r) {
    tok[r] = layout_tokens(layout, seq, n, r);
    for (auto i : tok[r]) {
      q[r].insert(q[r].end(), in.q.begin() + i * hd, in.q.begin() + (i + 1) * hd);
      k[r].insert(k[r].end(), in.k.begin() + i * kvd, in.k.begin() + (i + 1) * kvd);
      v[r].insert(v[r].end(), in.v.begin() + i * kvd, in.v.begin() + (i + 1) * kvd);
    }
  }
  for (int r = 0; r < n; ++r) {
    std::vector<float> acc_o(static_cast<size_t>(c * hd), 0.f), part_o(acc_o.size());
    std::vector<float> acc_lse(static_cast<size_t>(c * s.heads), -INFINITY),
        part_lse(acc_lse.size());
    for (int step = 0; step < n; ++step) {
      const int src = kv_source(r, step, n);
      FwdParams p;
      p.q = q[r].data();
      p.k = k[src].data();
      p.v = v[src].data();
      p.o_f32 = part_o.data();
      p.lse = part_lse.data();
      p.seq_q = p.seq_k = c;
      p.heads = s.heads;
      p.kv_heads = s.kv_heads;
      p.causal = true;
      p.scale = static_cast<float>(s.scale());
      p.q_pos.array = tok[r].data();
      p.k_pos.array = tok[src].data();
      // Alternate the two kernel variants across steps: both must merge exactly.
      if (head_dim == 64)
        emu::launch({static_cast<unsigned>((c + 63) / 64), 2, 1}, {128, 1, 1},
                    FwdConfig<64, 1>::kSmemBytes, [&] { flash_fwd_kernel<true, 64, 1>(p); });
      else
        emu::launch({static_cast<unsigned>((c + 127) / 128), 2, 1}, {128, 1, 1},
                    FwdConfig<128, 2>::kSmemBytes, [&] { flash_fwd_kernel<true, 128, 2>(p); });
      const std::int64_t rows = c * s.heads;
      emu::launch({static_cast<unsigned>((rows + 7) / 8), 1, 1}, {256, 1, 1}, 0, [&] {
        lse_merge_kernel(acc_o.data(), acc_lse.data(), part_o.data(), part_lse.data(), rows,
                         head_dim);
      });
    }
    for (std::int64_t i = 0; i < c; ++i) {
      const std::int64_t gi = tok[r][i];
      for (std::int64_t e = 0; e < hd; ++e) out[gi * hd + e] = float_to_bf16(acc_o[i * hd + e]);
      for (int h = 0; h < s.heads; ++h) out_lse[gi * s.heads + h] = acc_lse[i * s.heads + h];
    }
  }
  const auto vo = testing::judge(testing::storage_to_double(out, true), low.o, exact.o);
  const auto vl = testing::judge(out_lse, low.lse, exact.lse);
  EXPECT_TRUE(vo.ok()) << layout_name(layout) << " O: " << vo.str();
  EXPECT_TRUE(vl.ok()) << layout_name(layout) << " LSE: " << vl.str();
}

TEST(EmuRing, RingFourDevices) {
  ring_check(RingLayout::Ring, 4, 256, 64);
}
TEST(EmuRing, ZigzagFourDevices) {
  ring_check(RingLayout::Zigzag, 4, 256, 64);
}
TEST(EmuRing, StripedThreeDevicesD128) {
  ring_check(RingLayout::Striped, 3, 192, 128);
}

}  // namespace
}  // namespace ringsim::kernels::cuda
