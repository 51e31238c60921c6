#pragma once
// Inputs, references and the acceptance rule shared by the emulated (CPU) and the
// real GPU tests of kernels/cuda.
//
// Acceptance rule (after flash-attention's tests): on the same low-precision inputs,
//   err(kernel)  = max |kernel - exact|      exact = float64 reference (kernels/reference.hpp)
//   err(lowprec) = max |lowprec - exact|     lowprec = a plain fp32 CPU attention that rounds
//                                            to the storage type wherever a bf16/fp16
//                                            framework implementation would (S, P, O; and
//                                            dP, dS, gradients for the backward)
//   pass iff err(kernel) <= 2 * err(lowprec) + 1e-6   (and nothing is NaN or unwritten)
// The slack 1e-6 only matters where both errors are at fp32 rounding level (LSE).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/bits.hpp"
#include "kernels/reference.hpp"

namespace ringsim::kernels::cuda::testing {

struct Inputs {
  std::vector<std::uint16_t> q, k, v, d_o;  // storage bits
  std::vector<double> qd, kd, vd, dod;      // the same values, exactly, in double
};

inline Inputs make_inputs(const AttnShape& s, bool bf16, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  Inputs in;
  auto fill = [&](std::vector<std::uint16_t>& bits, std::vector<double>& dbl, std::int64_t n) {
    bits.resize(static_cast<size_t>(n));
    dbl.resize(static_cast<size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      bits[i] = float_to_storage(nd(rng), bf16);
      dbl[i] = storage_to_float(bits[i], bf16);
    }
  };
  fill(in.q, in.qd, s.seq_q * s.heads * s.head_dim);
  fill(in.k, in.kd, s.seq_k * s.kv_heads * s.head_dim);
  fill(in.v, in.vd, s.seq_k * s.kv_heads * s.head_dim);
  fill(in.d_o, in.dod, s.seq_q * s.heads * s.head_dim);
  return in;
}

inline std::vector<std::int64_t> iota_pos(std::int64_t n, std::int64_t offset = 0,
                                          std::int64_t stride = 1) {
  std::vector<std::int64_t> p(static_cast<size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) p[i] = offset + stride * i;
  return p;
}

inline float round_to(float x, bool bf16) {
  return storage_to_float(float_to_storage(x, bf16), bf16);
}

// fp32 attention with framework-style roundings; returns O (rounded) and LSE.
inline ReferenceOut lowprec_forward(const AttnShape& s, const Inputs& in, bool bf16,
                                    const std::vector<std::int64_t>& qp,
                                    const std::vector<std::int64_t>& kp) {
  const int d = s.head_dim, group = s.heads / s.kv_heads;
  const float scale = static_cast<float>(s.scale());
  ReferenceOut out;
  out.o.assign(static_cast<size_t>(s.seq_q * s.heads * d), 0.0);
  out.lse.assign(static_cast<size_t>(s.seq_q * s.heads), -INFINITY);
  std::vector<float> row(static_cast<size_t>(s.seq_k)), acc(static_cast<size_t>(d));
  for (int h = 0; h < s.heads; ++h) {
    const int hk = h / group;
    for (std::int64_t i = 0; i < s.seq_q; ++i) {
      float mx = -INFINITY;
      for (std::int64_t j = 0; j < s.seq_k; ++j) {
        if (s.causal && kp[j] > qp[i]) {
          row[j] = -INFINITY;
          continue;
        }
        float dot = 0;
        for (int t = 0; t < d; ++t)
          dot += static_cast<float>(in.qd[(i * s.heads + h) * d + t]) *
                 static_cast<float>(in.kd[(j * s.kv_heads + hk) * d + t]);
        row[j] = round_to(dot, bf16) * scale;
        mx = std::max(mx, row[j]);
      }
      if (mx == -INFINITY) continue;  // O stays 0, LSE -inf
      float sum = 0;
      for (std::int64_t j = 0; j < s.seq_k; ++j) {
        row[j] = std::isinf(row[j]) ? 0.f : std::exp(row[j] - mx);
        sum += row[j];
      }
      out.lse[i * s.heads + h] = mx + std::log(sum);
      std::fill(acc.begin(), acc.end(), 0.f);
      for (std::int64_t j = 0; j < s.seq_k; ++j) {
        const float pj = round_to(row[j] / sum, bf16);
        if (pj == 0) continue;
        for (int t = 0; t < d; ++t)
          acc[t] += pj * static_cast<float>(in.vd[(j * s.kv_heads + hk) * d + t]);
      }
      for (int t = 0; t < d; ++t) out.o[(i * s.heads + h) * d + t] = round_to(acc[t], bf16);
    }
  }
  return out;
}

// fp32 backward with framework-style roundings of S, P, dP, dS and the gradients.
inline ReferenceGrads lowprec_backward(const AttnShape& s, const Inputs& in, bool bf16,
                                       const std::vector<std::int64_t>& qp,
                                       const std::vector<std::int64_t>& kp) {
  const int d = s.head_dim, group = s.heads / s.kv_heads;
  const float scale = static_cast<float>(s.scale());
  std::vector<float> dq(in.q.size(), 0.f), dk(in.k.size(), 0.f), dv(in.v.size(), 0.f);
  std::vector<float> p(static_cast<size_t>(s.seq_k)), dp(static_cast<size_t>(s.seq_k));
  for (int h = 0; h < s.heads; ++h) {
    const int hk = h / group;
    for (std::int64_t i = 0; i < s.seq_q; ++i) {
      const double* qi = &in.qd[(i * s.heads + h) * d];
      const double* doi = &in.dod[(i * s.heads + h) * d];
      float mx = -INFINITY;
      for (std::int64_t j = 0; j < s.seq_k; ++j) {
        if (s.causal && kp[j] > qp[i]) {
          p[j] = -INFINITY;
          continue;
        }
        float dot = 0;
        for (int t = 0; t < d; ++t)
          dot +=
              static_cast<float>(qi[t]) * static_cast<float>(in.kd[(j * s.kv_heads + hk) * d + t]);
        p[j] = round_to(dot, bf16) * scale;
        mx = std::max(mx, p[j]);
      }
      if (mx == -INFINITY) continue;
      float sum = 0;
      for (std::int64_t j = 0; j < s.seq_k; ++j) {
        p[j] = std::isinf(p[j]) ? 0.f : std::exp(p[j] - mx);
        sum += p[j];
      }
      float rowdot = 0;
      for (std::int64_t j = 0; j < s.seq_k; ++j) {
        p[j] = round_to(p[j] / sum, bf16);
        float acc = 0;
        for (int t = 0; t < d; ++t)
          acc +=
              static_cast<float>(doi[t]) * static_cast<float>(in.vd[(j * s.kv_heads + hk) * d + t]);
        dp[j] = round_to(acc, bf16);
        rowdot += p[j] * dp[j];
      }
      for (std::int64_t j = 0; j < s.seq_k; ++j) {
        if (p[j] == 0) continue;
        const float ds = round_to(p[j] * (dp[j] - rowdot), bf16) * scale;
        const size_t kj = static_cast<size_t>((j * s.kv_heads + hk) * d);
        for (int t = 0; t < d; ++t) {
          dq[(i * s.heads + h) * d + t] += ds * static_cast<float>(in.kd[kj + t]);
          dk[kj + t] += ds * static_cast<float>(qi[t]);
          dv[kj + t] += p[j] * static_cast<float>(doi[t]);
        }
      }
    }
  }
  ReferenceGrads g;
  auto out = [&](const std::vector<float>& x, std::vector<double>& y) {
    y.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = round_to(x[i], bf16);
  };
  out(dq, g.dq);
  out(dk, g.dk);
  out(dv, g.dv);
  return g;
}

// Max |a - b|; equal infinities (masked LSE rows) count as exact, NaN as infinite.
template <typename A>
double max_abs_err(const std::vector<A>& a, const std::vector<double>& b) {
  double e = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    const double x = static_cast<double>(a[i]), y = b[i];
    if (std::isnan(x)) return std::numeric_limits<double>::infinity();
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y) return std::numeric_limits<double>::infinity();
      continue;
    }
    e = std::max(e, std::fabs(x - y));
  }
  return e;
}

struct Verdict {
  double err = 0, base = 0;
  bool ok() const { return err <= 2 * base + 1e-6; }
  std::string str() const {
    return "max err " + std::to_string(err) + ", low-precision reference's " +
           std::to_string(base) + " (limit 2x + 1e-6)";
  }
};

template <typename A>
Verdict judge(const std::vector<A>& kernel, const std::vector<double>& lowprec,
              const std::vector<double>& exact) {
  return {max_abs_err(kernel, exact), max_abs_err(lowprec, exact)};
}

inline std::vector<double> storage_to_double(const std::vector<std::uint16_t>& x, bool bf16) {
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = storage_to_float(x[i], bf16);
  return y;
}

}  // namespace ringsim::kernels::cuda::testing
