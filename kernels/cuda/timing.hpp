#pragma once
// GPU timing and device buffers for the CUDA benchmark, profile and tests: CUDA
// events around each repeat (device time, not host time), after warm-up runs.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/cuda/device_buffer.hpp"

namespace ringsim::kernels::cuda {

struct TimeStats {
  double median_s = 0, min_s = 0, max_s = 0;
  int repeats = 0;
};

// Runs fn `warmup` times, then times `repeats` runs one by one on `stream`;
// `before` (untimed) runs before each, e.g. flush_l2.
TimeStats time_on_device(const std::function<void()>& fn, int warmup, int repeats,
                         void* stream = nullptr, const std::function<void()>& before = {});

// Bytes of the device's L2 cache, and a write over `scratch` (sized to at
// least twice that) that evicts it: a ring step's inputs arrive from another
// device and are not in L2, so a profile timed on warm L2 is optimistic.
std::size_t l2_bytes();
void flush_l2(DeviceBuffer& scratch, void* stream = nullptr);

// n values, uniform with unit variance, in the storage type of `bf16`, uploaded to b.
void fill_random(DeviceBuffer& b, std::size_t n, bool bf16, std::uint64_t seed);

struct DeviceInfo {
  std::string name;
  int sm_count = 0, cc_major = 0, cc_minor = 0, driver = 0, runtime = 0;
  double mem_gib = 0;
};
DeviceInfo device_info();  // of the current device; throws CudaError without one

}  // namespace ringsim::kernels::cuda
