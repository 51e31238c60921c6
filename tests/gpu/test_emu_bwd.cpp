// The CUDA backward kernels (delta, then dQ/dK/dV) compiled for the CPU through the
// SIMT emulator, fed by the emulated forward, against the float64 reference gradients.
#include <gtest/gtest.h>

#include <cstdio>

#include "kernels/cuda/flash_bwd.cuh"
#include "kernels/cuda/flash_fwd.cuh"
#include "tests/gpu/attn_case.hpp"

namespace ringsim::kernels::cuda {
namespace {

struct BwdCase {
  AttnShape shape;
  bool bf16;
  std::int64_t q_offset = 0, k_offset = 0, stride = 1;
};

template <bool B, int D>
void run(const BwdCase& c, const testing::Inputs& in, std::vector<float>& dq,
         std::vector<float>& dk, std::vector<float>& dv) {
  const auto& s = c.shape;
  std::vector<std::uint16_t> o(in.q.size(), 0x7fff);
  std::vector<float> lse(static_cast<size_t>(s.seq_q * s.heads), NAN), delta(lse.size(), NAN);
  FwdParams f;
  f.q = in.q.data();
  f.k = in.k.data();
  f.v = in.v.data();
  f.o = o.data();
  f.lse = lse.data();
  f.seq_q = s.seq_q;
  f.seq_k = s.seq_k;
  f.heads = s.heads;
  f.kv_heads = s.kv_heads;
  f.causal = s.causal;
  f.scale = static_cast<float>(s.scale());
  f.q_pos = {nullptr, c.q_offset, c.stride};
  f.k_pos = {nullptr, c.k_offset, c.stride};
  using FC = FwdConfig<D, 2>;
  emu::launch(
      {static_cast<unsigned>((s.seq_q + FC::kBr - 1) / FC::kBr), static_cast<unsigned>(s.heads), 1},
      {128, 1, 1}, FC::kSmemBytes, [&] { flash_fwd_kernel<B, D, 2>(f); });

  dq.assign(in.q.size(), 0.f);
  dk.assign(in.k.size(), 0.f);
  dv.assign(in.v.size(), 0.f);
  BwdParams p = backward_of(f, in.d_o.data(), dq.data(), dk.data(), dv.data());
  p.delta = delta.data();
  const unsigned rows = static_cast<unsigned>(s.seq_q * s.heads);
  emu::launch({(rows + 7) / 8, 1, 1}, {256, 1, 1}, 0,
              [&] { bwd_delta_kernel<B, D>(p, delta.data()); });
  emu::launch({static_cast<unsigned>((s.seq_k + 63) / 64), static_cast<unsigned>(s.kv_heads), 1},
              {256, 1, 1}, BwdConfig<D>::kSmemBytes, [&] { flash_bwd_kernel<B, D>(p); });
}

void check(const BwdCase& c, std::uint64_t seed) {
  const auto& s = c.shape;
  const auto in = testing::make_inputs(s, c.bf16, seed);
  const auto qp = testing::iota_pos(s.seq_q, c.q_offset, c.stride);
  const auto kp = testing::iota_pos(s.seq_k, c.k_offset, c.stride);
  const auto exact = reference_backward(s, in.qd, in.kd, in.vd, in.dod, qp, kp);
  const auto low = testing::lowprec_backward(s, in, c.bf16, qp, kp);
  std::vector<float> dq, dk, dv;
  if (c.bf16 && s.head_dim == 64) run<true, 64>(c, in, dq, dk, dv);
  if (c.bf16 && s.head_dim == 128) run<true, 128>(c, in, dq, dk, dv);
  if (!c.bf16 && s.head_dim == 64) run<false, 64>(c, in, dq, dk, dv);
  if (!c.bf16 && s.head_dim == 128) run<false, 128>(c, in, dq, dk, dv);
  const auto vq = testing::judge(dq, low.dq, exact.dq);
  const auto vk = testing::judge(dk, low.dk, exact.dk);
  const auto vv = testing::judge(dv, low.dv, exact.dv);
  std::printf("  dQ %s\n  dK %s\n  dV %s\n", vq.str().c_str(), vk.str().c_str(), vv.str().c_str());
  EXPECT_TRUE(vq.ok()) << "dQ: " << vq.str();
  EXPECT_TRUE(vk.ok()) << "dK: " << vk.str();
  EXPECT_TRUE(vv.ok()) << "dV: " << vv.str();
}

TEST(EmuBackward, Bf16D64NonCausalRagged) {
  check({{100, 77, 2, 2, 64, false}, true}, 11);
}

TEST(EmuBackward, Bf16D128CausalGqa) {
  check({{129, 129, 4, 2, 128, true}, true}, 12);
}

TEST(EmuBackward, Fp16D64CausalRingStep) {
  // Queries at 64.., keys at 100..: some query rows see nothing (LSE -inf).
  check({{80, 70, 2, 1, 64, true}, false, 64, 100}, 13);
}

}  // namespace
}  // namespace ringsim::kernels::cuda
