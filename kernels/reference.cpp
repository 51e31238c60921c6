#include "kernels/reference.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "models/core/cancel.hpp"
#include "models/core/documents.hpp"

namespace ringsim::kernels {

double AttnShape::scale() const {
  return 1.0 / std::sqrt(static_cast<double>(head_dim));
}

namespace {

struct Positions {
  std::vector<std::int64_t> q, k;
  std::vector<std::int64_t> q_doc, k_doc;  // document of each position (all 0 without documents)
};

Positions positions(const AttnShape& s, const std::vector<std::int64_t>& qp,
                    const std::vector<std::int64_t>& kp) {
  Positions p{qp, kp, {}, {}};
  if (p.q.empty())
    for (std::int64_t i = 0; i < s.seq_q; ++i) p.q.push_back(i);
  if (p.k.empty())
    for (std::int64_t j = 0; j < s.seq_k; ++j) p.k.push_back(j);
  if (static_cast<std::int64_t>(p.q.size()) != s.seq_q ||
      static_cast<std::int64_t>(p.k.size()) != s.seq_k)
    throw std::invalid_argument("reference: positions do not match the sequence lengths");
  if (s.heads % s.kv_heads != 0)
    throw std::invalid_argument("reference: kv_heads must divide heads");
  if (!s.doc_starts.empty() && !s.causal)
    throw std::invalid_argument("reference: the document mask needs causal");
  for (const auto x : p.q) p.q_doc.push_back(document_of(s.doc_starts, x));
  for (const auto x : p.k) p.k_doc.push_back(document_of(s.doc_starts, x));
  return p;
}

// Row-wise softmax probabilities P[i][j] for one head, and the row's LSE.
void head_probs(const AttnShape& s, const Positions& pos, const std::vector<double>& q,
                const std::vector<double>& k, int h, std::vector<double>& p,
                std::vector<double>& lse) {
  const int d = s.head_dim, hk = h / (s.heads / s.kv_heads);
  const double scale = s.scale();
  p.assign(static_cast<size_t>(s.seq_q * s.seq_k), 0.0);
  lse.assign(static_cast<size_t>(s.seq_q), -std::numeric_limits<double>::infinity());
  for (std::int64_t i = 0; i < s.seq_q; ++i) {
    // A head of 8K x 8K keys takes seconds: a stop is seen every 256 rows.
    if (i % 256 == 0) throw_if_cancelled();
    double mx = -std::numeric_limits<double>::infinity();
    double* row = &p[static_cast<size_t>(i * s.seq_k)];
    for (std::int64_t j = 0; j < s.seq_k; ++j) {
      if (s.causal && (pos.k[j] > pos.q[i] || pos.k_doc[j] != pos.q_doc[i])) {
        row[j] = -std::numeric_limits<double>::infinity();
        continue;
      }
      double acc = 0;
      const double* qi = &q[static_cast<size_t>((i * s.heads + h) * d)];
      const double* kj = &k[static_cast<size_t>((j * s.kv_heads + hk) * d)];
      for (int t = 0; t < d; ++t) acc += qi[t] * kj[t];
      row[j] = acc * scale;
      mx = std::max(mx, row[j]);
    }
    if (mx == -std::numeric_limits<double>::infinity()) {
      for (std::int64_t j = 0; j < s.seq_k; ++j) row[j] = 0;
      continue;
    }
    double sum = 0;
    for (std::int64_t j = 0; j < s.seq_k; ++j) {
      row[j] = std::isinf(row[j]) ? 0.0 : std::exp(row[j] - mx);
      sum += row[j];
    }
    for (std::int64_t j = 0; j < s.seq_k; ++j) row[j] /= sum;
    lse[static_cast<size_t>(i)] = mx + std::log(sum);
  }
}

}  // namespace

ReferenceOut reference_forward(const AttnShape& s, const std::vector<double>& q,
                               const std::vector<double>& k, const std::vector<double>& v,
                               const std::vector<std::int64_t>& q_pos,
                               const std::vector<std::int64_t>& k_pos) {
  const auto pos = positions(s, q_pos, k_pos);
  const int d = s.head_dim;
  ReferenceOut out;
  out.o.assign(static_cast<size_t>(s.seq_q * s.heads * d), 0.0);
  out.lse.assign(static_cast<size_t>(s.seq_q * s.heads), 0.0);
  std::vector<double> p, lse;
  for (int h = 0; h < s.heads; ++h) {
    throw_if_cancelled();
    const int hk = h / (s.heads / s.kv_heads);
    head_probs(s, pos, q, k, h, p, lse);
    for (std::int64_t i = 0; i < s.seq_q; ++i) {
      out.lse[static_cast<size_t>(i * s.heads + h)] = lse[static_cast<size_t>(i)];
      double* oi = &out.o[static_cast<size_t>((i * s.heads + h) * d)];
      for (std::int64_t j = 0; j < s.seq_k; ++j) {
        const double pij = p[static_cast<size_t>(i * s.seq_k + j)];
        if (pij == 0) continue;
        const double* vj = &v[static_cast<size_t>((j * s.kv_heads + hk) * d)];
        for (int t = 0; t < d; ++t) oi[t] += pij * vj[t];
      }
    }
  }
  return out;
}

ReferenceGrads reference_backward(const AttnShape& s, const std::vector<double>& q,
                                  const std::vector<double>& k, const std::vector<double>& v,
                                  const std::vector<double>& d_o,
                                  const std::vector<std::int64_t>& q_pos,
                                  const std::vector<std::int64_t>& k_pos) {
  const auto pos = positions(s, q_pos, k_pos);
  const int d = s.head_dim;
  const double scale = s.scale();
  ReferenceGrads g;
  g.dq.assign(q.size(), 0.0);
  g.dk.assign(k.size(), 0.0);
  g.dv.assign(v.size(), 0.0);
  std::vector<double> p, lse, dp(static_cast<size_t>(s.seq_k));
  for (int h = 0; h < s.heads; ++h) {
    throw_if_cancelled();
    const int hk = h / (s.heads / s.kv_heads);
    head_probs(s, pos, q, k, h, p, lse);
    for (std::int64_t i = 0; i < s.seq_q; ++i) {
      const double* doi = &d_o[static_cast<size_t>((i * s.heads + h) * d)];
      // dP = dO V^T, dS = P (dP - rowsum(P dP)), dQ = dS K scale, dK = dS^T Q scale, dV = P^T dO.
      double rowdot = 0;
      for (std::int64_t j = 0; j < s.seq_k; ++j) {
        const double* vj = &v[static_cast<size_t>((j * s.kv_heads + hk) * d)];
        double acc = 0;
        for (int t = 0; t < d; ++t) acc += doi[t] * vj[t];
        dp[static_cast<size_t>(j)] = acc;
        rowdot += p[static_cast<size_t>(i * s.seq_k + j)] * acc;
      }
      const double* qi = &q[static_cast<size_t>((i * s.heads + h) * d)];
      double* dqi = &g.dq[static_cast<size_t>((i * s.heads + h) * d)];
      for (std::int64_t j = 0; j < s.seq_k; ++j) {
        const double pij = p[static_cast<size_t>(i * s.seq_k + j)];
        if (pij == 0) continue;
        const double ds = pij * (dp[static_cast<size_t>(j)] - rowdot) * scale;
        const size_t kj = static_cast<size_t>((j * s.kv_heads + hk) * d);
        for (int t = 0; t < d; ++t) {
          dqi[t] += ds * k[kj + t];
          g.dk[kj + t] += ds * qi[t];
          g.dv[kj + t] += pij * doi[t];
        }
      }
    }
  }
  return g;
}

}  // namespace ringsim::kernels
