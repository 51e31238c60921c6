#pragma once
// Host API of the CUDA attention kernels. Plain C++ (no CUDA headers): pointers are
// device pointers, `stream` is a cudaStream_t (nullptr = default stream). Shapes and
// conventions follow kernels/reference.hpp; see docs/cuda.md for the design.
// Bad shapes throw ringsim::InputError; CUDA failures throw CudaError.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/cuda/params.hpp"
#include "models/core/workload.hpp"

namespace ringsim::kernels::cuda {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Storage type of Q, K, V, O: ringsim::DType (models/core/workload.hpp), bf16
// or fp16; the kernels refuse fp32 storage (InputError).
const char* dtype_name(DType t);

// Forward kernel variants (flash_fwd.cuh): 16 or 32 query rows per warp (64 or 128
// per block). kAuto takes 32 unless that leaves fewer blocks than multiprocessors.
enum class FwdVariant { kAuto, kRows16, kRows32 };
const char* variant_name(FwdVariant v);

// Fills o (or o_f32) and lse. head_dim must be 64 or 128; heads % kv_heads == 0;
// q, k, v, o 16-byte aligned. p.scale = 0 means 1/sqrt(head_dim).
void flash_forward(DType t, int head_dim, FwdParams p, void* stream = nullptr,
                   FwdVariant variant = FwdVariant::kAuto);

// Adds the gradients into p.dq, p.dk, p.dv (fp32). Needs a scratch delta of
// seq_q * heads floats, which it fills (p.delta is ignored).
void flash_backward(DType t, int head_dim, BwdParams p, float* delta_scratch,
                    void* stream = nullptr);

// acc_o/acc_lse <- merge(acc, part) for rows = tokens * heads rows of d floats.
void lse_merge(float* acc_o, float* acc_lse, const float* part_o, const float* part_lse,
               std::int64_t rows, int d, void* stream = nullptr);

void to_storage(DType t, std::uint16_t* dst, const float* src, std::int64_t n,
                void* stream = nullptr);

// Throws CudaError naming `what` if the CUDA runtime reports an error (sticky or
// from the last launch).
void check_last(const char* what);

// Number of CUDA devices; 0 with `why` filled when none is usable (no driver, no GPU).
int device_count(std::string* why);

}  // namespace ringsim::kernels::cuda
