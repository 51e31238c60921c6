#include <cmath>
#include <vector>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/ring_emulator.hpp"

namespace ringsim::kernels::cuda {
namespace {

// dst row i <- src row idx[i] (gather) or dst row idx[i] <- src row i (scatter);
// rows of `words` 4-byte words.
__global__ void move_rows_kernel(std::uint32_t* dst, const std::uint32_t* src,
                                 const std::int64_t* idx, std::int64_t rows, int words,
                                 bool scatter) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * words) return;
  const std::int64_t r = i / words, w = i % words;
  if (scatter)
    dst[idx[r] * words + w] = src[r * words + w];
  else
    dst[r * words + w] = src[idx[r] * words + w];
}

__global__ void fill_kernel(float* p, float value, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = value;
}

void move_rows(void* dst, const void* src, const std::int64_t* idx, std::int64_t rows,
               std::int64_t row_bytes, bool scatter, cudaStream_t s) {
  const int words = static_cast<int>(row_bytes / 4);
  const std::int64_t n = rows * words;
  move_rows_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(
      static_cast<std::uint32_t*>(dst), static_cast<const std::uint32_t*>(src), idx, rows, words,
      scatter);
  check_last("move_rows_kernel launch");
}

void fill(float* p, float value, std::int64_t n, cudaStream_t s) {
  fill_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(p, value, n);
  check_last("fill_kernel launch");
}

// Device buffers released on scope exit (also when a check throws).
class Arena {
 public:
  template <typename T>
  T* get(std::int64_t n) {
    bufs_.emplace_back(static_cast<std::size_t>(n > 0 ? n : 0) * sizeof(T));
    return bufs_.back().as<T>();
  }

 private:
  std::vector<DeviceBuffer> bufs_;
};

struct Device {
  std::int64_t* pos;  // global token index of each local row = its position
  std::uint16_t *q, *k, *v;
};

std::vector<Device> place(const RingProblem& pr, const std::uint16_t* q, const std::uint16_t* k,
                          const std::uint16_t* v, Arena& a, cudaStream_t s) {
  const std::int64_t c = pr.seq / pr.devices;
  const std::int64_t qrow = 2LL * pr.heads * pr.head_dim, kvrow = 2LL * pr.kv_heads * pr.head_dim;
  std::vector<Device> devs(static_cast<size_t>(pr.devices));
  for (int r = 0; r < pr.devices; ++r) {
    const auto tokens = layout_tokens(pr.layout, pr.seq, pr.devices, r);
    Device& d = devs[static_cast<size_t>(r)];
    d.pos = a.get<std::int64_t>(c);
    RINGSIM_CUDA_CHECK(
        cudaMemcpyAsync(d.pos, tokens.data(), c * sizeof(std::int64_t), cudaMemcpyHostToDevice, s));
    d.q = a.get<std::uint16_t>(c * pr.heads * pr.head_dim);
    d.k = a.get<std::uint16_t>(c * pr.kv_heads * pr.head_dim);
    d.v = a.get<std::uint16_t>(c * pr.kv_heads * pr.head_dim);
    move_rows(d.q, q, d.pos, c, qrow, false, s);
    move_rows(d.k, k, d.pos, c, kvrow, false, s);
    move_rows(d.v, v, d.pos, c, kvrow, false, s);
  }
  // The host token lists above go out of scope: wait for their copies.
  RINGSIM_CUDA_CHECK(cudaStreamSynchronize(s));
  return devs;
}

void check_problem(const RingProblem& pr) {
  if (pr.devices < 1 || pr.seq < 1) throw InputError("ring emulator: devices and seq must be >= 1");
  (void)layout_tokens(pr.layout, pr.seq, pr.devices, 0);  // divisibility
}

}  // namespace

void ring_forward(const RingProblem& pr, const std::uint16_t* q, const std::uint16_t* k,
                  const std::uint16_t* v, std::uint16_t* o, float* lse, void* stream) {
  check_problem(pr);
  const auto s = static_cast<cudaStream_t>(stream);
  Arena a;
  const auto devs = place(pr, q, k, v, a, s);
  const std::int64_t c = pr.seq / pr.devices, rows = c * pr.heads;
  float* part_o = a.get<float>(rows * pr.head_dim);
  float* part_lse = a.get<float>(rows);
  std::uint16_t* o_local = a.get<std::uint16_t>(rows * pr.head_dim);
  for (int r = 0; r < pr.devices; ++r) {
    float* acc_o = a.get<float>(rows * pr.head_dim);
    float* acc_lse = a.get<float>(rows);
    fill(acc_o, 0.f, rows * pr.head_dim, s);
    fill(acc_lse, -INFINITY, rows, s);
    const Device& me = devs[static_cast<size_t>(r)];
    for (int step = 0; step < pr.devices; ++step) {
      const Device& src = devs[static_cast<size_t>(kv_source(r, step, pr.devices))];
      FwdParams p;
      p.q = me.q;
      p.k = src.k;
      p.v = src.v;
      p.o_f32 = part_o;
      p.lse = part_lse;
      p.seq_q = c;
      p.seq_k = c;
      p.heads = pr.heads;
      p.kv_heads = pr.kv_heads;
      p.causal = pr.causal;
      p.q_pos.array = me.pos;
      p.k_pos.array = src.pos;
      flash_forward(pr.dtype, pr.head_dim, p, s);
      lse_merge(acc_o, acc_lse, part_o, part_lse, rows, pr.head_dim, s);
    }
    to_storage(pr.dtype, o_local, acc_o, rows * pr.head_dim, s);
    move_rows(o, o_local, me.pos, c, 2LL * pr.heads * pr.head_dim, true, s);
    move_rows(lse, acc_lse, me.pos, c, 4LL * pr.heads, true, s);
  }
  RINGSIM_CUDA_CHECK(cudaStreamSynchronize(s));  // before the arena frees the buffers
}

void ring_backward(const RingProblem& pr, const std::uint16_t* q, const std::uint16_t* k,
                   const std::uint16_t* v, const std::uint16_t* o, const std::uint16_t* d_o,
                   const float* lse, float* dq, float* dk, float* dv, void* stream) {
  check_problem(pr);
  const auto s = static_cast<cudaStream_t>(stream);
  Arena a;
  const auto devs = place(pr, q, k, v, a, s);
  const std::int64_t c = pr.seq / pr.devices, rows = c * pr.heads;
  const std::int64_t q_elems = rows * pr.head_dim, kv_elems = c * pr.kv_heads * pr.head_dim;
  struct Grad {
    std::uint16_t *o, *d_o;
    float *lse, *dq, *dk, *dv;
  };
  std::vector<Grad> g(static_cast<size_t>(pr.devices));
  for (int r = 0; r < pr.devices; ++r) {
    Grad& x = g[static_cast<size_t>(r)];
    const Device& me = devs[static_cast<size_t>(r)];
    x.o = a.get<std::uint16_t>(q_elems);
    x.d_o = a.get<std::uint16_t>(q_elems);
    x.lse = a.get<float>(rows);
    x.dq = a.get<float>(q_elems);
    x.dk = a.get<float>(kv_elems);
    x.dv = a.get<float>(kv_elems);
    move_rows(x.o, o, me.pos, c, 2LL * pr.heads * pr.head_dim, false, s);
    move_rows(x.d_o, d_o, me.pos, c, 2LL * pr.heads * pr.head_dim, false, s);
    move_rows(x.lse, lse, me.pos, c, 4LL * pr.heads, false, s);
    fill(x.dq, 0.f, q_elems, s);
    fill(x.dk, 0.f, kv_elems, s);
    fill(x.dv, 0.f, kv_elems, s);
  }
  float* delta = a.get<float>(rows);
  for (int step = 0; step < pr.devices; ++step)
    for (int r = 0; r < pr.devices; ++r) {
      const int src_rank = kv_source(r, step, pr.devices);
      const Device& me = devs[static_cast<size_t>(r)];
      const Device& src = devs[static_cast<size_t>(src_rank)];
      const Grad& x = g[static_cast<size_t>(r)];
      BwdParams p;
      p.q = me.q;
      p.k = src.k;
      p.v = src.v;
      p.o = x.o;
      p.d_o = x.d_o;
      p.lse = x.lse;
      p.dq = x.dq;
      p.dk = g[static_cast<size_t>(src_rank)].dk;  // dK/dV travel with their K/V
      p.dv = g[static_cast<size_t>(src_rank)].dv;
      p.seq_q = c;
      p.seq_k = c;
      p.heads = pr.heads;
      p.kv_heads = pr.kv_heads;
      p.causal = pr.causal;
      p.q_pos.array = me.pos;
      p.k_pos.array = src.pos;
      flash_backward(pr.dtype, pr.head_dim, p, delta, s);
    }
  for (int r = 0; r < pr.devices; ++r) {
    const Grad& x = g[static_cast<size_t>(r)];
    const Device& me = devs[static_cast<size_t>(r)];
    move_rows(dq, x.dq, me.pos, c, 4LL * pr.heads * pr.head_dim, true, s);
    move_rows(dk, x.dk, me.pos, c, 4LL * pr.kv_heads * pr.head_dim, true, s);
    move_rows(dv, x.dv, me.pos, c, 4LL * pr.kv_heads * pr.head_dim, true, s);
  }
  RINGSIM_CUDA_CHECK(cudaStreamSynchronize(s));
}

}  // namespace ringsim::kernels::cuda
