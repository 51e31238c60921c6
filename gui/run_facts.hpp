#pragma once
// What a trace's run metadata (otherData.ringsim.summary, as the trace reader
// flattens it) says about the run beyond its events: the faults injected, how
// devices group into nodes, which device the simulator found critical, and the
// one verdict (`verdict.*`) the header repeats instead of recomputing it.
// Plain C++ with no Qt, so it is unit-tested.
#include <cstdint>
#include <string>
#include <vector>

#include "gui/trace_model.hpp"

namespace ringsim::gui {

// One injected fault (ringsim run --straggler / --degrade / --jitter, sim/faults.hpp).
struct Fault {
  enum class Kind { Straggler, Degrade, Jitter } kind = Kind::Straggler;
  int device = -1;         // straggler: the slow device
  std::string link;        // degrade: the link's name ("nic7", "7-8")
  int from = -1, to = -1;  // degrade "A-B": the route from device A to device B
  double factor = 1;  // straggler: compute x factor; degrade: bandwidth / factor; jitter: sigma
  std::uint64_t seed = 0;  // jitter
  std::string text;        // "device 5 computes x1.5", "link 7-8 bandwidth /3"
};

struct RunFacts {
  std::vector<Fault> faults;
  int gpus_per_node = 0;     // 0: unknown or one node (no node boundaries drawn)
  int critical_device = -1;  // the simulator's (summary critical_device), -1 if absent
  // Job mode (ringsim run --dp/--tp, summary job.*): the CP rings the trace's
  // lanes form, each ranks_per_ring consecutive devices. 0 rings: one ring.
  int rings = 0, ranks_per_ring = 0;
  int slowest_ring = -1;
  std::string job_why;  // job.why: what makes the slowest ring slow
  // The run's one verdict (summary verdict.*), when the trace carries it.
  bool has_verdict = false;
  std::string verdict_text;        // verdict.text
  std::string verdict_hidden;      // verdict.hidden ("true"/"false"), empty if absent
  double verdict_exposed_us = -1;  // verdict.exposed_comm_s in microseconds, -1 if absent
  bool has_summary = false;        // any otherData.ringsim.summary at all
  // An `infer --trace` (a prefill): its summary's own split of the time, so
  // the header names what `infer` prints (the ring's exposed transfers apart
  // from the TP all-reduces, which are on the critical path by design); -1 if absent.
  double infer_ttft_us = -1, infer_ring_exposed_us = -1, infer_tp_us = -1;
};

RunFacts run_facts(const RunInfo& run);

// Node of a device (device / gpus_per_node), 0 when the nodes are unknown.
inline int node_of(const RunFacts& f, int device) {
  return f.gpus_per_node > 0 ? device / f.gpus_per_node : 0;
}
// Ring of a lane's device in job mode (device / ranks_per_ring), 0 otherwise.
inline int ring_of(const RunFacts& f, int device) {
  return f.rings > 1 && f.ranks_per_ring > 0 ? device / f.ranks_per_ring : 0;
}
// "job: 4 rings x 8 ranks; slowest ring 0: its FSDP ...", or "" for one ring.
std::string job_line(const RunFacts& f);
// True when a transfer from `a` to `b` leaves a node.
inline bool crosses_node(const RunFacts& f, int a, int b) {
  return f.gpus_per_node > 0 && a >= 0 && b >= 0 && node_of(f, a) != node_of(f, b);
}
// The fault that slows device d's compute, or nullptr.
const Fault* straggler_of(const RunFacts& f, int device);
// The degrade fault on the route a -> b (either direction), or nullptr.
const Fault* degraded_link(const RunFacts& f, int a, int b);
// "faults: device 5 computes x1.5; link 7-8 bandwidth /3", or "" without faults.
std::string faults_line(const RunFacts& f);

}  // namespace ringsim::gui
