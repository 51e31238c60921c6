#pragma once
// Head-major tensors for the CPU kernels, and the copies between them and the
// token-major [tokens, heads, head_dim] layout that .npy files and the
// reference use. Head-major puts each head in one contiguous row-major
// [tokens, head_dim] matrix, which Eigen can Map without copying.
#include <cstdint>
#include <vector>

namespace ringsim::kernels {

template <typename T>
struct HeadTensor {
  int heads = 0;
  std::int64_t tokens = 0;
  int dim = 0;
  std::vector<T> data;  // [heads][tokens][dim]

  HeadTensor() = default;
  HeadTensor(int h, std::int64_t t, int d)
      : heads(h), tokens(t), dim(d), data(static_cast<std::size_t>(h) * t * d, T(0)) {}

  T* head(int h) { return data.data() + static_cast<std::size_t>(h) * tokens * dim; }
  const T* head(int h) const { return data.data() + static_cast<std::size_t>(h) * tokens * dim; }
  T* row(int h, std::int64_t t) { return head(h) + t * dim; }
  const T* row(int h, std::int64_t t) const { return head(h) + t * dim; }
  std::size_t size() const { return data.size(); }
};

// Rows `tokens` and heads [h0, h0 + nh) of a token-major tensor with
// `total_heads` heads, as a head-major tensor (converted to T).
template <typename T>
HeadTensor<T> gather_rows(const std::vector<double>& x, int total_heads, int dim,
                          const std::vector<std::int64_t>& tokens, int h0, int nh) {
  HeadTensor<T> out(nh, static_cast<std::int64_t>(tokens.size()), dim);
  for (int h = 0; h < nh; ++h)
    for (std::size_t t = 0; t < tokens.size(); ++t) {
      const double* src = &x[(static_cast<std::size_t>(tokens[t]) * total_heads + h0 + h) * dim];
      T* dst = out.row(h, static_cast<std::int64_t>(t));
      for (int e = 0; e < dim; ++e) dst[e] = static_cast<T>(src[e]);
    }
  return out;
}

// The inverse: writes `in` into rows `tokens`, heads [h0, h0 + in.heads) of x.
template <typename T>
void scatter_rows(const HeadTensor<T>& in, int total_heads, const std::vector<std::int64_t>& tokens,
                  int h0, std::vector<double>& x) {
  for (int h = 0; h < in.heads; ++h)
    for (std::size_t t = 0; t < tokens.size(); ++t) {
      const T* src = in.row(h, static_cast<std::int64_t>(t));
      double* dst = &x[(static_cast<std::size_t>(tokens[t]) * total_heads + h0 + h) * in.dim];
      for (int e = 0; e < in.dim; ++e) dst[e] = static_cast<double>(src[e]);
    }
}

// Per-(head, token) values such as the LSE: [heads][tokens] <-> [tokens, total_heads].
template <typename T>
void scatter_scalars(const std::vector<T>& in, int heads, const std::vector<std::int64_t>& tokens,
                     int total_heads, int h0, std::vector<double>& x) {
  for (int h = 0; h < heads; ++h)
    for (std::size_t t = 0; t < tokens.size(); ++t)
      x[static_cast<std::size_t>(tokens[t]) * total_heads + h0 + h] =
          static_cast<double>(in[h * tokens.size() + t]);
}

template <typename T>
std::vector<T> gather_scalars(const std::vector<double>& x, int total_heads,
                              const std::vector<std::int64_t>& tokens, int h0, int nh) {
  std::vector<T> out(static_cast<std::size_t>(nh) * tokens.size());
  for (int h = 0; h < nh; ++h)
    for (std::size_t t = 0; t < tokens.size(); ++t)
      out[h * tokens.size() + t] =
          static_cast<T>(x[static_cast<std::size_t>(tokens[t]) * total_heads + h0 + h]);
  return out;
}

inline std::vector<std::int64_t> iota_positions(std::int64_t n) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) p[static_cast<std::size_t>(i)] = i;
  return p;
}

}  // namespace ringsim::kernels
