#include "mpi/ring.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "kernels/merge.hpp"
#include "models/core/work.hpp"

namespace ringsim::mpi {

namespace {

using kernels::HeadTensor;

// Distinct tags per message kind: a rank receives K, V, the visiting block's
// accumulated dK/dV and, last, its own dK/dV home from the same neighbour.
enum Tag : int { kTagK = 100, kTagV, kTagDK, kTagDV, kTagHomeDK, kTagHomeDV };

// Transfers are grouped by what they carry, so the trace shows each as one event.
enum Group : int { kRecvKV, kSendKV, kRecvDKV, kSendDKV, kRecvHome, kGroups };

// The outstanding requests of one step. Completion is stamped when MPI_Waitany
// reports it, so a transfer that finished during the compute shows as ending
// when the wait began (MPI gives no earlier timestamp without polling).
class Transfers {
 public:
  struct Info {
    double posted = -1, done = -1;
    std::int64_t bytes = 0;
    int open = 0;
  };

  template <typename T>
  void send(Group g, const HeadTensor<T>& x, int to, int tag, const World& w) {
    MPI_Request r;
    RS_MPI(
        MPI_Isend(x.data.data(), static_cast<int>(x.size()), mpi_type<T>(), to, tag, w.comm, &r));
    add(g, r, static_cast<std::int64_t>(x.size() * sizeof(T)));
  }
  template <typename T>
  void recv(Group g, HeadTensor<T>& x, int from, int tag, const World& w) {
    MPI_Request r;
    RS_MPI(
        MPI_Irecv(x.data.data(), static_cast<int>(x.size()), mpi_type<T>(), from, tag, w.comm, &r));
    add(g, r, static_cast<std::int64_t>(x.size() * sizeof(T)));
  }

  // Until every request of `g` is done (others finishing meanwhile are stamped too).
  void wait(Group g) {
    while (info_[g].open > 0) wait_one();
  }
  void wait_all() {
    for (int g = 0; g < kGroups; ++g) wait(static_cast<Group>(g));
    reqs_.clear();
    group_.clear();
  }
  const Info& info(Group g) const { return info_[g]; }

 private:
  void add(Group g, MPI_Request r, std::int64_t bytes) {
    auto& i = info_[g];
    if (i.open == 0 && i.posted < 0) i.posted = now();
    i.bytes += bytes;
    ++i.open;
    reqs_.push_back(r);
    group_.push_back(g);
  }
  void wait_one() {
    int idx = MPI_UNDEFINED;
    RS_MPI(MPI_Waitany(static_cast<int>(reqs_.size()), reqs_.data(), &idx, MPI_STATUS_IGNORE));
    if (idx == MPI_UNDEFINED) throw MpiError("MPI_Waitany: no request left to wait for");
    auto& i = info_[group_[static_cast<std::size_t>(idx)]];
    if (--i.open == 0) i.done = now();
  }

  std::array<Info, kGroups> info_{};
  std::vector<MPI_Request> reqs_;
  std::vector<int> group_;
};

// Appends events to a RankRun (if timing), in microseconds since the barrier.
class Recorder {
 public:
  Recorder(const RingContext& ctx, trace::Pass pass) : rec_(ctx.rec), t0_(ctx.t0), pass_(pass) {}

  void span(Phase phase, double begin, double end, std::int64_t step, std::int64_t kv_block,
            std::int64_t bytes = 0, std::int64_t peer = -1, std::uint64_t entries = 0) {
    if (!rec_) return;
    rec_->events.push_back(
        make_event(phase, pass_, begin - t0_, end - t0_, step, kv_block, bytes, peer, entries));
  }
  void transfers(const Transfers& t, Group g, Phase name, std::int64_t step, std::int64_t kv_block,
                 int peer) {
    const auto& i = t.info(g);
    if (i.posted >= 0) span(name, i.posted, i.done, step, kv_block, i.bytes, peer);
  }
  void step(double start, double compute_s, double wait_s, double end) {
    if (!rec_) return;
    rec_->steps.push_back({start - t0_, end - t0_, compute_s, wait_s});
    rec_->end = end - t0_;
  }

 private:
  RankRun* rec_;
  double t0_;
  trace::Pass pass_;
};

kernels::BlockOpts kernel_opts(const RingOptions& o) {
  kernels::BlockOpts b;
  b.q_chunk = b.k_chunk = o.tile;
  b.causal = o.causal;
  b.threads = o.threads;
  return b;
}

}  // namespace

template <typename T>
Workspace<T>::Workspace(const Shard<T>& shard, bool backward) {
  const auto& k = shard.k;
  auto block = [&] {
    return KV<T>{HeadTensor<T>(k.heads, k.tokens, k.dim), HeadTensor<T>(k.heads, k.tokens, k.dim)};
  };
  recv = {block(), block()};
  if (backward) {
    sum = {block(), block()};
    incoming = block();
    grads.dq = HeadTensor<T>(shard.q.heads, shard.q.tokens, shard.q.dim);
    grads.dk = HeadTensor<T>(k.heads, k.tokens, k.dim);
    grads.dv = HeadTensor<T>(k.heads, k.tokens, k.dim);
  }
}

Workload ring_workload(const RingOptions& o, int ranks) {
  Workload w;
  w.devices = ranks;
  w.block = o.block;
  w.layout = o.layout;
  w.causal = o.causal;
  w.pass = o.pass;
  w.dtype = DType::FP32;
  w.shape.name = "custom";
  w.shape.heads = o.heads;
  w.shape.kv_heads = o.kv_heads;
  w.shape.head_dim = o.head_dim;
  return w;
}

template <typename T>
FwdOut<T> ring_forward(const RingContext& ctx, const Shard<T>& shard, Workspace<T>& ws) {
  const auto& o = *ctx.opts;
  const auto& w = ctx.w;
  const auto work = ring_workload(o, w.size);
  const auto steps = num_steps(work);
  const auto opts = kernel_opts(o);
  Recorder rec(ctx, trace::Pass::Fwd);

  FwdOut<T> out;
  for (std::int64_t s = 0; s < steps; ++s) {
    const double start = now();
    // Step 0 reads the rank's own block; step s >= 1 the one received in step s-1.
    const HeadTensor<T>& cur_k =
        s == 0 ? shard.k : ws.recv[static_cast<std::size_t>((s - 1) % 2)].k;
    const HeadTensor<T>& cur_v =
        s == 0 ? shard.v : ws.recv[static_cast<std::size_t>((s - 1) % 2)].v;
    auto& nxt = ws.recv[static_cast<std::size_t>(s % 2)];
    const auto src = kv_source(work, w.rank, s);
    Transfers tr;
    if (s + 1 < steps) {
      tr.recv(kRecvKV, nxt.k, w.prev(), kTagK, w);
      tr.recv(kRecvKV, nxt.v, w.prev(), kTagV, w);
      tr.send(kSendKV, cur_k, w.next(), kTagK, w);
      tr.send(kSendKV, cur_v, w.next(), kTagV, w);
    }
    const auto kv_pos = device_tokens(o.layout, w.size, o.block, src);
    const double c0 = now();
    auto& part = ws.part;
    kernels::blockwise_forward_into(shard.q, cur_k, cur_v, shard.tokens, kv_pos, opts, part);
    const double c1 = now();
    const auto entries = part.entries;
    if (s == 0)
      std::swap(ws.running, part);  // both buffers stay allocated: nothing to copy
    else
      kernels::merge_partial(ws.running.o, ws.running.lse, part.o, part.lse);
    const double c2 = now();
    tr.wait_all();
    const double end = now();
    rec.span(Phase::Partial, c0, c1, s, src, 0, -1, entries);
    if (s > 0) rec.span(Phase::Merge, c1, c2, s, src);
    if (s + 1 < steps) {
      rec.transfers(tr, kSendKV, Phase::Send, s, src, w.next());
      rec.transfers(tr, kRecvKV, Phase::Recv, s, kv_source(work, w.rank, s + 1), w.prev());
    }
    if (end - c2 > 0) rec.span(Phase::Wait, c2, end, s, src);
    rec.step(start, c2 - c0, end - c2, end);
  }
  // After the last step: the copy is not part of the ring's time.
  out.o = ws.running.o;
  out.lse = ws.running.lse;
  return out;
}

template <typename T>
BwdOut<T> ring_backward(const RingContext& ctx, const Shard<T>& shard, const FwdOut<T>& fwd,
                        Workspace<T>& ws) {
  const auto& o = *ctx.opts;
  const auto& w = ctx.w;
  const auto work = ring_workload(o, w.size);
  const auto steps = num_steps(work);
  const auto opts = kernel_opts(o);
  Recorder rec(ctx, trace::Pass::Bwd);
  auto& out = ws.grads;
  for (auto* g : {&out.dq, &out.dk, &out.dv}) std::fill(g->data.begin(), g->data.end(), T(0));
  const auto delta = kernels::softmax_delta(fwd.o, shard.d_o);
  // ws.sum[s % 2]: dK/dV of the visiting block after step s, in flight during step s + 1.
  auto& incoming = ws.incoming;
  Transfers prev_send;  // the previous step's dK/dV send, waited for one step later
  for (std::int64_t s = 0; s < steps; ++s) {
    const double start = now();
    const HeadTensor<T>& cur_k =
        s == 0 ? shard.k : ws.recv[static_cast<std::size_t>((s - 1) % 2)].k;
    const HeadTensor<T>& cur_v =
        s == 0 ? shard.v : ws.recv[static_cast<std::size_t>((s - 1) % 2)].v;
    auto& nxt = ws.recv[static_cast<std::size_t>(s % 2)];
    auto& acc = ws.sum[static_cast<std::size_t>(s % 2)];
    const auto src = kv_source(work, w.rank, s);
    const bool last = s + 1 == steps;
    Transfers tr;
    if (!last) {
      tr.recv(kRecvKV, nxt.k, w.prev(), kTagK, w);
      tr.recv(kRecvKV, nxt.v, w.prev(), kTagV, w);
      tr.send(kSendKV, cur_k, w.next(), kTagK, w);
      tr.send(kSendKV, cur_v, w.next(), kTagV, w);
    }
    if (s > 0) {
      tr.recv(kRecvDKV, incoming.k, w.prev(), kTagDK, w);
      tr.recv(kRecvDKV, incoming.v, w.prev(), kTagDV, w);
    }
    if (last && steps > 1) {
      tr.recv(kRecvHome, out.dk, w.prev(), kTagHomeDK, w);
      tr.recv(kRecvHome, out.dv, w.prev(), kTagHomeDV, w);
    }
    const auto kv_pos = device_tokens(o.layout, w.size, o.block, src);
    std::fill(acc.k.data.begin(), acc.k.data.end(), T(0));
    std::fill(acc.v.data.begin(), acc.v.data.end(), T(0));
    const double c0 = now();
    const auto entries =
        kernels::blockwise_backward_accumulate(shard.q, cur_k, cur_v, shard.d_o, fwd.lse, delta,
                                               shard.tokens, kv_pos, opts, out.dq, acc.k, acc.v);
    const double c1 = now();
    double w0 = c1, w1 = c1;
    if (s > 0) {
      tr.wait(kRecvDKV);  // the block's gradient so far, from the ranks it visited before
      w1 = now();
      for (std::size_t i = 0; i < acc.k.size(); ++i) acc.k.data[i] += incoming.k.data[i];
      for (std::size_t i = 0; i < acc.v.size(); ++i) acc.v.data[i] += incoming.v.data[i];
    }
    const double c2 = now();
    Transfers this_send;
    if (steps > 1) {
      const int tk = last ? kTagHomeDK : kTagDK, tv = last ? kTagHomeDV : kTagDV;
      this_send.send(kSendDKV, acc.k, w.next(), tk, w);
      this_send.send(kSendDKV, acc.v, w.next(), tv, w);
    }
    const double w2 = now();
    tr.wait_all();
    prev_send.wait_all();
    if (last) this_send.wait_all();  // the hop home ends the pass
    const double end = now();

    rec.span(Phase::Partial, c0, c1, s, src, 0, -1, entries);
    if (s > 0) {
      if (w1 > w0) rec.span(Phase::Wait, w0, w1, s, src);
      rec.span(Phase::Merge, w1, c2, s, src);
    }
    if (!last) {
      rec.transfers(tr, kSendKV, Phase::Send, s, src, w.next());
      rec.transfers(tr, kRecvKV, Phase::Recv, s, kv_source(work, w.rank, s + 1), w.prev());
    }
    if (s > 0) rec.transfers(tr, kRecvDKV, Phase::Recv, s, src, w.prev());
    if (last && steps > 1) {
      // The hop home is outside the ring's steps: step -1, as the simulator writes it.
      rec.transfers(this_send, kSendDKV, Phase::Send, -1, src, w.next());
      rec.transfers(tr, kRecvHome, Phase::Recv, -1, w.rank, w.prev());
    }
    if (s > 0)
      rec.transfers(prev_send, kSendDKV, Phase::Send, s - 1, kv_source(work, w.rank, s - 1),
                    w.next());
    if (end > w2) rec.span(Phase::Wait, w2, end, s, src);
    rec.step(start, (c1 - c0) + (c2 - w1), (w1 - w0) + (end - w2), end);
    prev_send = std::move(this_send);
  }
  if (steps == 1) {
    out.dk = ws.sum[0].k;
    out.dv = ws.sum[0].v;
  }
  // After the last step: the copy is not part of the ring's time.
  return out;
}

template struct Workspace<float>;
template struct Workspace<double>;
template FwdOut<float> ring_forward(const RingContext&, const Shard<float>&, Workspace<float>&);
template FwdOut<double> ring_forward(const RingContext&, const Shard<double>&, Workspace<double>&);
template BwdOut<float> ring_backward(const RingContext&, const Shard<float>&, const FwdOut<float>&,
                                     Workspace<float>&);
template BwdOut<double> ring_backward(const RingContext&, const Shard<double>&,
                                      const FwdOut<double>&, Workspace<double>&);

}  // namespace ringsim::mpi
