#pragma once
// What the runtime takes from a GPU's memory beside the framework's tensors
// (docs/plan.md, "Memory per device"): the driver's reserve, the CUDA
// context, NCCL's communicator buffers (outside PyTorch's allocator), the
// BLAS workspace (inside it) and the caching allocator's reserve above the
// tensors' peak. Each an itemised term with its source, none folded into a
// margin.
#include <cstdint>

namespace ringsim {

// NCCL's buffers per communicator (NVIDIA/nccl src/init.cc defaults):
// channels x connections x the three protocols' buffers.
struct NcclConstants {
  static constexpr double kSimpleBytes = 4194304;  // NCCL_BUFFSIZE default: 4 MiB
  // LL128: NCCL_LL128_ELEMS_PER_THREAD 120 x 640 threads x NCCL_STEPS 8 x 8 B.
  static constexpr double kLl128Bytes = 120.0 * 640 * 8 * 8;
  // LL: NCCL_LL_LINES_PER_THREAD 8 x 512 threads x NCCL_STEPS 8 x 16 B.
  static constexpr double kLlBytes = 8.0 * 512 * 8 * 16;
  // An 8 x H800 job's NCCL log: "16 coll channels, 0 nvls channels, 16 p2p
  // channels" (NVIDIA/nccl issue 892).
  static constexpr int kChannels = 16;
  // "Ring uses a limited amount of memory as it only has 2 connections
  // regardless of the scale" (an NCCL maintainer, NVIDIA/nccl issue 986).
  static constexpr int kConnectionsPerChannel = 2;
  static constexpr double per_communicator() {
    return kChannels * kConnectionsPerChannel * (kSimpleBytes + kLl128Bytes + kLlBytes);
  }
};

// Communicators a rank of this layout uses: one per parallel group of more
// than one rank (the data-parallel shard group cp x dp, TP, CP, PP).
int communicators(std::int64_t shard_group, std::int64_t tp, std::int64_t cp, std::int64_t pp);

}  // namespace ringsim
