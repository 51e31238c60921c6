#include "kernels/merge.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace ringsim::kernels {

template <typename T>
T merge_row(const T* o1, T l1, const T* o2, T l2, int dim, T* out) {
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  if (l2 == kNegInf) {
    if (out != o1)
      for (int e = 0; e < dim; ++e) out[e] = o1[e];
    return l1;
  }
  if (l1 == kNegInf) {
    for (int e = 0; e < dim; ++e) out[e] = o2[e];
    return l2;
  }
  // With e = exp(-|l1 - l2|) <= 1: L = max + log1p(e), and the weights are
  // 1/(1+e) and e/(1+e). They depend only on the difference of the LSEs, so
  // the rounding of a large L (ulp(1e4) ~ 1e-3 in fp32) does not reach them,
  // as it would through exp(l1 - L).
  const T e = std::exp(-std::fabs(l1 - l2));
  const T w_hi = T(1) / (T(1) + e), w_lo = e * w_hi;
  const T w1 = l1 >= l2 ? w_hi : w_lo, w2 = l1 >= l2 ? w_lo : w_hi;
  for (int i = 0; i < dim; ++i) out[i] = w1 * o1[i] + w2 * o2[i];
  return std::max(l1, l2) + std::log1p(e);
}

template <typename T>
void merge_partial(HeadTensor<T>& o, std::vector<T>& lse, const HeadTensor<T>& o2,
                   const std::vector<T>& lse2) {
  if (o.heads != o2.heads || o.tokens != o2.tokens || o.dim != o2.dim ||
      lse.size() != lse2.size() || lse.size() != static_cast<std::size_t>(o.heads) * o.tokens)
    throw std::invalid_argument("merge_partial: shapes differ");
  for (int h = 0; h < o.heads; ++h)
    for (std::int64_t t = 0; t < o.tokens; ++t) {
      const auto i = static_cast<std::size_t>(h) * o.tokens + t;
      lse[i] = merge_row(o.row(h, t), lse[i], o2.row(h, t), lse2[i], o.dim, o.row(h, t));
    }
}

template float merge_row(const float*, float, const float*, float, int, float*);
template double merge_row(const double*, double, const double*, double, int, double*);
template void merge_partial(HeadTensor<float>&, std::vector<float>&, const HeadTensor<float>&,
                            const std::vector<float>&);
template void merge_partial(HeadTensor<double>&, std::vector<double>&, const HeadTensor<double>&,
                            const std::vector<double>&);

}  // namespace ringsim::kernels
