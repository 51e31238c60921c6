#pragma once
// A collective as the user's own fabric ran it: nccl-tests' time per message
// size (`ringsim hardware --import-nccl-tests`, docs/own-cluster.md). A
// catalog interconnect may carry such curves ("measured"); the collectives
// model then reads the time from the curve instead of bandwidth x efficiency
// plus per-hop latency (models/analytic/collectives.hpp).
//
// Between measured sizes the time is interpolated linearly in log(size) and
// log(time); below the smallest size it stays at the smallest size's time
// (the latency floor), above the largest it grows at the largest size's bus
// bandwidth. Another group size n on the same tier keeps the bus bandwidth
// (nccl-tests defines busbw so that it does, for ring algorithms): the time
// scales by bus_factor(n) / bus_factor(measured ranks).
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ringsim {

enum class MeasuredKind { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv };

// nccl-tests' names without "_perf": all_reduce, all_gather, reduce_scatter, alltoall, sendrecv.
const char* to_string(MeasuredKind k);
std::optional<MeasuredKind> parse_measured_kind(const std::string& s);
const std::vector<std::string>& measured_kind_names();

// nccl-tests' bus bandwidth factor (doc/PERFORMANCE.md): busbw = algbw x factor.
double bus_factor(MeasuredKind k, double ranks);

struct MeasuredCurve {
  MeasuredKind kind = MeasuredKind::AllReduce;
  int ranks = 0, nodes = 1;
  std::string gpu, source;
  // (size in bytes, nccl-tests' convention; seconds), sizes strictly ascending.
  std::vector<std::pair<double, double>> points;

  int per_node() const { return nodes > 0 ? ranks / nodes : ranks; }
  // Bus bandwidth at a measured point, bytes/s (0 for a zero-byte point).
  double busbw(std::size_t i) const;
  // One collective of `bytes` over `ranks` ranks, seconds.
  double seconds(double bytes, double ranks) const;
  // The time at the smallest measured size, scaled to `ranks` (the floor).
  double floor_seconds(double ranks) const;
};

// The curve of `kind` among `curves`, or nullptr.
const MeasuredCurve* find_curve(const std::vector<MeasuredCurve>& curves, MeasuredKind kind);

}  // namespace ringsim
