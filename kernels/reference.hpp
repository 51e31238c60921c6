#pragma once
// The oracle: full attention in float64, materialising the whole score matrix.
// Everything else in ringsim (blockwise CPU kernels, ring emulator, CUDA, MPI
// ring) is checked against this.
#include <cstdint>
#include <vector>

namespace ringsim::kernels {

// Tensors are [tokens, heads, head_dim] row-major (C order, as .npy stores them).
// Query head h uses KV head h / (heads / kv_heads) (grouped-query attention).
// With causal, query at absolute position q_pos[i] sees key at k_pos[j] iff
// k_pos[j] <= q_pos[i]; positions default to 0..n-1. With packed documents
// (doc_starts, models/core/documents.hpp) it also needs k_pos[j] in q_pos[i]'s
// document: causal within each document, nothing across.
struct AttnShape {
  std::int64_t seq_q = 0, seq_k = 0;
  int heads = 1, kv_heads = 1, head_dim = 1;
  bool causal = false;
  std::vector<std::int64_t> doc_starts = {};  // ascending, the first 0; empty: one document
  double scale() const;                       // 1/sqrt(head_dim)
};

struct ReferenceOut {
  std::vector<double> o;    // [seq_q, heads, head_dim]
  std::vector<double> lse;  // [seq_q, heads]; -inf for a fully masked row
};

ReferenceOut reference_forward(const AttnShape& s, const std::vector<double>& q,
                               const std::vector<double>& k, const std::vector<double>& v,
                               const std::vector<std::int64_t>& q_pos = {},
                               const std::vector<std::int64_t>& k_pos = {});

struct ReferenceGrads {
  std::vector<double> dq, dk, dv;  // shapes of q, k, v
};

// Gradients of sum(dO * O) with respect to q, k, v.
ReferenceGrads reference_backward(const AttnShape& s, const std::vector<double>& q,
                                  const std::vector<double>& k, const std::vector<double>& v,
                                  const std::vector<double>& d_o,
                                  const std::vector<std::int64_t>& q_pos = {},
                                  const std::vector<std::int64_t>& k_pos = {});

}  // namespace ringsim::kernels
