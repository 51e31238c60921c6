#pragma once
// Device memory, owned in one place: DeviceBuffer is the only class that calls
// cudaMalloc and cudaFree; DeviceArray<T> is a typed array on one, and the ring
// emulator's and the NCCL ring's buffers are made of them. Plain C++ (no CUDA
// headers), so host code includes it freely.
#include <cstddef>
#include <cstdint>

namespace ringsim::kernels::cuda {

// A cudaMalloc'd buffer (RAII); at least 16 bytes, so empty arrays have an address.
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

// n elements of T in one DeviceBuffer.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::int64_t n)
      : buf_(static_cast<std::size_t>(n > 0 ? n : 0) * sizeof(T)), n_(n > 0 ? n : 0) {}
  T* get() const { return buf_.as<T>(); }
  std::int64_t size() const { return n_; }
  std::size_t bytes() const { return buf_.bytes(); }

 private:
  DeviceBuffer buf_;
  std::int64_t n_ = 0;
};

}  // namespace ringsim::kernels::cuda
