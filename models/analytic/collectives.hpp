#pragma once
// A communication library's collectives (NCCL's, and RCCL's and XLA's on the
// same terms) at achievable, not nominal, bandwidth (docs/models.md,
// "Collectives"): the time of one all-gather, reduce-scatter or all-reduce of
// a group placed on the cluster, which the planner (FSDP, data parallel,
// tensor parallel) and `infer` (tensor parallel) charge, and `run --tp` with
// both of its engines.
//
// Bandwidth: a ring collective's bus bandwidth (nccl-tests' busbw) is that of
// the slowest link class its rings cross, at the interconnect's measured
// collective_efficiency. Inside one NVLink domain that is the GPU's NVLink.
// Across nodes NCCL runs one ring per channel and puts each channel on its
// own NIC, so a node's egress is every NIC its group members own: m group
// members per node behind gpus_per_nic GPUs per NIC carry m / gpus_per_nic
// NICs' worth (nccl-tests on 4 x 8 H200 across nodes: 365 GB/s busbw with
// eight 400 Gb/s NICs a node, against 50 GB/s for one), divided by the spine
// oversubscription when the group spans leaves.
//
// Latency: NCCL's base latency per collective plus one link latency per ring
// step (2 (n - 1) steps for an all-reduce, n - 1 otherwise); an all-reduce
// across nodes may run as NCCL's tree instead, 2 (intra hops + log2 nodes
// inter hops), and the faster of ring and tree is taken (NCCL's tuner
// compares the same two costs, src/graph/tuning.cc).
//
// Measured: where the tier's interconnect carries the user's own nccl-tests
// curve for the collective (models/core/measured_curve.hpp), its time is read
// from the curve instead.
#include <cstdint>
#include <string>

#include "models/core/workload.hpp"

namespace ringsim {

enum class Collective { AllGather, ReduceScatter, AllReduce };

// NCCL src/graph/tuning.cc baseLatencies, Simple protocol, ring and tree: 8.4 us.
inline constexpr double kCollectiveBaseLatency = 8.4e-6;

// Where a group of `ranks` GPUs sits: how many of its members share one node
// (the rest are on other nodes, rail-aligned). `per_node` >= ranks: one node.
struct CollectiveGroup {
  std::int64_t ranks = 1;
  std::int64_t per_node = 1;
};

// A group of `ranks` consecutive GPUs (members per node: min(ranks, GPUs per
// node / stride)), `stride` GPUs apart: FSDP over CP x DP ranks with TP
// innermost has stride tp.
CollectiveGroup placed_group(const Hardware& hw, std::int64_t ranks, std::int64_t stride = 1);

struct CollectiveLink {
  double bus_bw = 0;     // achievable bus bandwidth, bytes/s
  double intra_lat = 0;  // per ring step inside a node
  double inter_lat = 0;  // per ring step that leaves the node
  bool crosses_nodes = false;
  std::string link;  // the bottleneck link class's name
};
CollectiveLink collective_link(const Hardware& hw, const CollectiveGroup& g);

struct CollectiveTime {
  double seconds = 0, bandwidth_s = 0, latency_s = 0;
  const char* algorithm = "ring";  // ring | tree | measured (the tier's nccl-tests curve)
};

// One collective over `g` of a buffer of `bytes` per rank for all-reduce, or
// of `bytes` in all (the gathered / reduced whole; each rank holds bytes / n)
// for all-gather and reduce-scatter, nccl-tests' size convention.
CollectiveTime collective_time(Collective c, double bytes, const CollectiveGroup& g,
                               const Hardware& hw);

}  // namespace ringsim
