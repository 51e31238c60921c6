#pragma once
// What ringsim-mpi and ringsim-mpi-nccl share around their rings: MPI start-up
// and shut-down with the error protocol (one line from rank 0, the same exit
// code on every rank), and the end of a run (timings, trace and check gathered
// on rank 0, the summary printed).
#include <functional>
#include <vector>

#include "mpi/check.hpp"
#include "mpi/comm.hpp"
#include "mpi/options.hpp"
#include "mpi/ring.hpp"

namespace ringsim::mpi {

// Runs `ring` (for a ring run) or the ping-pong between MPI_Init and
// MPI_Finalize; returns the process exit code. InputError: exit 2 after one
// line on rank 0 (every rank raises it alike). Anything else: MPI_Abort.
int mpi_main(int argc, char** argv, const Program& prog,
             const std::function<int(const World&, RingOptions&)>& ring);

// Collective, after the timed runs: gathers timings and the median run's
// events, writes --trace, runs --check, prints the summary on rank 0. Returns
// the exit code every rank agrees on (0, 1 when the check fails, 2 on error).
template <typename T>
int finish_run(const World& w, const RingOptions& o, const Program& prog,
               const std::vector<RankRun>& runs, const FwdOut<T>& fwd, const BwdOut<T>* bwd,
               const FullInputs& full);

}  // namespace ringsim::mpi
