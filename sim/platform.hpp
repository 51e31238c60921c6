#pragma once
// Turns a Topology into a SimGrid platform inside the current engine.
//
// Routing is a small NetZone subclass that asks the Topology for each route.
// SimGrid's own zones do not fit: a full zone stores an N x N route table (2 GB
// of pointers at 16K devices), and the torus and fat-tree zones put latency on
// every hop and cannot express one NIC per GPU on rails. Routes computed on
// demand cost O(hops) per transfer and no memory.
#include <cstdint>
#include <vector>

#include "sim/topology.hpp"

namespace simgrid::s4u {
class Host;
}

namespace ringsim::sim {

// Host speed in "flop"/s. Execs carry seconds x kHostSpeed, so a duration is
// exact whatever the compute model; large enough that SimGrid's work-amount
// precision (1e-5 x 1e-9) is far below a picosecond.
constexpr double kHostSpeed = 1e12;

// One host per device (named d<i>, in device order; then a TP group's other
// GPUs, Topology::tp_host) and every TopoLink as a
// split-duplex link, its bandwidth divided by bw_divisor[link] (1 = nominal;
// --degrade). The Topology must outlive the engine. Call once, after the
// network model is configured and before any actor is created.
//
// `time_scale` (a power of two, so scaling is exact) stretches the simulated
// clock: latencies are multiplied by it and bandwidths divided, and the
// caller multiplies exec durations by it and divides every clock reading.
// SimGrid ends any activity shorter than its timing precision (1 ns) at once,
// so a run whose steps last picoseconds is simulated stretched.
std::vector<simgrid::s4u::Host*> build_platform(const Topology& topo,
                                                const std::vector<double>& bw_divisor,
                                                double time_scale = 1);

}  // namespace ringsim::sim
