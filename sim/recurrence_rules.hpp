#pragma once
// When a run may be played as a recurrence (sim/recurrence.hpp) instead of by
// SimGrid's actors: a ring whose hops never share a link, on the exact network
// model, with nothing but the ring's own transfers on the links. No SimGrid
// here, so the command line can decide before the size guard.
#include <cstdint>
#include <string>

#include "models/core/workload.hpp"
#include "models/kernel/implementation.hpp"
#include "sim/options.hpp"
#include "sim/topology.hpp"

namespace ringsim::sim {

// Why the run cannot be played as a recurrence, "" when it can. `w`: the
// workload as the user gave it (with --tp and --scope); `im`: its
// implementation (whether its passes move per-layer all-to-alls); `t`: the
// ring's topology (one ring: job mode is refused by the caller).
std::string recurrence_refusal(const Workload& w, const Implementation& im,
                               const TopologyOptions& t, NetworkModel network);

// The first two ring hops whose routes cross the same direction of a link,
// in words ("hop 47->0 and 63->64 both cross leaf1-spine0 up"); "" when
// every hop's route is its own. The topology's devices form rings of `ring`
// consecutive devices (job mode's layout; one ring: all of them), each
// sending d -> d + 1 inside its ring.
std::string shared_ring_link(const Topology& topo, std::int64_t ring);

}  // namespace ringsim::sim
