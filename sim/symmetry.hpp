#pragma once
// Symmetry: a ring whose devices all do the same work at every step, on a
// platform that repeats itself, runs every device on the same timeline. One
// period of it (two devices of a flat ring; one node's GPUs, its last GPU
// sending over the NIC to its first) then gives the time of the whole ring
// in P instead of N actors: N steps x P devices instead of N^2 activities.
//
// The reduced run is exact only where nothing couples the periods: the exact
// network model (LV08's cross-traffic makes a reverse flow share the next
// hop's link), no faults, no contention between periods (a ring has none).
// tests/sim/test_symmetry.cpp checks it against the full simulation.
#include <cstdint>
#include <string>

#include "models/core/workload.hpp"
#include "models/kernel/implementation.hpp"
#include "sim/faults.hpp"
#include "sim/topology.hpp"

namespace ringsim::sim {

struct Period {
  std::int64_t devices = 0;  // 0: the run is not symmetric
  TopologyOptions topology;  // the representative ring (flat, per-hop classes)
  std::string why_not;       // when devices == 0
};

// `exact_network`: the exact (CM02) model; `outputs`: --trace/--csv asked for
// (they describe every device, so the full run is needed). `im`: the
// implementation whose step costs must also be alike on every device (a
// kernel runs zigzag's two chunk shapes at different rates); none: the pair
// counts decide alone.
Period symmetric_period(const Workload& w, const TopologyOptions& t, const Faults& f,
                        bool exact_network, bool outputs, const Implementation* im = nullptr);

}  // namespace ringsim::sim
