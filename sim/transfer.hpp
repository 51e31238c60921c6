#pragma once
// How the device actors wait for a transfer (docs/sim.md, "Speed").
#include <simgrid/s4u/Activity.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <vector>

namespace ringsim::sim {

// Blocks until `c` ends, at the same simulated instant as `c->wait()`.
// Comm::wait() on a transfer still in flight also starts a CPU sleep action
// on the waiter's host (an lmm variable, created and freed per wait) that
// only serves to hear of host failures, which ringsim never injects; a
// wait_any on the one transfer is woken by the same completion without it.
inline void wait_transfer(const simgrid::s4u::CommPtr& c) {
  simgrid::s4u::Activity::wait_any(std::vector<simgrid::s4u::ActivityPtr>{c});
}

}  // namespace ringsim::sim
