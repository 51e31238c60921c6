#pragma once
// Loading mma.m16n8k16 operand fragments from shared memory with ldmatrix, for the
// four ways an operand can be stored. `ld` is the row stride in elements; each lane
// passes the address of one 16-byte row of one of the four 8x8 matrices (lane / 8
// picks the matrix, lane % 8 the row). Derivations: device_ops.cuh's layout table.
#include <cstdint>

#include "kernels/cuda/device_ops.cuh"

namespace ringsim::kernels::cuda::dev {

// A (16x16 at m0, k0) stored row-major as A[m][k]. Matrices: (m+0,k+0) (m+8,k+0)
// (m+0,k+8) (m+8,k+8) = registers a0..a3.
RS_DEV void load_a(std::uint32_t (&a)[4], const std::uint16_t* s, int ld, int m0, int k0) {
  const int mat = static_cast<int>(lane()) / 8, r8 = static_cast<int>(lane()) % 8;
  ldmatrix_x4(a, s + (m0 + (mat & 1) * 8 + r8) * ld + k0 + (mat >> 1) * 8);
}

// A stored transposed, as At[k][m] (so A = At^T, e.g. P^T from P[q][key]).
// a0 = A[g][2t..] = At[2t..][g]: ldmatrix.trans of the At block (k+0, m+0); then
// (k+0, m+8), (k+8, m+0), (k+8, m+8).
RS_DEV void load_a_trans(std::uint32_t (&a)[4], const std::uint16_t* s, int ld, int m0, int k0) {
  const int mat = static_cast<int>(lane()) / 8, r8 = static_cast<int>(lane()) % 8;
  ldmatrix_x4_trans(a, s + (k0 + (mat >> 1) * 8 + r8) * ld + m0 + (mat & 1) * 8);
}

// B for the two n8 tiles n0 and n0 + 8, k16 at k0, stored n-major as Bt[n][k]
// (e.g. K[key][d] for S = Q K^T). b[0], b[1] feed tile n0; b[2], b[3] tile n0 + 8.
RS_DEV void load_b_nmajor(std::uint32_t (&b)[4], const std::uint16_t* s, int ld, int n0, int k0) {
  const int mat = static_cast<int>(lane()) / 8, r8 = static_cast<int>(lane()) % 8;
  ldmatrix_x4(b, s + (n0 + (mat >> 1) * 8 + r8) * ld + k0 + (mat & 1) * 8);
}

// The same, stored k-major as B[k][n] (e.g. V[key][d] for O = P V).
RS_DEV void load_b_kmajor(std::uint32_t (&b)[4], const std::uint16_t* s, int ld, int n0, int k0) {
  const int mat = static_cast<int>(lane()) / 8, r8 = static_cast<int>(lane()) % 8;
  ldmatrix_x4_trans(b, s + (k0 + (mat & 1) * 8 + r8) * ld + n0 + (mat >> 1) * 8);
}

}  // namespace ringsim::kernels::cuda::dev
