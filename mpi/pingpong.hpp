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

namespace ringsim::mpi {

struct PingPongPoint {
  std::int64_t bytes = 0;
  double one_way_s = 0;   // ping-pong: half the median round trip
  double exchange_s = 0;  // both ranks send `bytes` to each other at once (MPI_Sendrecv)
  // A forward ring step's transfer with no compute: `bytes` as two messages
  // (K and V, bytes / 2 each) posted with MPI_Isend/MPI_Irecv by both ranks,
  // then MPI_Waitall; posting included.
  double ring_step_s = 0;
};

// Does the transport move data while the rank computes? The ring step's
// messages are posted, the rank spins (no MPI call) for twice their
// ring_step_s, then waits: `residual_s` is that wait. overlap = 1 - residual /
// ring_step_s: 1 when the transfer finished during the spin (a NIC or copy
// engine moved it), 0 when it all happened in the wait (copies on the
// computing core, progress only inside MPI calls).
struct OverlapPoint {
  std::int64_t bytes = 0;
  double spin_s = 0, residual_s = 0, overlap = 0;
};

struct PingPongResult {
  std::vector<PingPongPoint> points;
  double latency_s = 0, bandwidth_Bps = 0;  // the line's intercept and 1 / slope
  double small_latency_s = 0;               // one-way time of the smallest message
  double exchange_latency_s = 0, exchange_bandwidth_Bps = 0;  // both directions busy
  double ring_latency_s = 0, ring_bandwidth_Bps = 0;          // the line through ring_step_s
  std::vector<OverlapPoint> overlap_points;
  double overlap = 0;  // median over overlap_points
  // "none" when overlap < 0.5 (most of a transfer waits for the compute to
  // end), else "full": the `ringsim run --overlap` that matches this transport.
  std::string overlap_mode() const { return overlap < 0.5 ? "none" : "full"; }
  nlohmann::json to_json() const;
  std::string text() const;
};

// Collective; ranks other than 0 and 1 only wait. The result is on rank 0.
PingPongResult pingpong(const World& w, const RingOptions& o);

}  // namespace ringsim::mpi
