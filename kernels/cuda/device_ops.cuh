#pragma once
// Warp-level building blocks of the attention kernels, in two implementations:
// the real one (inline PTX, compiled by nvcc) and a CPU one (RINGSIM_CUDA_EMULATION,
// compiled by the host compiler on top of emu/simt.hpp) that reproduces each
// instruction's register semantics from the PTX ISA's tables ("Matrix fragments for
// mma.m16n8k16", "Warp-level matrix load instruction: ldmatrix"). The kernels use
// only these, so the CPU build runs the kernels' own index arithmetic.
//
// Fragment layout of mma.m16n8k16 (16-bit A/B, fp32 C), with g = lane / 4 and
// t = lane % 4 (PTX ISA 9.7.14.5.8):
//   A 16x16 (4 regs of 2 halves): reg r holds A[g + 8*(r%2)][2t + 8*(r/2) + {0,1}]
//   B 16x8  (2 regs of 2 halves): reg r holds B[2t + 8*r + {0,1}][g]
//   C 16x8  (4 floats):           c[i] is C[g + 8*(i/2)][2t + i%2]
// ldmatrix .x4: lanes 8m..8m+7 give the row addresses of 8x8 matrix m; reg m of
// lane l then holds M[l/4][2(l%4) + {0,1}], or with .trans M[2(l%4) + {0,1}][l/4].
#include <cstdint>

#if defined(__CUDACC__) && !defined(RINGSIM_CUDA_EMULATION)
#define RINGSIM_CUDA_DEVICE 1
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define RS_DEV __device__ __forceinline__
#define RS_KERNEL __global__
#define RS_LAUNCH_BOUNDS(n) __launch_bounds__(n)
#elif defined(RINGSIM_CUDA_EMULATION)
#include <cmath>
#include <cstring>

#include "kernels/cuda/bits.hpp"
#include "kernels/cuda/emu/simt.hpp"
#define RS_DEV inline
#define RS_KERNEL inline
#define RS_LAUNCH_BOUNDS(n)
#else
#error "device_ops.cuh: compile with nvcc, or define RINGSIM_CUDA_EMULATION"
#endif

namespace ringsim::kernels::cuda::dev {

#if RINGSIM_CUDA_DEVICE

RS_DEV unsigned tid() {
  return threadIdx.x;
}
RS_DEV unsigned bid_x() {
  return blockIdx.x;
}
RS_DEV unsigned bid_y() {
  return blockIdx.y;
}
RS_DEV unsigned grid_x() {
  return gridDim.x;
}
RS_DEV void sync_block() {
  __syncthreads();
}
RS_DEV void sync_warp() {
  __syncwarp();
}
RS_DEV unsigned char* smem() {
  extern __shared__ __align__(16) unsigned char smem_buf[];
  return smem_buf;
}

RS_DEV float shfl_xor(float v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask);
}

RS_DEV std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global->shared copy that bypasses L1; src_bytes = 0 fills zeros.
RS_DEV void cp_async16(void* dst, const void* src, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(src_bytes));
}
RS_DEV void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
RS_DEV void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

RS_DEV void ldmatrix_x4(std::uint32_t (&r)[4], const void* row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(row_addr)));
}
RS_DEV void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(row_addr)));
}

// D = A B + C, m16n8k16, fp32 accumulate; kBf16 picks bf16 or fp16 operands.
template <bool kBf16>
RS_DEV void mma16816(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                     std::uint32_t b1) {
  if constexpr (kBf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Two floats to one register of two 16-bit values, lo in the low half (the
// element with the smaller column index in a fragment).
template <bool kBf16>
RS_DEV std::uint32_t pack2(float lo, float hi) {
  std::uint32_t r;
  if constexpr (kBf16) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    r = *reinterpret_cast<std::uint32_t*>(&v);
  } else {
    __half2 v = __floats2half2_rn(lo, hi);
    r = *reinterpret_cast<std::uint32_t*>(&v);
  }
  return r;
}
template <bool kBf16>
RS_DEV float to_float(std::uint16_t h) {
  if constexpr (kBf16) {
    return __bfloat162float(__ushort_as_bfloat16(h));
  } else {
    return __half2float(__ushort_as_half(h));
  }
}
template <bool kBf16>
RS_DEV std::uint16_t from_float(float f) {
  if constexpr (kBf16) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(f));
  } else {
    return __half_as_ushort(__float2half_rn(f));
  }
}

// 2^x; ex2.approx has ~2 ulp error, far below bf16/fp16 rounding, and gives +0 for -inf.
RS_DEV float exp2_fast(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

RS_DEV void atomic_add(float* p, float v) {
  atomicAdd(p, v);
}

#else  // RINGSIM_CUDA_EMULATION

inline unsigned tid() {
  return emu::thread_idx().x;
}
inline unsigned bid_x() {
  return emu::block_idx().x;
}
inline unsigned bid_y() {
  return emu::block_idx().y;
}
inline unsigned grid_x() {
  return emu::grid_dim().x;
}
inline void sync_block() {
  emu::sync_block();
}
inline void sync_warp() {
  emu::sync_warp();
}
inline unsigned char* smem() {
  return emu::dynamic_smem();
}

inline std::uint64_t to_word(float v) {
  std::uint32_t u;
  std::memcpy(&u, &v, 4);
  return u;
}
inline float from_word(std::uint64_t w) {
  const auto u = static_cast<std::uint32_t>(w);
  float v;
  std::memcpy(&v, &u, 4);
  return v;
}

inline float shfl_xor(float v, int mask) {
  auto* slots = emu::next_slots();
  const unsigned lane = emu::lane_id();
  slots[lane][0] = to_word(v);
  emu::sync_warp();
  return from_word(slots[lane ^ static_cast<unsigned>(mask)][0]);
}

inline void cp_async16(void* dst, const void* src, bool valid) {
  if (valid)
    std::memcpy(dst, src, 16);
  else
    std::memset(dst, 0, 16);
}
inline void cp_async_commit() {}
template <int N>
inline void cp_async_wait() {}

inline std::uint16_t load_half(std::uint64_t addr, unsigned col) {
  std::uint16_t h;
  std::memcpy(&h, reinterpret_cast<const unsigned char*>(addr) + 2 * col, 2);
  return h;
}

template <bool kTrans>
inline void ldmatrix_x4_impl(std::uint32_t (&r)[4], const void* row_addr) {
  auto* slots = emu::next_slots();
  const unsigned lane = emu::lane_id();
  slots[lane][0] = reinterpret_cast<std::uint64_t>(row_addr);
  emu::sync_warp();
  const unsigned g = lane / 4, t = lane % 4;
  for (unsigned m = 0; m < 4; ++m) {
    std::uint16_t lo, hi;
    if (!kTrans) {  // M[g][2t], M[g][2t+1]: row g of matrix m
      lo = load_half(slots[8 * m + g][0], 2 * t);
      hi = load_half(slots[8 * m + g][0], 2 * t + 1);
    } else {  // M[2t][g], M[2t+1][g]
      lo = load_half(slots[8 * m + 2 * t][0], g);
      hi = load_half(slots[8 * m + 2 * t + 1][0], g);
    }
    r[m] = static_cast<std::uint32_t>(lo) | (static_cast<std::uint32_t>(hi) << 16);
  }
}
inline void ldmatrix_x4(std::uint32_t (&r)[4], const void* p) {
  ldmatrix_x4_impl<false>(r, p);
}
inline void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* p) {
  ldmatrix_x4_impl<true>(r, p);
}

template <bool kBf16>
inline float half_of(std::uint64_t reg, unsigned which) {
  return storage_to_float(static_cast<std::uint16_t>(reg >> (16 * which)), kBf16);
}

template <bool kBf16>
inline void mma16816(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                     std::uint32_t b1) {
  auto* slots = emu::next_slots();
  const unsigned lane = emu::lane_id();
  for (int i = 0; i < 4; ++i) slots[lane][i] = a[i];
  slots[lane][4] = b0;
  slots[lane][5] = b1;
  emu::sync_warp();
  // Element lookups by the inverse of the layout table in the header comment.
  auto A = [&](unsigned row, unsigned k) {
    const unsigned owner = (row % 8) * 4 + (k % 8) / 2, reg = (row / 8) + 2 * (k / 8);
    return half_of<kBf16>(slots[owner][reg], k % 2);
  };
  auto B = [&](unsigned k, unsigned n) {
    const unsigned owner = n * 4 + (k % 8) / 2, reg = 4 + k / 8;
    return half_of<kBf16>(slots[owner][reg], k % 2);
  };
  const unsigned g = lane / 4, t = lane % 4;
  for (unsigned i = 0; i < 4; ++i) {
    const unsigned row = g + 8 * (i / 2), col = 2 * t + i % 2;
    double acc = 0;
    for (unsigned k = 0; k < 16; ++k) acc += static_cast<double>(A(row, k)) * B(k, col);
    c[i] = static_cast<float>(c[i] + acc);
  }
}

template <bool kBf16>
inline std::uint32_t pack2(float lo, float hi) {
  return static_cast<std::uint32_t>(float_to_storage(lo, kBf16)) |
         (static_cast<std::uint32_t>(float_to_storage(hi, kBf16)) << 16);
}
template <bool kBf16>
inline float to_float(std::uint16_t h) {
  return storage_to_float(h, kBf16);
}
template <bool kBf16>
inline std::uint16_t from_float(float f) {
  return float_to_storage(f, kBf16);
}
inline float exp2_fast(float x) {
  return std::exp2(x);
}
inline void atomic_add(float* p, float v) {
  *p += v;
}

#endif

RS_DEV unsigned lane() {
  return tid() % 32;
}
RS_DEV unsigned warp() {
  return tid() / 32;
}

}  // namespace ringsim::kernels::cuda::dev
