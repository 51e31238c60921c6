#pragma once
// `ringsim sweep` across the ranks of an MPI job (mpirun, srun): rank 0
// journals and hands out points, one at a time as ranks ask (points differ in
// cost by orders of magnitude, so a static split would leave ranks idle);
// every other rank runs the points it is given, each as a child `ringsim run`
// (one SimGrid engine per process), and sends the row back. Every rank parses
// the same flags, so only a point's index travels; its typed run spec is the
// one every rank built from the grid. Rows are the same as a local sweep's,
// and the journal is rewritten in grid order at the end, so `mpirun -n R`
// and `-j 1` write the same bytes.
#include "sweep/sweep.hpp"

namespace ringsim::sweep {

// Runs the sweep over MPI_COMM_WORLD (MPI initialised and finalised here).
// On rank 0 returns the result; on the others an empty one with `worker` set.
struct MpiResult {
  Result result;
  bool worker = false;
  int ranks = 1;
};
MpiResult run_mpi(const std::vector<Point>& pts, const Options& o);

}  // namespace ringsim::sweep
