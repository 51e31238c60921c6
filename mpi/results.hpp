#pragma once
// What ringsim-mpi prints with --json, as typed records written and read in
// one place: the ring run's summary and the ping-pong's link measurement.
// `ringsim calibrate` reads them back from its mpirun children with from_json,
// which refuses a missing key. No MPI here, so the CLI links it in every build.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ringsim::mpi {

// One ring run (the median of --repeat timed runs), with the simulator's key
// names where they mean the same thing.
struct RingSummary {
  std::string engine = "mpi", program;
  int devices = 0, hosts = 0;
  std::int64_t block = 0, seq_len = 0, tile = 0;
  std::string layout, pass, dtype;
  bool causal = true;
  int heads = 0, kv_heads = 0, head_dim = 0, repeat = 1, warmup = 0;
  int threads = 1;  // kernel threads per rank
  std::uint64_t bytes_per_step = 0;
  double time_s = 0;
  std::vector<double> times_s;  // every timed run's makespan
  struct Step {
    std::string pass;
    std::int64_t step = 0;
    double time_s = 0, compute_s = 0, wait_s = 0;  // the slowest rank's
  };
  std::vector<Step> steps;
  // Per step, averaged; absent for a run with no timed steps.
  double compute_s_per_step = 0, wait_s_per_step = 0, step_s = 0;
  // Wall over CPU time of the most disturbed rank: 1 when every rank had its
  // core to itself.
  double contention = 1;
  std::optional<nlohmann::json> check;  // --check's verdict

  nlohmann::json to_json() const;
  // Throws InputError naming `origin` and the missing or mistyped key.
  static RingSummary from_json(const nlohmann::json& j, const std::string& origin);
  std::string text() const;
};

// Messages from this size up define the ping-pong lines (pingpong.cpp says why).
inline constexpr std::int64_t kFitFrom = 8 << 10;

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
  static PingPongResult from_json(const nlohmann::json& j, const std::string& origin);
  std::string text() const;
};

}  // namespace ringsim::mpi
