#pragma once
// --pingpong: the classic MPI ping-pong between ranks 0 and 1 (one message
// there, one back, per round trip) over message sizes in powers of two, plus
// the ring's own pattern (both ranks send to each other at once). Gives the
// latency and per-direction bandwidth a SimGrid platform needs, as the line
// t = L + bytes / B (Hockney's model) through the one-way times of messages of
// 8 KiB and more, the sizes a ring step sends (pingpong.cpp says why).
// Each time is the median of its round trips, so a busy machine's outliers
// do not move it.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "mpi/comm.hpp"
#include "mpi/options.hpp"
#include "mpi/results.hpp"

namespace ringsim::mpi {

// Collective; ranks other than 0 and 1 only wait. The result is on rank 0.
PingPongResult pingpong(const World& w, const RingOptions& o);

}  // namespace ringsim::mpi
