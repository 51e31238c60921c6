#pragma once
// The two element-wise device operations the NCCL ring needs besides the
// attention kernels: dst += src (dK/dV arriving from the previous rank) and
// filling. Plain C++ declarations; device_ops.cu launches them.
#include <cstdint>

namespace ringsim::mpi::nccl {

void add_into(float* dst, const float* src, std::int64_t n, void* stream);

}  // namespace ringsim::mpi::nccl
