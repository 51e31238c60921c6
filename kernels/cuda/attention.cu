// Host launchers for the attention kernels: shape checks, template dispatch,
// shared-memory opt-in, error checks.
#include <cmath>
#include <string>

#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/flash_bwd.cuh"
#include "kernels/cuda/flash_fwd.cuh"
#include "kernels/cuda/lse_merge.cuh"
#include "models/core/errors.hpp"

namespace ringsim::kernels::cuda {
namespace {

cudaStream_t as_stream(void* s) {
  return static_cast<cudaStream_t>(s);
}

void check_shape(int head_dim, std::int64_t seq_q, std::int64_t seq_k, int heads, int kv_heads,
                 const void* q, const void* k, const void* v) {
  if (head_dim != 64 && head_dim != 128)
    throw InputError("cuda attention: head_dim " + std::to_string(head_dim) +
                     " not supported (64 or 128)");
  if (seq_q < 0 || seq_k < 0 || heads < 1 || kv_heads < 1 || heads % kv_heads != 0)
    throw InputError("cuda attention: need seq >= 0, heads >= 1 and kv_heads dividing heads");
  if ((seq_q + 63) / 64 > 0x7fffffff || heads > 65535)
    throw InputError("cuda attention: seq_q / heads too large for one grid");
  for (const void* ptr : {q, k, v})
    if (reinterpret_cast<std::uintptr_t>(ptr) % 16 != 0)
      throw InputError("cuda attention: q, k, v must be 16-byte aligned");
}

// Kernels needing more than 48 KB of dynamic shared memory must say so once.
template <typename Kernel>
void allow_smem(Kernel kernel, int bytes) {
  RINGSIM_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

template <bool B, int D, int kMT>
void fwd(const FwdParams& p, cudaStream_t s) {
  using C = FwdConfig<D, kMT>;
  static bool ready = (allow_smem(flash_fwd_kernel<B, D, kMT>, C::kSmemBytes), true);
  (void)ready;
  const dim3 grid(static_cast<unsigned>((p.seq_q + C::kBr - 1) / C::kBr),
                  static_cast<unsigned>(p.heads));
  flash_fwd_kernel<B, D, kMT><<<grid, C::kThreads, C::kSmemBytes, s>>>(p);
  check_last("flash_fwd_kernel launch");
}

template <bool B, int D>
void fwd_variant(const FwdParams& p, cudaStream_t s, bool rows32) {
  rows32 ? fwd<B, D, 2>(p, s) : fwd<B, D, 1>(p, s);
}

int multiprocessors() {
  static const int n = [] {
    int dev = 0, count = 0;
    RINGSIM_CUDA_CHECK(cudaGetDevice(&dev));
    RINGSIM_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, dev));
    return count;
  }();
  return n;
}

template <bool B, int D>
void bwd(BwdParams p, float* delta, cudaStream_t s) {
  using C = BwdConfig<D>;
  static bool ready = (allow_smem(flash_bwd_kernel<B, D>, C::kSmemBytes), true);
  (void)ready;
  const std::int64_t rows = p.seq_q * p.heads;
  bwd_delta_kernel<B, D><<<static_cast<unsigned>((rows + 7) / 8), 256, 0, s>>>(p, delta);
  check_last("bwd_delta_kernel launch");
  p.delta = delta;
  const dim3 grid(static_cast<unsigned>((p.seq_k + C::kBc - 1) / C::kBc),
                  static_cast<unsigned>(p.kv_heads));
  flash_bwd_kernel<B, D><<<grid, C::kThreads, C::kSmemBytes, s>>>(p);
  check_last("flash_bwd_kernel launch");
}

}  // namespace

const char* dtype_name(DType t) {
  return t == DType::BF16 ? "bf16" : t == DType::FP16 ? "fp16" : "fp32";
}

namespace {
// The kernels' storage types; fp32 inputs are converted by the caller.
void check_storage(DType t) {
  if (t != DType::BF16 && t != DType::FP16)
    throw InputError(std::string("cuda attention: storage type must be bf16 or fp16, got ") +
                     dtype_name(t));
}
}  // namespace

const char* variant_name(FwdVariant v) {
  return v == FwdVariant::kAuto ? "auto" : v == FwdVariant::kRows16 ? "rows16" : "rows32";
}

void check_last(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw CudaError(std::string(what) + ": " + cudaGetErrorString(e));
}

int device_count(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
    cudaGetLastError();  // clear it, so later checks do not report it again
    return 0;
  }
  if (n == 0 && why) *why = "no CUDA device";
  return n;
}

void flash_forward(DType t, int head_dim, FwdParams p, void* stream, FwdVariant variant) {
  check_storage(t);
  check_shape(head_dim, p.seq_q, p.seq_k, p.heads, p.kv_heads, p.q, p.k, p.v);
  if ((p.o == nullptr) == (p.o_f32 == nullptr) || p.lse == nullptr)
    throw InputError("cuda attention: set exactly one of o / o_f32, and lse");
  if (p.scale == 0) p.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  if (p.seq_q == 0) return;
  const auto s = as_stream(stream);
  const bool b = t == DType::BF16;
  // 128-row blocks halve shared-memory traffic per FLOP but make half as many
  // blocks; below one block per multiprocessor, parallelism matters more.
  const bool rows32 =
      variant == FwdVariant::kRows32 ||
      (variant == FwdVariant::kAuto && (p.seq_q + 127) / 128 * p.heads >= multiprocessors());
  if (head_dim == 64)
    b ? fwd_variant<true, 64>(p, s, rows32) : fwd_variant<false, 64>(p, s, rows32);
  else
    b ? fwd_variant<true, 128>(p, s, rows32) : fwd_variant<false, 128>(p, s, rows32);
}

void flash_backward(DType t, int head_dim, BwdParams p, float* delta, void* stream) {
  check_storage(t);
  check_shape(head_dim, p.seq_q, p.seq_k, p.heads, p.kv_heads, p.q, p.k, p.v);
  if (!p.o || !p.d_o || !p.lse || !p.dq || !p.dk || !p.dv || !delta)
    throw InputError("cuda attention backward: o, d_o, lse, dq, dk, dv, delta are required");
  if (p.scale == 0) p.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  if (p.seq_q == 0 || p.seq_k == 0) return;
  const auto s = as_stream(stream);
  const bool b = t == DType::BF16;
  if (head_dim == 64)
    b ? bwd<true, 64>(p, delta, s) : bwd<false, 64>(p, delta, s);
  else
    b ? bwd<true, 128>(p, delta, s) : bwd<false, 128>(p, delta, s);
}

void lse_merge(float* acc_o, float* acc_lse, const float* part_o, const float* part_lse,
               std::int64_t rows, int d, void* stream) {
  if (rows == 0) return;
  lse_merge_kernel<<<static_cast<unsigned>((rows + 7) / 8), 256, 0, as_stream(stream)>>>(
      acc_o, acc_lse, part_o, part_lse, rows, d);
  check_last("lse_merge_kernel launch");
}

void to_storage(DType t, std::uint16_t* dst, const float* src, std::int64_t n, void* stream) {
  check_storage(t);
  if (n == 0) return;
  const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
  if (t == DType::BF16)
    to_storage_kernel<true><<<blocks, 256, 0, as_stream(stream)>>>(dst, src, n);
  else
    to_storage_kernel<false><<<blocks, 256, 0, as_stream(stream)>>>(dst, src, n);
  check_last("to_storage_kernel launch");
}

}  // namespace ringsim::kernels::cuda
