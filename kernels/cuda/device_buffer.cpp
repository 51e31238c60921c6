#include <cuda_runtime.h>

#include <algorithm>
#include <utility>

#include "kernels/cuda/bits.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/timing.hpp"

namespace ringsim::kernels::cuda {

std::size_t l2_bytes() {
  int dev = 0, bytes = 0;
  RINGSIM_CUDA_CHECK(cudaGetDevice(&dev));
  RINGSIM_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, dev));
  return static_cast<std::size_t>(bytes);
}

void flush_l2(DeviceBuffer& scratch, void* stream) {
  RINGSIM_CUDA_CHECK(
      cudaMemsetAsync(scratch.get(), 0, scratch.bytes(), static_cast<cudaStream_t>(stream)));
}

TimeStats time_on_device(const std::function<void()>& fn, int warmup, int repeats, void* stream,
                         const std::function<void()>& before) {
  const auto s = static_cast<cudaStream_t>(stream);
  for (int i = 0; i < warmup; ++i) fn();
  cudaEvent_t a, b;
  RINGSIM_CUDA_CHECK(cudaEventCreate(&a));
  RINGSIM_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    if (before) before();
    RINGSIM_CUDA_CHECK(cudaEventRecord(a, s));
    fn();
    RINGSIM_CUDA_CHECK(cudaEventRecord(b, s));
    RINGSIM_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    RINGSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1e-3);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  check_last("timed region");
  std::sort(t.begin(), t.end());
  TimeStats st;
  st.repeats = repeats;
  if (t.empty()) return st;
  st.min_s = t.front();
  st.max_s = t.back();
  st.median_s = t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
  return st;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : n_(bytes) {
  RINGSIM_CUDA_CHECK(cudaMalloc(&p_, std::max<std::size_t>(bytes, 16)));
}
DeviceBuffer::~DeviceBuffer() {
  if (p_) cudaFree(p_);
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (p_) cudaFree(p_);
    p_ = std::exchange(o.p_, nullptr);
    n_ = std::exchange(o.n_, 0);
  }
  return *this;
}
void DeviceBuffer::upload(const void* host, std::size_t bytes) {
  RINGSIM_CUDA_CHECK(cudaMemcpy(p_, host, bytes, cudaMemcpyHostToDevice));
}
void DeviceBuffer::download(void* host, std::size_t bytes) const {
  RINGSIM_CUDA_CHECK(cudaMemcpy(host, p_, bytes, cudaMemcpyDeviceToHost));
}
void DeviceBuffer::fill_bytes(int value) {
  RINGSIM_CUDA_CHECK(cudaMemset(p_, value, n_));
}

void fill_random(DeviceBuffer& b, std::size_t n, bool bf16, std::uint64_t seed) {
  std::vector<std::uint16_t> h(n);
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& e : h) {  // xorshift64*: fast, and plenty for timing inputs
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    const double u = static_cast<double>((x * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53;
    e = float_to_storage(static_cast<float>((2 * u - 1) * 1.7320508075688772), bf16);
  }
  b.upload(h.data(), n * 2);
}

DeviceInfo device_info() {
  int dev = 0;
  RINGSIM_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  RINGSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  DeviceInfo d;
  d.name = prop.name;
  d.sm_count = prop.multiProcessorCount;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.mem_gib = static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024 * 1024);
  RINGSIM_CUDA_CHECK(cudaDriverGetVersion(&d.driver));
  RINGSIM_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime));
  return d;
}

}  // namespace ringsim::kernels::cuda
