#pragma once
// Unfused attention on cuBLAS, the in-run baseline of bench_cuda: S = Q K^T
// materialised in the input type for all heads (cublasGemmStridedBatchedEx), a
// row softmax kernel (scale, causal mask, LSE) that turns S into P in place, then
// O = P V. This is what a framework without a fused kernel does; it moves
// seq_q x seq_k x heads x 2 bytes through memory three times.
#include <cstdint>
#include <memory>

#include "kernels/cuda/attention.hpp"

namespace ringsim::kernels::cuda {

class UnfusedAttention {
 public:
  UnfusedAttention();  // creates the cuBLAS handle
  ~UnfusedAttention();
  UnfusedAttention(const UnfusedAttention&) = delete;
  UnfusedAttention& operator=(const UnfusedAttention&) = delete;

  static std::int64_t workspace_bytes(std::int64_t seq_q, std::int64_t seq_k, int heads);

  // p.o (input type) and p.lse are written; positions are 0..n-1 (p.q_pos/k_pos and
  // p.o_f32 are not supported). workspace: workspace_bytes() of device memory.
  void forward(DType t, int head_dim, const FwdParams& p, void* workspace, void* stream = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringsim::kernels::cuda
