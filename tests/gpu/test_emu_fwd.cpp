// The CUDA forward kernel's own source, compiled for the CPU through the SIMT
// emulator (kernels/cuda/emu), against the float64 reference. Runs everywhere, so
// indexing, masking and fragment-layout mistakes show up before any GPU is at hand.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "kernels/cuda/flash_fwd.cuh"
#include "tests/gpu/attn_case.hpp"

namespace ringsim::kernels::cuda {
namespace {

using testing::Inputs;

struct FwdCase {
  AttnShape shape;
  bool bf16;
  std::vector<std::int64_t> q_pos, k_pos;  // empty: 0..n-1
  bool f32_out = false;
  bool pos_as_array = false;  // pass positions as arrays rather than offset/stride
};

template <bool B, int D, int kMT>
void launch_fwd(const FwdParams& p) {
  using C = FwdConfig<D, kMT>;
  const unsigned tiles = static_cast<unsigned>((p.seq_q + C::kBr - 1) / C::kBr);
  emu::launch({tiles, static_cast<unsigned>(p.heads), 1}, {C::kThreads, 1, 1}, C::kSmemBytes,
              [&] { flash_fwd_kernel<B, D, kMT>(p); });
}

void run_emulated(const FwdCase& c, int mt, const Inputs& in, std::vector<std::uint16_t>& o,
                  std::vector<float>& o32, std::vector<float>& lse) {
  const auto& s = c.shape;
  FwdParams p;
  p.q = in.q.data();
  p.k = in.k.data();
  p.v = in.v.data();
  o.assign(static_cast<size_t>(s.seq_q * s.heads * s.head_dim), 0x7fff);  // NaN poison
  o32.assign(o.size(), NAN);
  lse.assign(static_cast<size_t>(s.seq_q * s.heads), NAN);
  if (c.f32_out)
    p.o_f32 = o32.data();
  else
    p.o = o.data();
  p.lse = lse.data();
  p.seq_q = s.seq_q;
  p.seq_k = s.seq_k;
  p.heads = s.heads;
  p.kv_heads = s.kv_heads;
  p.causal = s.causal;
  p.scale = static_cast<float>(s.scale());
  auto set_pos = [&](PosMap& m, const std::vector<std::int64_t>& v) {
    if (v.empty()) return;
    if (c.pos_as_array) {
      m.array = v.data();
    } else {  // the cases give affine positions
      m.offset = v[0];
      m.stride = v.size() > 1 ? v[1] - v[0] : 1;
    }
  };
  set_pos(p.q_pos, c.q_pos);
  set_pos(p.k_pos, c.k_pos);
  const int key = (c.bf16 ? 100 : 0) + s.head_dim + mt;
  switch (key) {
    case 165:
      launch_fwd<true, 64, 1>(p);
      break;
    case 166:
      launch_fwd<true, 64, 2>(p);
      break;
    case 229:
      launch_fwd<true, 128, 1>(p);
      break;
    case 230:
      launch_fwd<true, 128, 2>(p);
      break;
    case 65:
      launch_fwd<false, 64, 1>(p);
      break;
    case 66:
      launch_fwd<false, 64, 2>(p);
      break;
    case 129:
      launch_fwd<false, 128, 1>(p);
      break;
    case 130:
      launch_fwd<false, 128, 2>(p);
      break;
    default:
      FAIL() << "no such variant";
  }
}

void check(const FwdCase& c, std::uint64_t seed) {
  const auto& s = c.shape;
  const Inputs in = testing::make_inputs(s, c.bf16, seed);
  const auto qp = c.q_pos.empty() ? testing::iota_pos(s.seq_q) : c.q_pos;
  const auto kp = c.k_pos.empty() ? testing::iota_pos(s.seq_k) : c.k_pos;
  const auto exact = reference_forward(s, in.qd, in.kd, in.vd, qp, kp);
  const auto low = testing::lowprec_forward(s, in, c.bf16, qp, kp);
  for (int mt : {1, 2}) {  // both kernel variants: 16 and 32 rows per warp
    std::vector<std::uint16_t> o;
    std::vector<float> o32, lse;
    run_emulated(c, mt, in, o, o32, lse);
    const auto vo = c.f32_out
                        ? testing::judge(o32, low.o, exact.o)
                        : testing::judge(testing::storage_to_double(o, c.bf16), low.o, exact.o);
    const auto vl = testing::judge(lse, low.lse, exact.lse);
    std::printf("  rows%d O   %s\n  rows%d LSE %s\n", 16 * mt, vo.str().c_str(), 16 * mt,
                vl.str().c_str());
    EXPECT_TRUE(vo.ok()) << "rows" << 16 * mt << " O: " << vo.str();
    EXPECT_TRUE(vl.ok()) << "rows" << 16 * mt << " LSE: " << vl.str();
  }
}

TEST(EmuForward, Bf16D64NonCausalRaggedLengths) {
  // Lengths not multiples of the 64-row tiles exercise zero-fill and the key mask.
  check({{100, 77, 2, 2, 64, false}, true, {}, {}}, 1);
}

TEST(EmuForward, Bf16D128CausalGqa) {
  check({{129, 129, 4, 2, 128, true}, true, {}, {}}, 2);  // 129: a tile starts at the last row
}

TEST(EmuForward, Fp16D64CausalFloatOutput) {
  FwdCase c{{96, 96, 2, 1, 64, true}, false, {}, {}};
  c.f32_out = true;
  check(c, 3);
}

TEST(EmuForward, RingStepOffsetsWithFullyMaskedRows) {
  // Queries at 64.., keys at 100..: the first 36 query rows see no key at all
  // (O = 0, LSE = -inf), the rest see a prefix: a ring step's partial block.
  check({{80, 70, 2, 2, 64, true}, true, testing::iota_pos(80, 64), testing::iota_pos(70, 100)}, 4);
}

TEST(EmuForward, StripedPositionArrays) {
  // Striped layout, rank 1 of 4: queries at 1, 5, 9, ..., keys of rank 3 at 3, 7, 11, ...
  FwdCase c{
      {70, 70, 2, 1, 128, true}, true, testing::iota_pos(70, 1, 4), testing::iota_pos(70, 3, 4)};
  c.pos_as_array = true;
  check(c, 5);
}

}  // namespace
}  // namespace ringsim::kernels::cuda
