#pragma once
// Problem descriptions shared by the host launchers and the kernels (plain C++:
// no CUDA types, so the CPU emulation build and tests include it too). Launch
// constants (tile sizes, warps) live with each kernel; shapes live here.
#include <cstdint>

#if defined(__CUDACC__)
#define RS_HD __host__ __device__ __forceinline__
#else
#define RS_HD inline
#endif

namespace ringsim::kernels::cuda {

// Absolute position of token i: array[i] if array is set, else offset + stride * i.
// Positions must be non-decreasing in i (ring, zigzag and striped chunks all are);
// the kernels use that to skip key tiles that lie wholly in a query tile's future.
struct PosMap {
  const std::int64_t* array = nullptr;  // device memory
  std::int64_t offset = 0, stride = 1;
  RS_HD std::int64_t at(std::int64_t i) const { return array ? array[i] : offset + stride * i; }
};

// Tensors are [tokens, heads, head_dim] row-major, 16-bit elements (bf16 or fp16
// bits), like kernels/reference.hpp. Query head h reads KV head h / (heads / kv_heads).
struct FwdParams {
  const std::uint16_t* q = nullptr;
  const std::uint16_t* k = nullptr;
  const std::uint16_t* v = nullptr;
  std::uint16_t* o = nullptr;  // [seq_q, heads, d] in the input type, or
  float* o_f32 = nullptr;      // the same in fp32 (used between ring steps); one is set
  float* lse = nullptr;        // [seq_q, heads], natural log; -inf for a fully masked row
  std::int64_t seq_q = 0, seq_k = 0;
  int heads = 1, kv_heads = 1;
  bool causal = false;
  float scale = 0;  // softmax scale, usually 1/sqrt(d)
  PosMap q_pos, k_pos;
};

// Backward of sum(dO * O). dq, dk, dv are fp32 and ACCUMULATED into (the caller
// zeroes them once), so ring steps can add their contributions in place.
struct BwdParams {
  const std::uint16_t* q = nullptr;
  const std::uint16_t* k = nullptr;
  const std::uint16_t* v = nullptr;
  const std::uint16_t* o = nullptr;    // forward output (input type)
  const std::uint16_t* d_o = nullptr;  // gradient of the output (input type)
  const float* lse = nullptr;          // forward LSE over ALL keys the row attends to
  const float* delta = nullptr;        // rowsum(dO * O), [seq_q, heads] (bwd_preprocess)
  float* dq = nullptr;
  float* dk = nullptr;
  float* dv = nullptr;
  std::int64_t seq_q = 0, seq_k = 0;
  int heads = 1, kv_heads = 1;
  bool causal = false;
  float scale = 0;
  PosMap q_pos, k_pos;
};

// The backward of the forward call `f`: its tensors, output, LSE, shapes, mask,
// scale and positions, with dO (input type) and the fp32 gradients to add into.
// `delta` is left for the caller (flash_backward fills its own).
inline BwdParams backward_of(const FwdParams& f, const std::uint16_t* d_o, float* dq, float* dk,
                             float* dv) {
  BwdParams b;
  b.q = f.q;
  b.k = f.k;
  b.v = f.v;
  b.o = f.o;
  b.d_o = d_o;
  b.lse = f.lse;
  b.dq = dq;
  b.dk = dk;
  b.dv = dv;
  b.seq_q = f.seq_q;
  b.seq_k = f.seq_k;
  b.heads = f.heads;
  b.kv_heads = f.kv_heads;
  b.causal = f.causal;
  b.scale = f.scale;
  b.q_pos = f.q_pos;
  b.k_pos = f.k_pos;
  return b;
}

}  // namespace ringsim::kernels::cuda
