#pragma once
// FlashAttention-2 backward (Dao 2023, Algorithm 2): recompute P from Q, K and the
// forward's LSE instead of storing it. Correctness first, speed second:
//   * one block = one KV head x kBc keys, 8 warps; it loops over the query heads
//     of its GQA group and over all query tiles, keeping dK and dV for its keys in
//     registers (no atomics for them; each key tile has exactly one owner);
//   * per query tile: S = Q K^T and dP = dO V^T on tensor cores, then
//     P = exp(S * scale - LSE), dS = P (dP - delta) * scale go to shared memory in
//     the input type (they are the next products' operands);
//   * dV += P^T dO, dK += dS^T Q (register accumulators), dQ += dS K added to an
//     fp32 buffer with atomics, as FA2 does.
// No double buffering: each query tile is loaded, then computed.
#include <cmath>
#include <cstdint>

#include "kernels/cuda/device_ops.cuh"
#include "kernels/cuda/flash_fwd.cuh"
#include "kernels/cuda/fragments.cuh"
#include "kernels/cuda/params.hpp"

namespace ringsim::kernels::cuda {

template <int D>
struct BwdConfig {
  static_assert(D == 64 || D == 128, "head_dim 64 or 128");
  static constexpr int kWarps = 8, kThreads = 32 * kWarps;
  static constexpr int kBr = 64, kBc = 64;  // query rows, keys per tile
  static constexpr int kLd = D + 8, kLdP = kBc + 8;
  static constexpr int kSmemBytes = (2 * kBc + 2 * kBr) * kLd * 2  // K, V, Q, dO
                                    + 2 * kBr * kLdP * 2           // P, dS
                                    + 2 * kBr * 4;                 // LSE, delta
};

// delta[i, h] = sum_d dO[i, h, d] * O[i, h, d]: one warp per (token, head) row.
template <bool kBf16, int D>
RS_KERNEL void RS_LAUNCH_BOUNDS(256) bwd_delta_kernel(const BwdParams p, float* delta) {
  using namespace dev;
  const std::int64_t row = static_cast<std::int64_t>(bid_x()) * 8 + warp();
  const bool valid = row < p.seq_q * p.heads;
  float acc = 0.f;
  if (valid)
    for (int c = static_cast<int>(lane()); c < D; c += 32)
      acc += to_float<kBf16>(p.d_o[row * D + c]) * to_float<kBf16>(p.o[row * D + c]);
  for (int m = 16; m > 0; m /= 2) acc += shfl_xor(acc, m);
  if (valid && lane() == 0) delta[row] = acc;
}

template <bool kBf16, int D>
RS_KERNEL void RS_LAUNCH_BOUNDS(BwdConfig<D>::kThreads) flash_bwd_kernel(const BwdParams p) {
  using namespace dev;
  using C = BwdConfig<D>;
  constexpr int kBr = C::kBr, kBc = C::kBc, kLd = C::kLd, kLdP = C::kLdP;
  constexpr int kHalf = D / 2;  // each warp owns half of the head dimension of its rows
  constexpr float kLog2e = 1.4426950408889634f;

  const std::int64_t k0 = static_cast<std::int64_t>(bid_x()) * kBc;
  const int hk = static_cast<int>(bid_y());
  const int group = p.heads / p.kv_heads;
  const std::int64_t q_stride = static_cast<std::int64_t>(p.heads) * D;
  const std::int64_t kv_stride = static_cast<std::int64_t>(p.kv_heads) * D;

  std::uint16_t* k_s = reinterpret_cast<std::uint16_t*>(smem());
  std::uint16_t* v_s = k_s + kBc * kLd;
  std::uint16_t* q_s = v_s + kBc * kLd;
  std::uint16_t* do_s = q_s + kBr * kLd;
  std::uint16_t* p_s = do_s + kBr * kLd;
  std::uint16_t* ds_s = p_s + kBr * kLdP;
  float* lse_s = reinterpret_cast<float*>(ds_s + kBr * kLdP);
  float* delta_s = lse_s + kBr;

  load_rows<kBc, D, C::kThreads>(k_s, p.k, k0, p.seq_k, kv_stride, hk);
  load_rows<kBc, D, C::kThreads>(v_s, p.v, k0, p.seq_k, kv_stride, hk);
  cp_async_commit();

  const int w = static_cast<int>(warp()), ln = static_cast<int>(lane());
  const int g = ln / 4, t = ln % 4;
  const int wr = (w % 4) * 16;     // this warp's 16 rows (queries in S/dQ, keys in dK/dV)
  const int wc = (w / 4) * 32;     // its 32 key columns of S / dP
  const int wd = (w / 4) * kHalf;  // its half of the head dimension in dK, dV, dQ

  float dk_acc[kHalf / 8][4], dv_acc[kHalf / 8][4];
#pragma unroll
  for (int i = 0; i < kHalf / 8; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) dk_acc[i][e] = dv_acc[i][e] = 0.f;

  const std::int64_t k_pos_min = p.k_pos.at(k0 < p.seq_k ? k0 : p.seq_k - 1);
  const float scale_log2 = p.scale * kLog2e;
  const std::int64_t n_q_tiles = (p.seq_q + kBr - 1) / kBr;

  for (int gi = 0; gi < group; ++gi) {
    const int h = hk * group + gi;
    for (std::int64_t qt = 0; qt < n_q_tiles; ++qt) {
      const std::int64_t q0 = qt * kBr;
      const std::int64_t q_last = (q0 + kBr < p.seq_q ? q0 + kBr : p.seq_q) - 1;
      if (p.causal && p.q_pos.at(q_last) < k_pos_min) continue;  // tile sees none of our keys

      load_rows<kBr, D, C::kThreads>(q_s, p.q, q0, p.seq_q, q_stride, h);
      load_rows<kBr, D, C::kThreads>(do_s, p.d_o, q0, p.seq_q, q_stride, h);
      cp_async_commit();
      for (int r = static_cast<int>(tid()); r < kBr; r += C::kThreads) {
        const bool in = q0 + r < p.seq_q;
        lse_s[r] = in ? p.lse[(q0 + r) * p.heads + h] : -INFINITY;
        delta_s[r] = in ? p.delta[(q0 + r) * p.heads + h] : 0.f;
      }
      cp_async_wait<0>();
      sync_block();

      // S and dP for this warp's 16 x 32 piece.
      float s[4][4], dp[4][4];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[i][e] = dp[i][e] = 0.f;
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        std::uint32_t aq[4], ado[4];
        load_a(aq, q_s, kLd, wr, kk * 16);
        load_a(ado, do_s, kLd, wr, kk * 16);
#pragma unroll
        for (int np = 0; np < 2; ++np) {
          std::uint32_t bk[4], bv[4];
          load_b_nmajor(bk, k_s, kLd, wc + np * 16, kk * 16);
          load_b_nmajor(bv, v_s, kLd, wc + np * 16, kk * 16);
          mma16816<kBf16>(s[2 * np], aq, bk[0], bk[1]);
          mma16816<kBf16>(s[2 * np + 1], aq, bk[2], bk[3]);
          mma16816<kBf16>(dp[2 * np], ado, bv[0], bv[1]);
          mma16816<kBf16>(dp[2 * np + 1], ado, bv[2], bv[3]);
        }
      }
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {  // fragment rows g and g + 8
          const int row = wr + g + 8 * hr;
          const std::int64_t qi = q0 + row;
          const float lse2 = lse_s[row] * kLog2e, dlt = delta_s[row];
          float pv[2], dsv[2];
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int col = wc + nt * 8 + 2 * t + e;
            const std::int64_t kj = k0 + col;
            const bool masked = qi >= p.seq_q || kj >= p.seq_k || lse_s[row] == -INFINITY ||
                                (p.causal && p.k_pos.at(kj) > p.q_pos.at(qi));
            pv[e] = masked ? 0.f : exp2_fast(s[nt][2 * hr + e] * scale_log2 - lse2);
            dsv[e] = pv[e] * (dp[nt][2 * hr + e] - dlt) * p.scale;
          }
          const int off = row * kLdP + wc + nt * 8 + 2 * t;
          *reinterpret_cast<std::uint32_t*>(p_s + off) = pack2<kBf16>(pv[0], pv[1]);
          *reinterpret_cast<std::uint32_t*>(ds_s + off) = pack2<kBf16>(dsv[0], dsv[1]);
        }
      sync_block();

      // dV += P^T dO and dK += dS^T Q for keys wr.. and head dims wd..; k runs over queries.
#pragma unroll
      for (int kq = 0; kq < kBr / 16; ++kq) {
        std::uint32_t ap[4], ads[4];
        load_a_trans(ap, p_s, kLdP, wr, kq * 16);
        load_a_trans(ads, ds_s, kLdP, wr, kq * 16);
#pragma unroll
        for (int np = 0; np < kHalf / 16; ++np) {
          std::uint32_t bdo[4], bq[4];
          load_b_kmajor(bdo, do_s, kLd, wd + np * 16, kq * 16);
          load_b_kmajor(bq, q_s, kLd, wd + np * 16, kq * 16);
          mma16816<kBf16>(dv_acc[2 * np], ap, bdo[0], bdo[1]);
          mma16816<kBf16>(dv_acc[2 * np + 1], ap, bdo[2], bdo[3]);
          mma16816<kBf16>(dk_acc[2 * np], ads, bq[0], bq[1]);
          mma16816<kBf16>(dk_acc[2 * np + 1], ads, bq[2], bq[3]);
        }
      }

      // dQ[q rows wr.., dims wd..] += dS K; k runs over this block's keys.
      float dq_acc[kHalf / 8][4];
#pragma unroll
      for (int i = 0; i < kHalf / 8; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) dq_acc[i][e] = 0.f;
#pragma unroll
      for (int kk = 0; kk < kBc / 16; ++kk) {
        std::uint32_t ads[4];
        load_a(ads, ds_s, kLdP, wr, kk * 16);
#pragma unroll
        for (int np = 0; np < kHalf / 16; ++np) {
          std::uint32_t bk[4];
          load_b_kmajor(bk, k_s, kLd, wd + np * 16, kk * 16);
          mma16816<kBf16>(dq_acc[2 * np], ads, bk[0], bk[1]);
          mma16816<kBf16>(dq_acc[2 * np + 1], ads, bk[2], bk[3]);
        }
      }
#pragma unroll
      for (int nt = 0; nt < kHalf / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const std::int64_t qi = q0 + wr + g + 8 * (e / 2);
          if (qi < p.seq_q)
            atomic_add(p.dq + qi * q_stride + static_cast<std::int64_t>(h) * D + wd + nt * 8 +
                           2 * t + (e % 2),
                       dq_acc[nt][e]);
        }
      sync_block();  // q_s, do_s, p_s, ds_s are refilled by the next tile
    }
  }
  cp_async_wait<0>();  // a block whose keys no query sees still retires its K/V copies

#pragma unroll
  for (int nt = 0; nt < kHalf / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const std::int64_t kj = k0 + wr + g + 8 * (e / 2);
      if (kj >= p.seq_k) continue;
      const std::int64_t off =
          kj * kv_stride + static_cast<std::int64_t>(hk) * D + wd + nt * 8 + 2 * t + (e % 2);
      p.dk[off] += dk_acc[nt][e];  // this block is the only writer of these keys
      p.dv[off] += dv_acc[nt][e];
    }
}

}  // namespace ringsim::kernels::cuda
