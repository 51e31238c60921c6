#pragma once
// The distributed ring: every rank holds one query block and one K/V block and
// runs N steps. At step s a rank attends its queries to the K/V block of rank
// kv_source(s) (models/core/work.hpp), while the block moves on to the next rank
// with MPI_Isend/MPI_Irecv into the other half of a double buffer; the next
// step starts once both the compute and the transfer are done.
//
// Backward (ring-flash-attention's schedule): K/V travel as in forward; each
// step's dK/dV contribution for the visiting block is computed into a fresh
// buffer, the accumulated dK/dV of that block arrives from the previous rank,
// the two are summed and sent on, so this transfer overlaps the next step's
// compute. After the last step the block's dK/dV make one more hop home.
// Gradients travel in the compute type (fp32 by default), as the kernels
// accumulate them.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/blockwise.hpp"
#include "mpi/comm.hpp"
#include "mpi/inputs.hpp"
#include "mpi/options.hpp"
#include "trace/event.hpp"

namespace ringsim::mpi {

// Events are the trace format's own (trace/event.hpp): microseconds since
// the timed run's barrier.
using trace::Event;
using trace::Phase;

// One activity from `begin` to `end`, both seconds since the barrier.
inline Event make_event(Phase phase, trace::Pass pass, double begin, double end, std::int64_t step,
                        std::int64_t kv_block, std::int64_t bytes = 0, std::int64_t peer = -1,
                        std::uint64_t entries = 0) {
  Event e;
  e.phase = phase;
  e.pass = pass;
  e.start = begin * 1e6;
  e.dur = end > begin ? (end - begin) * 1e6 : 0.0;
  e.step = static_cast<std::int32_t>(step);
  e.kv_block = static_cast<std::int32_t>(kv_block);
  e.bytes = static_cast<std::uint64_t>(bytes);
  e.peer = static_cast<std::int32_t>(peer);
  e.entries = entries;
  return e;
}

struct StepRecord {
  double start = 0, end = 0;  // seconds since the barrier
  double compute_s = 0;       // kernel + merge
  double wait_s = 0;          // blocked on transfers after the compute
};

// What one rank saw in one timed run.
struct RankRun {
  std::vector<Event> events;
  std::vector<StepRecord> steps;  // forward steps, then backward steps
  double end = 0;
  // CPU time of this rank's thread over the timed run (read once at each end:
  // the clock costs ~0.4 us a call, too much to read in every step of a small
  // block). MPI's waits spin, so on a core of its own cpu_s ~ end; other
  // processes' time slices make end / cpu_s > 1.
  double cpu_s = 0;
};

template <typename T>
struct FwdOut {
  kernels::HeadTensor<T> o;
  std::vector<T> lse;  // [heads][tokens]
};

template <typename T>
struct BwdOut {
  kernels::HeadTensor<T> dq, dk, dv;  // this rank's rows (dk, dv: its own K/V block)
};

// A K/V block (and, backward, its dK/dV) as it travels.
template <typename T>
struct KV {
  kernels::HeadTensor<T> k, v;
};

// Buffers allocated once, outside the timed region (as a framework's caching
// allocator would hold them): the two halves of the receive double buffer and,
// backward, the dK/dV in flight. A rank's own K/V is never copied: step 0
// reads it where it lies and sends it from there.
template <typename T>
struct Workspace {
  std::array<KV<T>, 2> recv;  // K/V arriving for the next step
  std::array<KV<T>, 2> sum;   // backward: the visiting block's dK/dV after a step
  KV<T> incoming;             // backward: that block's dK/dV from the previous rank
  // Forward: this step's partial and the running output. Kept across steps
  // and runs, so no step allocates (the kernel profile times the same calls).
  kernels::FwdResult<T> part, running;
  // Backward: this rank's dQ and its own block's dK/dV as they build up, kept
  // across runs (zeroed, not reallocated: a fresh megabyte's page faults cost
  // about as much as a step's arithmetic on a fast core).
  BwdOut<T> grads;
  Workspace(const Shard<T>& shard, bool backward);
};

struct RingContext {
  World w;
  const RingOptions* opts = nullptr;
  double t0 = 0;           // MPI_Wtime at the barrier
  RankRun* rec = nullptr;  // null: untimed
};

template <typename T>
FwdOut<T> ring_forward(const RingContext& ctx, const Shard<T>& shard, Workspace<T>& ws);

template <typename T>
BwdOut<T> ring_backward(const RingContext& ctx, const Shard<T>& shard, const FwdOut<T>& fwd,
                        Workspace<T>& ws);

// Workload view of the options for models/core/work.hpp (devices = ranks).
Workload ring_workload(const RingOptions& o, int ranks);

}  // namespace ringsim::mpi
