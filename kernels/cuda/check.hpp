#pragma once
// CUDA runtime error checks for host code in kernels/cuda (CUDA headers needed).
#include <cuda_runtime.h>

#include <string>

#include "kernels/cuda/attention.hpp"

#define RINGSIM_CUDA_CHECK(expr)                                                                \
  do {                                                                                          \
    const cudaError_t rs_err_ = (expr);                                                         \
    if (rs_err_ != cudaSuccess)                                                                 \
      throw ::ringsim::kernels::cuda::CudaError(std::string(#expr) + " failed at " + __FILE__ + \
                                                ":" + std::to_string(__LINE__) + ": " +         \
                                                cudaGetErrorString(rs_err_));                   \
  } while (0)
