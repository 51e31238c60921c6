#pragma once
// Timings of every timed run gathered on rank 0, and the run summary built from
// them (JSON with the simulator's key names where they mean the same thing:
// devices, block, layout, pass, time_s, compute_s_per_step, bytes_per_step).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mpi/comm.hpp"
#include "mpi/options.hpp"
#include "mpi/results.hpp"
#include "mpi/ring.hpp"

namespace ringsim::mpi {

struct Timing {
  std::vector<std::vector<RankRun>> runs;  // rank 0: [repeat][rank], steps and end only
  int median = 0;                          // the repeat whose makespan is the median
  std::vector<double> makespans;           // per repeat: the last rank's end
};

// Collective: every rank passes its runs (same count everywhere).
Timing gather_timing(const World& w, const std::vector<RankRun>& mine);

// Host name of every rank, on rank 0.
std::vector<std::string> gather_hosts(const World& w);

// The run's summary from the median timed run (the slowest rank per step).
RingSummary summary_of(const RingOptions& o, int ranks, int hosts, const Timing& t);

}  // namespace ringsim::mpi
