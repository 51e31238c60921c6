#pragma once
// GPU timing and device buffers for the CUDA benchmark, profile and tests: CUDA
// events around each repeat (device time, not host time), after warm-up runs.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ringsim::kernels::cuda {

struct TimeStats {
  double median_s = 0, min_s = 0, max_s = 0;
  int repeats = 0;
};

// Runs fn `warmup` times, then times `repeats` runs one by one on `stream`.
TimeStats time_on_device(const std::function<void()>& fn, int warmup, int repeats,
                         void* stream = nullptr);

// A cudaMalloc'd buffer (RAII). fill_random writes N(0,1) values in the storage type.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return p_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  std::size_t bytes() const { return n_; }
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;
  void fill_bytes(int value);

 private:
  void* p_ = nullptr;
  std::size_t n_ = 0;
};

// n values, uniform with unit variance, in the storage type of `bf16`, uploaded to b.
void fill_random(DeviceBuffer& b, std::size_t n, bool bf16, std::uint64_t seed);

struct DeviceInfo {
  std::string name;
  int sm_count = 0, cc_major = 0, cc_minor = 0, driver = 0, runtime = 0;
  double mem_gib = 0;
};
DeviceInfo device_info();  // of the current device; throws CudaError without one

}  // namespace ringsim::kernels::cuda
