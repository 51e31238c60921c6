#include "mpi/nccl/nccl_ring.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <array>
#include <cmath>
#include <vector>

#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/bits.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "models/core/errors.hpp"
#include "models/core/work.hpp"
#include "mpi/nccl/device_ops.hpp"

namespace ringsim::mpi::nccl {

namespace {

namespace kc = kernels::cuda;
using kernels::HeadTensor;

void check_nccl(ncclResult_t r, const char* call) {
  if (r != ncclSuccess) throw MpiError(fmt::format("{} failed: {}", call, ncclGetErrorString(r)));
}
#define RS_NCCL(call) check_nccl((call), #call)
#define RS_CUDA(call) RINGSIM_CUDA_CHECK(call)

// Device arrays: the CUDA kernels' one owner of device memory.
template <typename T>
using Dev = kc::DeviceArray<T>;

// Events of one run, destroyed together.
class Events {
 public:
  cudaEvent_t mark(cudaStream_t s) {
    cudaEvent_t e;
    RS_CUDA(cudaEventCreate(&e));
    RS_CUDA(cudaEventRecord(e, s));
    all_.push_back(e);
    return e;
  }
  ~Events() {
    for (auto e : all_) cudaEventDestroy(e);
  }

 private:
  std::vector<cudaEvent_t> all_;
};

// Events of one ring step. Compute stream: s0 (the previous step's work is
// done), c0 (the waits for transfers are over, the kernel starts), c1 (kernel
// done), w1 (backward: the incoming dK/dV has arrived), c2 (merge or add done).
// Transfer stream: kv0/kv1 around the K/V round, g0/g1 around the dK/dV round.
struct StepEvents {
  cudaEvent_t s0{}, c0{}, c1{}, w1{}, c2{}, kv0{}, kv1{}, g0{}, g1{};
  bool kv = false, dkv = false;
};

// [tokens, heads, dim] token-major in 16-bit storage, from a head-major float tensor.
std::vector<std::uint16_t> to_token_major16(const HeadTensor<float>& x, bool bf16) {
  std::vector<std::uint16_t> out(x.size());
  for (int h = 0; h < x.heads; ++h)
    for (std::int64_t t = 0; t < x.tokens; ++t)
      for (int e = 0; e < x.dim; ++e)
        out[(static_cast<std::size_t>(t) * x.heads + h) * x.dim + e] =
            kc::float_to_storage(x.row(h, t)[e], bf16);
  return out;
}

HeadTensor<float> from_token_major(const std::vector<float>& x, int heads, std::int64_t tokens,
                                   int dim) {
  HeadTensor<float> out(heads, tokens, dim);
  for (int h = 0; h < heads; ++h)
    for (std::int64_t t = 0; t < tokens; ++t)
      for (int e = 0; e < dim; ++e)
        out.row(h, t)[e] = x[(static_cast<std::size_t>(t) * heads + h) * dim + e];
  return out;
}

template <typename T>
std::vector<T> download(const Dev<T>& d) {
  std::vector<T> h(static_cast<std::size_t>(d.size()));
  RS_CUDA(cudaMemcpy(h.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost));
  return h;
}

template <typename T>
Dev<T> upload(const std::vector<T>& h) {
  Dev<T> d(static_cast<std::int64_t>(h.size()));
  RS_CUDA(cudaMemcpy(d.get(), h.data(), d.bytes(), cudaMemcpyHostToDevice));
  return d;
}

// Picks the GPU of this rank: ranks on one host take its GPUs in local-rank order.
int pick_device(const World& w) {
  MPI_Comm local;
  RS_MPI(MPI_Comm_split_type(w.comm, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &local));
  int lrank = 0, lsize = 1;
  RS_MPI(MPI_Comm_rank(local, &lrank));
  RS_MPI(MPI_Comm_size(local, &lsize));
  MPI_Comm_free(&local);
  std::string why;
  const int gpus = kc::device_count(&why);
  std::string err;
  if (gpus == 0)
    err = fmt::format(
        "no usable CUDA device on rank {} ({}); ringsim-mpi-nccl needs one GPU per "
        "rank (ringsim-mpi runs the same ring on CPUs)",
        w.rank, why);
  else if (lsize > gpus)
    err = fmt::format(
        "{} ranks share a host with {} GPU(s); NCCL needs one GPU per rank: start "
        "at most {} ranks per host",
        lsize, gpus, gpus);
  agree_on_error(w, err);
  RS_CUDA(cudaSetDevice(lrank));
  return lrank;
}

}  // namespace

struct GpuRing::Impl {
  World w;
  RingOptions o;
  Workload work;
  int n = 1, H = 1, Hk = 1, D = 64, device = 0;
  std::int64_t c = 0, q_elems = 0, kv_elems = 0;
  bool bf16 = true;
  ringsim::DType dt = ringsim::DType::BF16;
  ncclDataType_t nt = ncclBfloat16;
  ncclComm_t comm = nullptr;
  cudaStream_t cs = nullptr, ms = nullptr;

  Dev<std::int64_t> pos;  // rank r's token positions at [r * c, (r + 1) * c)
  Dev<std::uint16_t> q, d_o, o16, own_k, own_v;
  std::array<Dev<std::uint16_t>, 2> k, v;
  Dev<float> acc_o, acc_lse, part_o, part_lse, delta, dq, dk_home, dv_home;
  std::array<Dev<float>, 2> dk_acc, dv_acc, dk_in, dv_in;

  const std::int64_t* positions(std::int64_t rank) const { return pos.get() + rank * c; }

  void forward(Events& ev, cudaEvent_t origin, RankRun* rec);
  void backward(Events& ev, cudaEvent_t origin, RankRun* rec);
  void record_step(RankRun* rec, cudaEvent_t origin, const StepEvents& e, std::int64_t s,
                   const char* pass, bool last) const;
};

GpuRing::GpuRing(const World& w, const RingOptions& o, const Shard<float>& shard)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  m.w = w;
  m.o = o;
  m.work = ring_workload(o, w.size);
  m.n = w.size;
  m.H = o.heads;
  m.Hk = o.kv_heads;
  m.D = o.head_dim;
  m.c = o.block;
  m.q_elems = m.c * m.H * m.D;
  m.kv_elems = m.c * m.Hk * m.D;
  m.bf16 = o.dtype == "bf16";
  m.dt = m.bf16 ? ringsim::DType::BF16 : ringsim::DType::FP16;
  m.nt = m.bf16 ? ncclBfloat16 : ncclFloat16;
  if (m.D != 64 && m.D != 128)
    throw InputError(fmt::format("--head-dim: the CUDA kernels take 64 or 128, got {}", m.D));

  m.device = pick_device(w);
  ncclUniqueId id;
  if (w.rank == 0) RS_NCCL(ncclGetUniqueId(&id));
  RS_MPI(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, w.comm));
  RS_NCCL(ncclCommInitRank(&m.comm, w.size, id, w.rank));
  RS_CUDA(cudaStreamCreateWithFlags(&m.cs, cudaStreamNonBlocking));
  RS_CUDA(cudaStreamCreateWithFlags(&m.ms, cudaStreamNonBlocking));

  std::vector<std::int64_t> all_pos;
  for (int r = 0; r < m.n; ++r) {
    const auto t = device_tokens(o.layout, m.n, m.c, r);
    all_pos.insert(all_pos.end(), t.begin(), t.end());
  }
  m.pos = upload(all_pos);
  m.q = upload(to_token_major16(shard.q, m.bf16));
  m.own_k = upload(to_token_major16(shard.k, m.bf16));
  m.own_v = upload(to_token_major16(shard.v, m.bf16));
  if (o.pass != Pass::Fwd) m.d_o = upload(to_token_major16(shard.d_o, m.bf16));
  for (int i = 0; i < 2; ++i) {
    m.k[i] = Dev<std::uint16_t>(m.kv_elems);
    m.v[i] = Dev<std::uint16_t>(m.kv_elems);
  }
  m.acc_o = Dev<float>(m.q_elems);
  m.part_o = Dev<float>(m.q_elems);
  m.acc_lse = Dev<float>(m.c * m.H);
  m.part_lse = Dev<float>(m.c * m.H);
  if (o.pass != Pass::Fwd) {
    m.o16 = Dev<std::uint16_t>(m.q_elems);
    m.delta = Dev<float>(m.c * m.H);
    m.dq = Dev<float>(m.q_elems);
    m.dk_home = Dev<float>(m.kv_elems);
    m.dv_home = Dev<float>(m.kv_elems);
    for (int i = 0; i < 2; ++i) {
      m.dk_acc[i] = Dev<float>(m.kv_elems);
      m.dv_acc[i] = Dev<float>(m.kv_elems);
      m.dk_in[i] = Dev<float>(m.kv_elems);
      m.dv_in[i] = Dev<float>(m.kv_elems);
    }
  }
}

GpuRing::~GpuRing() {
  auto& m = *impl_;
  if (m.cs) cudaStreamSynchronize(m.cs);
  if (m.ms) cudaStreamSynchronize(m.ms);
  if (m.comm) ncclCommDestroy(m.comm);
  if (m.cs) cudaStreamDestroy(m.cs);
  if (m.ms) cudaStreamDestroy(m.ms);
}

std::string GpuRing::device_name() const {
  cudaDeviceProp p{};
  RS_CUDA(cudaGetDeviceProperties(&p, impl_->device));
  return p.name;
}

void GpuRing::Impl::record_step(RankRun* rec, cudaEvent_t origin, const StepEvents& e,
                                std::int64_t s, const char* pass, bool last) const {
  if (!rec) return;
  auto at = [&](cudaEvent_t x) {
    float ms_ = 0;
    RS_CUDA(cudaEventElapsedTime(&ms_, origin, x));
    return static_cast<double>(ms_) * 1e-3;
  };
  const bool bwd = pass[0] == 'b';
  const auto src = kv_source(work, w.rank, s);
  const auto tp = bwd ? trace::Pass::Bwd : trace::Pass::Fwd;
  auto span = [&](Phase phase, std::int64_t step, double b, double en, std::int64_t kv_block,
                  std::int64_t bytes = 0, std::int64_t peer = -1, std::uint64_t entries = 0) {
    rec->events.push_back(make_event(phase, tp, b, en, step, kv_block, bytes, peer, entries));
  };
  const double s0 = at(e.s0), c0 = at(e.c0), c1 = at(e.c1), c2 = at(e.c2);
  const double w1 = bwd && s > 0 ? at(e.w1) : c1;
  // The CUDA kernels count no pairs: the partial's entries are the work model's.
  span(Phase::Partial, s, c0, c1, src, 0, -1, step_entries(work, w.rank, s));
  if (s > 0) span(Phase::Merge, s, w1, c2, src);
  if (c0 > s0) span(Phase::Wait, s, s0, c0, src);
  if (w1 > c1) span(Phase::Wait, s, c1, w1, src);
  const std::int64_t kv_bytes = 2 * kv_elems * 2;  // K and V in 16-bit storage
  if (e.kv) {
    span(Phase::Send, s, at(e.kv0), at(e.kv1), src, kv_bytes, w.next());
    span(Phase::Recv, s, at(e.kv0), at(e.kv1), kv_source(work, w.rank, s + 1), kv_bytes, w.prev());
  }
  double end = c2;
  if (e.dkv) {
    const std::int64_t g_bytes = 2 * kv_elems * 4;
    // The hop home is outside the ring's steps: step -1, as the simulator writes it.
    const std::int64_t step = last ? -1 : s;
    span(Phase::Send, step, at(e.g0), at(e.g1), src, g_bytes, w.next());
    span(Phase::Recv, step, at(e.g0), at(e.g1), last ? w.rank : kv_source(work, w.rank, s + 1),
         g_bytes, w.prev());
    if (last) end = std::max(end, at(e.g1));  // the pass ends when dK/dV are home
  }
  // No host CPU time: the GPU computes.
  rec->steps.push_back({s0, end, (c1 - c0) + (c2 - w1), (c0 - s0) + (w1 - c1)});
  rec->end = end;
}

void GpuRing::Impl::forward(Events& ev, cudaEvent_t origin, RankRun* rec) {
  const std::int64_t rows = c * H;
  RS_CUDA(cudaMemcpyAsync(k[0].get(), own_k.get(), own_k.bytes(), cudaMemcpyDeviceToDevice, cs));
  RS_CUDA(cudaMemcpyAsync(v[0].get(), own_v.get(), own_v.bytes(), cudaMemcpyDeviceToDevice, cs));
  cudaEvent_t ready = ev.mark(cs);
  std::vector<StepEvents> e(static_cast<std::size_t>(n));
  for (int s = 0; s < n; ++s) {
    auto& x = e[static_cast<std::size_t>(s)];
    const int cur = s % 2, nxt = (s + 1) % 2;
    const auto src = kv_source(work, w.rank, s);
    if (s + 1 < n) {
      // The spare buffer was read by step s-1's kernel: receive only after it.
      RS_CUDA(cudaStreamWaitEvent(ms, s > 0 ? e[static_cast<std::size_t>(s - 1)].c1 : ready, 0));
      x.kv = true;
      x.kv0 = ev.mark(ms);
      RS_NCCL(ncclGroupStart());
      RS_NCCL(ncclSend(k[cur].get(), static_cast<size_t>(kv_elems), nt, w.next(), comm, ms));
      RS_NCCL(ncclSend(v[cur].get(), static_cast<size_t>(kv_elems), nt, w.next(), comm, ms));
      RS_NCCL(ncclRecv(k[nxt].get(), static_cast<size_t>(kv_elems), nt, w.prev(), comm, ms));
      RS_NCCL(ncclRecv(v[nxt].get(), static_cast<size_t>(kv_elems), nt, w.prev(), comm, ms));
      RS_NCCL(ncclGroupEnd());
      x.kv1 = ev.mark(ms);
    }
    x.s0 = ev.mark(cs);
    if (s > 0) RS_CUDA(cudaStreamWaitEvent(cs, e[static_cast<std::size_t>(s - 1)].kv1, 0));
    x.c0 = ev.mark(cs);
    kc::FwdParams p;
    p.q = q.get();
    p.k = k[cur].get();
    p.v = v[cur].get();
    // Step 0 writes the accumulator directly; later steps merge into it.
    p.o_f32 = s == 0 ? acc_o.get() : part_o.get();
    p.lse = s == 0 ? acc_lse.get() : part_lse.get();
    p.seq_q = p.seq_k = c;
    p.heads = H;
    p.kv_heads = Hk;
    p.causal = o.causal;
    p.q_pos.array = positions(w.rank);
    p.k_pos.array = positions(src);
    kc::flash_forward(dt, D, p, cs);
    x.c1 = ev.mark(cs);
    if (s > 0) kc::lse_merge(acc_o.get(), acc_lse.get(), part_o.get(), part_lse.get(), rows, D, cs);
    x.c2 = ev.mark(cs);
  }
  RS_CUDA(cudaStreamSynchronize(cs));
  RS_CUDA(cudaStreamSynchronize(ms));
  for (int s = 0; s < n; ++s)
    record_step(rec, origin, e[static_cast<std::size_t>(s)], s, "fwd", s + 1 == n);
}

void GpuRing::Impl::backward(Events& ev, cudaEvent_t origin, RankRun* rec) {
  RS_CUDA(cudaMemcpyAsync(k[0].get(), own_k.get(), own_k.bytes(), cudaMemcpyDeviceToDevice, cs));
  RS_CUDA(cudaMemcpyAsync(v[0].get(), own_v.get(), own_v.bytes(), cudaMemcpyDeviceToDevice, cs));
  RS_CUDA(cudaMemsetAsync(dq.get(), 0, dq.bytes(), cs));
  cudaEvent_t ready = ev.mark(cs);
  std::vector<StepEvents> e(static_cast<std::size_t>(n));
  const auto count = static_cast<size_t>(kv_elems);
  for (int s = 0; s < n; ++s) {
    auto& x = e[static_cast<std::size_t>(s)];
    const int cur = s % 2, nxt = (s + 1) % 2, acc = s % 2;
    const bool last = s + 1 == n;
    const auto src = kv_source(work, w.rank, s);
    if (!last) {
      RS_CUDA(cudaStreamWaitEvent(ms, s > 0 ? e[static_cast<std::size_t>(s - 1)].c1 : ready, 0));
      x.kv = true;
      x.kv0 = ev.mark(ms);
      RS_NCCL(ncclGroupStart());
      RS_NCCL(ncclSend(k[cur].get(), count, nt, w.next(), comm, ms));
      RS_NCCL(ncclSend(v[cur].get(), count, nt, w.next(), comm, ms));
      RS_NCCL(ncclRecv(k[nxt].get(), count, nt, w.prev(), comm, ms));
      RS_NCCL(ncclRecv(v[nxt].get(), count, nt, w.prev(), comm, ms));
      RS_NCCL(ncclGroupEnd());
      x.kv1 = ev.mark(ms);
    }
    x.s0 = ev.mark(cs);
    if (s > 0) RS_CUDA(cudaStreamWaitEvent(cs, e[static_cast<std::size_t>(s - 1)].kv1, 0));
    // This accumulator left in round s-2; overwrite it only once that send is done.
    if (s > 1) RS_CUDA(cudaStreamWaitEvent(cs, e[static_cast<std::size_t>(s - 2)].g1, 0));
    RS_CUDA(cudaMemsetAsync(dk_acc[acc].get(), 0, dk_acc[acc].bytes(), cs));
    RS_CUDA(cudaMemsetAsync(dv_acc[acc].get(), 0, dv_acc[acc].bytes(), cs));
    x.c0 = ev.mark(cs);
    kc::BwdParams p;
    p.q = q.get();
    p.k = k[cur].get();
    p.v = v[cur].get();
    p.o = o16.get();
    p.d_o = d_o.get();
    p.lse = acc_lse.get();
    p.dq = dq.get();
    p.dk = dk_acc[acc].get();
    p.dv = dv_acc[acc].get();
    p.seq_q = p.seq_k = c;
    p.heads = H;
    p.kv_heads = Hk;
    p.causal = o.causal;
    p.q_pos.array = positions(w.rank);
    p.k_pos.array = positions(src);
    kc::flash_backward(dt, D, p, delta.get(), cs);
    x.c1 = ev.mark(cs);
    if (s > 0) {
      // The block's dK/dV so far, sent by the previous rank in round s-1.
      RS_CUDA(cudaStreamWaitEvent(cs, e[static_cast<std::size_t>(s - 1)].g1, 0));
      x.w1 = ev.mark(cs);
      add_into(dk_acc[acc].get(), dk_in[(s - 1) % 2].get(), kv_elems, cs);
      add_into(dv_acc[acc].get(), dv_in[(s - 1) % 2].get(), kv_elems, cs);
    }
    x.c2 = ev.mark(cs);
    if (n > 1) {
      RS_CUDA(cudaStreamWaitEvent(ms, x.c2, 0));
      x.dkv = true;
      x.g0 = ev.mark(ms);
      float* in_k = last ? dk_home.get() : dk_in[s % 2].get();
      float* in_v = last ? dv_home.get() : dv_in[s % 2].get();
      RS_NCCL(ncclGroupStart());
      RS_NCCL(ncclSend(dk_acc[acc].get(), count, ncclFloat32, w.next(), comm, ms));
      RS_NCCL(ncclSend(dv_acc[acc].get(), count, ncclFloat32, w.next(), comm, ms));
      RS_NCCL(ncclRecv(in_k, count, ncclFloat32, w.prev(), comm, ms));
      RS_NCCL(ncclRecv(in_v, count, ncclFloat32, w.prev(), comm, ms));
      RS_NCCL(ncclGroupEnd());
      x.g1 = ev.mark(ms);
    }
  }
  RS_CUDA(cudaStreamSynchronize(cs));
  RS_CUDA(cudaStreamSynchronize(ms));
  for (int s = 0; s < n; ++s)
    record_step(rec, origin, e[static_cast<std::size_t>(s)], s, "bwd", s + 1 == n);
}

void GpuRing::run(RankRun* rec) {
  auto& m = *impl_;
  Events ev;
  if (m.o.pass == Pass::Bwd) {
    RS_MPI(MPI_Barrier(m.w.comm));
    m.forward(ev, ev.mark(m.cs), nullptr);  // untimed: backward needs O and LSE
  }
  RS_CUDA(cudaDeviceSynchronize());
  RS_MPI(MPI_Barrier(m.w.comm));
  const cudaEvent_t origin = ev.mark(m.cs);
  if (m.o.pass != Pass::Bwd) m.forward(ev, origin, rec);
  if (m.o.pass != Pass::Fwd) {
    // O in the input type, as the backward kernel reads it (FlashAttention-2 stores O so).
    kc::to_storage(m.dt, m.o16.get(), m.acc_o.get(), m.q_elems, m.cs);
    m.backward(ev, origin, rec);
  }
}

FwdOut<float> GpuRing::forward_result() const {
  const auto& m = *impl_;
  FwdOut<float> out;
  out.o = from_token_major(download(m.acc_o), m.H, m.c, m.D);
  const auto lse = download(m.acc_lse);  // [c, H] -> [H][c]
  out.lse.resize(lse.size());
  for (int h = 0; h < m.H; ++h)
    for (std::int64_t t = 0; t < m.c; ++t)
      out.lse[static_cast<std::size_t>(h * m.c + t)] = lse[static_cast<std::size_t>(t * m.H + h)];
  return out;
}

BwdOut<float> GpuRing::backward_result() const {
  const auto& m = *impl_;
  BwdOut<float> out;
  out.dq = from_token_major(download(m.dq), m.H, m.c, m.D);
  // One rank: the block never left, its gradient is the step-0 accumulator.
  const auto& dk = m.n > 1 ? m.dk_home : m.dk_acc[0];
  const auto& dv = m.n > 1 ? m.dv_home : m.dv_acc[0];
  out.dk = from_token_major(download(dk), m.Hk, m.c, m.D);
  out.dv = from_token_major(download(dv), m.Hk, m.c, m.D);
  return out;
}

}  // namespace ringsim::mpi::nccl
