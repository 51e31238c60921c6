#pragma once
// The ring on GPUs: one rank per GPU, the CUDA FlashAttention-2 kernels
// (kernels/cuda/attention.hpp) on a compute stream, K/V (and, backward, the
// fp32 dK/dV) moved by NCCL point-to-point send/recv on a second stream. CUDA
// events order the two streams: step s's kernels wait for the block that
// arrived in round s-1, and round s's receive into the spare buffer waits for
// the kernels of step s-1 that read it, so each transfer overlaps the
// neighbouring step's compute. Same schedule, sharding and trace events as the
// CPU ring (mpi/ring.hpp); times come from CUDA events, not the host clock.
//
// MPI only starts the job (the NCCL id is broadcast with MPI_Bcast) and
// gathers results; the ring itself never touches MPI.
#include <memory>

#include "mpi/comm.hpp"
#include "mpi/inputs.hpp"
#include "mpi/options.hpp"
#include "mpi/ring.hpp"

namespace ringsim::mpi::nccl {

class GpuRing {
 public:
  // Picks this rank's GPU (local rank on its host), creates the NCCL
  // communicator and uploads the shard (rounded to bf16/fp16). Throws
  // InputError on every rank when a host has fewer GPUs than ranks.
  GpuRing(const World& w, const RingOptions& o, const Shard<float>& shard);
  ~GpuRing();
  GpuRing(const GpuRing&) = delete;
  GpuRing& operator=(const GpuRing&) = delete;

  // One timed run of o.pass (bwd runs an untimed forward first), recorded in
  // `rec` (null: untimed), in seconds since the run's start event.
  void run(RankRun* rec);

  // This rank's results, head-major as the CPU ring returns them.
  FwdOut<float> forward_result() const;
  BwdOut<float> backward_result() const;

  std::string device_name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringsim::mpi::nccl
