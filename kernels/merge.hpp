#pragma once
// Merging two partial attention results over disjoint key ranges, the step a
// ring device takes after each received K/V block. With L = LSE:
//   L = log(exp(L1) + exp(L2)),  O = exp(L1 - L) O1 + exp(L2 - L) O2
// (FlashAttention's rescaling, Dao et al. 2022 sec. 3.1, applied to whole
// results; Ring Attention, Liu et al. 2023). Computed around max(L1, L2), so
// LSEs of magnitude 1e3 and more do not overflow. A row with LSE -inf (every
// key masked) contributes nothing; two such rows stay -inf with O = 0.
#include <vector>

#include "kernels/tensor.hpp"

namespace ringsim::kernels {

// (o, lse) <- merge((o, lse), (o2, lse2)); lse is [heads][tokens].
template <typename T>
void merge_partial(HeadTensor<T>& o, std::vector<T>& lse, const HeadTensor<T>& o2,
                   const std::vector<T>& lse2);

// One row: out = merge of (o1, l1) and (o2, l2) over `dim` values; returns L.
template <typename T>
T merge_row(const T* o1, T l1, const T* o2, T l2, int dim, T* out);

}  // namespace ringsim::kernels
