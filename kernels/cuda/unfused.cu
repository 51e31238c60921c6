#include <cublas_v2.h>

#include <cmath>
#include <string>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/device_ops.cuh"
#include "kernels/cuda/unfused.hpp"
#include "models/core/errors.hpp"

namespace ringsim::kernels::cuda {
namespace {

#define RINGSIM_CUBLAS_CHECK(expr)                                                    \
  do {                                                                                \
    const cublasStatus_t st_ = (expr);                                                \
    if (st_ != CUBLAS_STATUS_SUCCESS)                                                 \
      throw CudaError(std::string(#expr) + " failed: " + cublasGetStatusString(st_)); \
  } while (0)

constexpr int kSoftmaxThreads = 256;

__device__ float block_reduce(float v, bool is_max, float* red) {
  for (int m = 16; m > 0; m /= 2) {
    const float o = __shfl_xor_sync(0xffffffffu, v, m);
    v = is_max ? fmaxf(v, o) : v + o;
  }
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  __syncthreads();  // red may still be read from the previous reduction
  if (l == 0) red[w] = v;
  __syncthreads();
  v = red[0];
  for (int i = 1; i < kSoftmaxThreads / 32; ++i) v = is_max ? fmaxf(v, red[i]) : v + red[i];
  return v;
}

// One block per (head, query) row of S: P = softmax(S * scale) with key j visible
// to query i iff j <= i when causal; written over S in place.
template <bool kBf16>
__global__ void __launch_bounds__(kSoftmaxThreads)
    softmax_rows_kernel(std::uint16_t* s, float* lse, std::int64_t seq_q, std::int64_t seq_k,
                        int heads, bool causal, float scale) {
  __shared__ float red[kSoftmaxThreads / 32];
  const std::int64_t row = blockIdx.x;  // = h * seq_q + i
  const std::int64_t i = row % seq_q;
  const int h = static_cast<int>(row / seq_q);
  std::uint16_t* r = s + row * seq_k;
  const std::int64_t n = causal ? (i + 1 < seq_k ? i + 1 : seq_k) : seq_k;
  float mx = -INFINITY, sum = 0.f;  // this thread's running max and sum (online softmax)
  for (std::int64_t j = threadIdx.x; j < n; j += kSoftmaxThreads) {
    const float x = dev::to_float<kBf16>(r[j]) * scale;
    if (x > mx) {
      sum = sum * expf(mx - x) + 1.f;
      mx = x;
    } else {
      sum += expf(x - mx);
    }
  }
  const float row_max = block_reduce(mx, true, red);
  const float row_sum = block_reduce(mx == -INFINITY ? 0.f : sum * expf(mx - row_max), false, red);
  const float inv = row_sum > 0.f ? 1.f / row_sum : 0.f;
  for (std::int64_t j = threadIdx.x; j < seq_k; j += kSoftmaxThreads) {
    const float pj = j < n ? expf(dev::to_float<kBf16>(r[j]) * scale - row_max) * inv : 0.f;
    r[j] = dev::from_float<kBf16>(pj);
  }
  if (threadIdx.x == 0) lse[i * heads + h] = row_sum > 0.f ? row_max + logf(row_sum) : -INFINITY;
}

}  // namespace

struct UnfusedAttention::Impl {
  cublasHandle_t handle = nullptr;
};

UnfusedAttention::UnfusedAttention() : impl_(std::make_unique<Impl>()) {
  RINGSIM_CUBLAS_CHECK(cublasCreate(&impl_->handle));
}

UnfusedAttention::~UnfusedAttention() {
  if (impl_ && impl_->handle) cublasDestroy(impl_->handle);
}

std::int64_t UnfusedAttention::workspace_bytes(std::int64_t seq_q, std::int64_t seq_k, int heads) {
  return seq_q * seq_k * heads * 2;
}

void UnfusedAttention::forward(DType t, int d, const FwdParams& p, void* workspace, void* stream) {
  if (p.o == nullptr || p.lse == nullptr || p.q_pos.array || p.k_pos.array || p.q_pos.offset != 0 ||
      p.k_pos.offset != 0 || p.q_pos.stride != 1 || p.k_pos.stride != 1)
    throw InputError("unfused attention: needs o (input type), lse and default positions");
  if (p.heads % p.kv_heads != 0) throw InputError("unfused attention: kv_heads must divide heads");
  if (p.seq_q == 0 || p.seq_k == 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  RINGSIM_CUBLAS_CHECK(cublasSetStream(impl_->handle, s));
  const cudaDataType_t dt = t == DType::BF16 ? CUDA_R_16BF : CUDA_R_16F;
  const int group = p.heads / p.kv_heads;
  const float alpha = 1.f, beta = 0.f;
  const float scale = p.scale != 0 ? p.scale : 1.f / std::sqrt(static_cast<float>(d));
  auto* sbuf = static_cast<std::uint16_t*>(workspace);
  const long long plane = p.seq_q * p.seq_k;
  // Column-major view: a row-major [tokens, heads*d] tensor is a (heads*d) x tokens
  // matrix, head h its rows h*d..h*d+d-1. S_h^T (seq_k x seq_q) = K_h Q_h^T.
  for (int gi = 0; gi < group; ++gi) {
    RINGSIM_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        impl_->handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(p.seq_k),
        static_cast<int>(p.seq_q), d, &alpha, p.k, dt, p.kv_heads * d, d, p.q + gi * d, dt,
        p.heads * d, static_cast<long long>(group) * d, &beta, sbuf + gi * plane, dt,
        static_cast<int>(p.seq_k), group * plane, p.kv_heads, CUBLAS_COMPUTE_32F,
        CUBLAS_GEMM_DEFAULT));
  }
  const unsigned rows = static_cast<unsigned>(p.seq_q * p.heads);
  if (t == DType::BF16)
    softmax_rows_kernel<true>
        <<<rows, kSoftmaxThreads, 0, s>>>(sbuf, p.lse, p.seq_q, p.seq_k, p.heads, p.causal, scale);
  else
    softmax_rows_kernel<false>
        <<<rows, kSoftmaxThreads, 0, s>>>(sbuf, p.lse, p.seq_q, p.seq_k, p.heads, p.causal, scale);
  check_last("softmax_rows_kernel launch");
  // O_h^T (d x seq_q) = V_h^T (d x seq_k) P_h^T (seq_k x seq_q).
  for (int gi = 0; gi < group; ++gi) {
    RINGSIM_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        impl_->handle, CUBLAS_OP_N, CUBLAS_OP_N, d, static_cast<int>(p.seq_q),
        static_cast<int>(p.seq_k), &alpha, p.v, dt, p.kv_heads * d, d, sbuf + gi * plane, dt,
        static_cast<int>(p.seq_k), group * plane, &beta, p.o + gi * d, dt, p.heads * d,
        static_cast<long long>(group) * d, p.kv_heads, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
}

}  // namespace ringsim::kernels::cuda
