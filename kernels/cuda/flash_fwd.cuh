#pragma once
// FlashAttention-2 forward (Dao 2023, "FlashAttention-2", Algorithm 1) on mma.sync.
//
// One block = one head x kBr query rows, 4 warps; each warp owns 16 or 32 rows, so the
// softmax statistics of a row never leave the 4 lanes that hold it (no shared-
// memory reductions: FA2's "split Q across warps"). Per key tile of kBc keys:
//   S = Q K^T          (Q fragments stay in registers for the whole loop)
//   online softmax     (running max m and sum l per row, base-2 exponentials)
//   O = O * alpha + P V (P is re-packed from S's accumulator registers straight
//                        into A fragments: the C layout of two n8 tiles equals
//                        the A layout of one k16 tile, see device_ops.cuh)
// K/V tiles are double-buffered with cp.async so the next tile loads while this
// one computes. O is divided by l once at the end (FA2's deferred rescaling).
#include <cmath>
#include <cstdint>

#include "kernels/cuda/device_ops.cuh"
#include "kernels/cuda/params.hpp"

namespace ringsim::kernels::cuda {

// kMT = 16-row m-tiles per warp. kMT = 1 keeps Q's fragments in registers for the
// whole key loop; kMT = 2 (FA2's choice for d = 128) reuses every K/V fragment read
// from shared memory for two MMAs, halving shared-memory traffic per FLOP, and
// re-reads Q's fragments from shared memory instead (registers would not hold both).
template <int D, int kMT>
struct FwdConfig {
  static_assert(D == 64 || D == 128, "head_dim 64 or 128");
  static_assert(kMT == 1 || kMT == 2, "one or two m-tiles per warp");
  static constexpr int kWarps = 4, kThreads = 32 * kWarps;
  static constexpr int kRowsPerWarp = 16 * kMT;
  static constexpr int kBr = kRowsPerWarp * kWarps;  // query rows per block
  // Keys per tile. At d = 128 with 32 rows per warp, O (128 floats per lane) and
  // S (64 for 64 keys) would not fit in 255 registers beside the fragments; 32-key
  // tiles (FA2's sm86 choice) leave room.
  static constexpr int kBc = (D == 128 && kMT == 2) ? 32 : 64;
  static constexpr bool kQInRegs = kMT == 1;
  // Rows padded by 16 bytes so the 8 row addresses of an ldmatrix hit 8 different
  // bank groups (a 128- or 256-byte stride would put all 8 on the same banks).
  static constexpr int kLd = D + 8;
  static constexpr int kSmemBytes = (kBr + 4 * kBc) * kLd * 2;  // Q, K x2, V x2
};

namespace dev {

// cp.async rows [row0, row0 + R) of head `head` of a [tokens, heads, D] tensor into
// shared memory with leading dimension D + 8; rows at or past `rows` read as 0.
template <int R, int D, int kThreads>
RS_DEV void load_rows(std::uint16_t* dst, const std::uint16_t* src, std::int64_t row0,
                      std::int64_t rows, std::int64_t row_stride, int head) {
  constexpr int kChunks = D / 8;
  for (int c = static_cast<int>(tid()); c < R * kChunks; c += kThreads) {
    const int r = c / kChunks, col = (c % kChunks) * 8;
    const std::int64_t gr = row0 + r;
    const bool valid = gr < rows;
    const std::uint16_t* s = valid ? src + gr * row_stride + head * D + col : src;
    cp_async16(dst + r * (D + 8) + col, s, valid);
  }
}

// Number of key tiles of size tile whose first key position is <= q_pos_max
// (positions are non-decreasing, so these are a prefix).
RS_DEV std::int64_t visible_tiles(const PosMap& k_pos, std::int64_t seq_k, int tile,
                                  std::int64_t q_pos_max) {
  std::int64_t lo = 0, hi = (seq_k + tile - 1) / tile;
  while (lo < hi) {
    const std::int64_t mid = (lo + hi) / 2;
    if (k_pos.at(mid * tile) <= q_pos_max)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

}  // namespace dev

template <bool kBf16, int D, int kMT>
RS_KERNEL void RS_LAUNCH_BOUNDS(128) flash_fwd_kernel(const FwdParams p) {
  using namespace dev;
  using C = FwdConfig<D, kMT>;
  static_assert(C::kThreads == 128, "launch bounds above");
  constexpr int kBr = C::kBr, kBc = C::kBc, kLd = C::kLd;
  constexpr float kLog2e = 1.4426950408889634f, kLn2 = 0.6931471805599453f;

  // Causal work grows with the query tile; hand out the heavy tiles first.
  const std::int64_t q0 = static_cast<std::int64_t>(grid_x() - 1 - bid_x()) * kBr;
  const int h = static_cast<int>(bid_y());
  const int hk = h / (p.heads / p.kv_heads);
  const std::int64_t q_stride = static_cast<std::int64_t>(p.heads) * D;
  const std::int64_t kv_stride = static_cast<std::int64_t>(p.kv_heads) * D;

  std::uint16_t* q_s = reinterpret_cast<std::uint16_t*>(smem());
  std::uint16_t* k_s = q_s + kBr * kLd;
  std::uint16_t* v_s = k_s + 2 * kBc * kLd;

  const std::int64_t q_last = (q0 + kBr < p.seq_q ? q0 + kBr : p.seq_q) - 1;
  const std::int64_t q_pos_min = p.q_pos.at(q0), q_pos_max = p.q_pos.at(q_last);
  const std::int64_t n_tiles =
      p.causal ? visible_tiles(p.k_pos, p.seq_k, kBc, q_pos_max) : (p.seq_k + kBc - 1) / kBc;

  load_rows<kBr, D, C::kThreads>(q_s, p.q, q0, p.seq_q, q_stride, h);
  if (n_tiles > 0) {
    load_rows<kBc, D, C::kThreads>(k_s, p.k, 0, p.seq_k, kv_stride, hk);
    load_rows<kBc, D, C::kThreads>(v_s, p.v, 0, p.seq_k, kv_stride, hk);
  }
  cp_async_commit();
  cp_async_wait<0>();
  sync_block();

  const int w = static_cast<int>(warp()), ln = static_cast<int>(lane());
  const int g = ln / 4, t = ln % 4;      // fragment row group and column pair
  const int mat = ln / 8, r8 = ln % 8;   // which 8x8 matrix this lane addresses in ldmatrix
  const int wrow = w * C::kRowsPerWarp;  // this warp's first row in the block

  // Q fragments for the whole loop (kMT = 1 only; otherwise re-read per k step).
  [[maybe_unused]] std::uint32_t qf[C::kQInRegs ? D / 16 : 1][4];
  if constexpr (C::kQInRegs) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
      ldmatrix_x4(qf[kk], q_s + (wrow + (mat & 1) * 8 + r8) * kLd + kk * 16 + (mat >> 1) * 8);
  }

  float o[kMT][D / 8][4];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int i = 0; i < D / 8; ++i) o[mt][i][0] = o[mt][i][1] = o[mt][i][2] = o[mt][i][3] = 0.f;
  // Row statistics, for fragment rows g (index 0) and g + 8 (index 1) of each m-tile.
  float m_run[kMT][2], l_run[kMT][2];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      m_run[mt][r] = -INFINITY;
      l_run[mt][r] = 0.f;
    }
  const float scale_log2 = p.scale * kLog2e;

  for (std::int64_t j = 0; j < n_tiles; ++j) {
    const int buf = static_cast<int>(j & 1);
    if (j + 1 < n_tiles) {
      load_rows<kBc, D, C::kThreads>(k_s + (buf ^ 1) * kBc * kLd, p.k, (j + 1) * kBc, p.seq_k,
                                     kv_stride, hk);
      load_rows<kBc, D, C::kThreads>(v_s + (buf ^ 1) * kBc * kLd, p.v, (j + 1) * kBc, p.seq_k,
                                     kv_stride, hk);
    }
    cp_async_commit();  // possibly empty, so that "all but the newest" means tile j
    cp_async_wait<1>();
    sync_block();
    const std::uint16_t* kb = k_s + buf * kBc * kLd;
    const std::uint16_t* vb = v_s + buf * kBc * kLd;

    float s[kMT][kBc / 8][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int i = 0; i < kBc / 8; ++i) s[mt][i][0] = s[mt][i][1] = s[mt][i][2] = s[mt][i][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      [[maybe_unused]] std::uint32_t qa[kMT][4];
      if constexpr (!C::kQInRegs) {
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt)
          ldmatrix_x4(qa[mt],
                      q_s + (wrow + mt * 16 + (mat & 1) * 8 + r8) * kLd + kk * 16 + (mat >> 1) * 8);
      }
#pragma unroll
      for (int np = 0; np < kBc / 16; ++np) {
        // K is stored [key][d] = B^T, so plain ldmatrix yields B fragments; the 4
        // matrices are (keys +0, d +0), (keys +0, d +8), (keys +8, d +0), (keys +8, d +8).
        std::uint32_t b[4];
        ldmatrix_x4(b, kb + (np * 16 + (mat >> 1) * 8 + r8) * kLd + kk * 16 + (mat & 1) * 8);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          if constexpr (C::kQInRegs) {
            mma16816<kBf16>(s[mt][2 * np], qf[kk], b[0], b[1]);
            mma16816<kBf16>(s[mt][2 * np + 1], qf[kk], b[2], b[3]);
          } else {
            mma16816<kBf16>(s[mt][2 * np], qa[mt], b[0], b[1]);
            mma16816<kBf16>(s[mt][2 * np + 1], qa[mt], b[2], b[3]);
          }
        }
      }
    }

    const std::int64_t k0 = j * kBc;
    const std::int64_t k_end = k0 + kBc < p.seq_k ? k0 + kBc : p.seq_k;
    const bool need_mask = k0 + kBc > p.seq_k || (p.causal && p.k_pos.at(k_end - 1) > q_pos_min);
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kBc / 8; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) s[mt][nt][i] *= scale_log2;
    if (need_mask) {
      // Query positions are looked up here rather than kept: registers are scarce
      // and only diagonal or ragged tiles get here.
      std::int64_t qp[kMT][2];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const std::int64_t row = q0 + wrow + mt * 16 + g + 8 * r;
          qp[mt][r] = p.q_pos.at(row < p.seq_q ? row : p.seq_q - 1);
        }
#pragma unroll
      for (int nt = 0; nt < kBc / 8; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const std::int64_t col = k0 + nt * 8 + 2 * t + (i & 1);
          const bool out = col >= p.seq_k;
          const std::int64_t kp = out ? 0 : p.k_pos.at(col);
#pragma unroll
          for (int mt = 0; mt < kMT; ++mt)
            if (out || (p.causal && kp > qp[mt][i / 2])) s[mt][nt][i] = -INFINITY;
        }
    }

#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float mx = -INFINITY;
#pragma unroll
        for (int nt = 0; nt < kBc / 8; ++nt)
          mx = fmaxf(mx, fmaxf(s[mt][nt][2 * r], s[mt][nt][2 * r + 1]));
        mx = fmaxf(mx, shfl_xor(mx, 1));  // the 4 lanes of a row group hold one row
        mx = fmaxf(mx, shfl_xor(mx, 2));
        const float m_new = fmaxf(m_run[mt][r], mx);
        // A row with nothing visible yet keeps m = -inf; subtract 0 then so that
        // exp2(-inf - m) is 0 rather than NaN.
        const float m_use = m_new == -INFINITY ? 0.f : m_new;
        const float alpha = exp2_fast(m_run[mt][r] - m_use);
        m_run[mt][r] = m_new;
        float sum = 0.f;
#pragma unroll
        for (int nt = 0; nt < kBc / 8; ++nt) {
          s[mt][nt][2 * r] = exp2_fast(s[mt][nt][2 * r] - m_use);
          s[mt][nt][2 * r + 1] = exp2_fast(s[mt][nt][2 * r + 1] - m_use);
          sum += s[mt][nt][2 * r] + s[mt][nt][2 * r + 1];
        }
        l_run[mt][r] = l_run[mt][r] * alpha + sum;  // lane-partial; reduced at the end
#pragma unroll
        for (int dn = 0; dn < D / 8; ++dn) {
          o[mt][dn][2 * r] *= alpha;
          o[mt][dn][2 * r + 1] *= alpha;
        }
      }

#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      std::uint32_t a[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        a[mt][0] = pack2<kBf16>(s[mt][2 * kk][0], s[mt][2 * kk][1]);
        a[mt][1] = pack2<kBf16>(s[mt][2 * kk][2], s[mt][2 * kk][3]);
        a[mt][2] = pack2<kBf16>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
        a[mt][3] = pack2<kBf16>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
      }
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        // V is stored [key][d] = B, so ldmatrix.trans yields B fragments; matrices
        // (keys +0, d +0), (keys +8, d +0), (keys +0, d +8), (keys +8, d +8).
        std::uint32_t b[4];
        ldmatrix_x4_trans(b, vb + (kk * 16 + (mat & 1) * 8 + r8) * kLd + dp * 16 + (mat >> 1) * 8);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          mma16816<kBf16>(o[mt][2 * dp], a[mt], b[0], b[1]);
          mma16816<kBf16>(o[mt][2 * dp + 1], a[mt], b[2], b[3]);
        }
      }
    }
    sync_block();  // all warps are done with this buffer before tile j + 2 refills it
  }

#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float l = l_run[mt][r];
      l += shfl_xor(l, 1);
      l += shfl_xor(l, 2);
      const std::int64_t row = q0 + wrow + mt * 16 + g + 8 * r;
      if (row >= p.seq_q) continue;
      const float inv = l > 0.f ? 1.f / l : 0.f;
      if (t == 0) p.lse[row * p.heads + h] = l > 0.f ? (m_run[mt][r] + log2f(l)) * kLn2 : -INFINITY;
      const std::int64_t base = row * q_stride + static_cast<std::int64_t>(h) * D + 2 * t;
#pragma unroll
      for (int dn = 0; dn < D / 8; ++dn) {
        const float x0 = o[mt][dn][2 * r] * inv, x1 = o[mt][dn][2 * r + 1] * inv;
        if (p.o_f32) {
          p.o_f32[base + dn * 8] = x0;
          p.o_f32[base + dn * 8 + 1] = x1;
        } else {
          *reinterpret_cast<std::uint32_t*>(p.o + base + dn * 8) = pack2<kBf16>(x0, x1);
        }
      }
    }
}

}  // namespace ringsim::kernels::cuda
