#pragma once
// The few MPI helpers the ring needs: error checks that name the call, typed
// datatypes, and agreement on an error that only one rank saw (so every rank
// leaves together instead of one blocking in a collective forever).
#include <mpi.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ringsim::mpi {

// An MPI call failed: not the user's input; the program aborts the job.
struct MpiError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check_mpi(int rc, const char* call);
#define RS_MPI(call) ::ringsim::mpi::check_mpi((call), #call)

template <typename T>
MPI_Datatype mpi_type();
template <>
inline MPI_Datatype mpi_type<float>() {
  return MPI_FLOAT;
}
template <>
inline MPI_Datatype mpi_type<double>() {
  return MPI_DOUBLE;
}

struct World {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  int next() const { return (rank + 1) % size; }
  int prev() const { return (rank + size - 1) % size; }
};
World world();

// Every rank calls this with its own error text ("" when fine); all of them
// throw InputError with the first non-empty text (by rank), or return.
void agree_on_error(const World& w, const std::string& local_error);

// Rank `root` sends `s` to every rank.
std::string broadcast_string(const World& w, std::string s, int root = 0);

// Each rank's bytes, concatenated on rank 0 in rank order (empty elsewhere).
std::vector<std::string> gather_strings(const World& w, const std::string& mine);

// Wall clock in seconds (MPI_Wtime).
double now();
// CPU time of the calling thread in seconds (CLOCK_THREAD_CPUTIME_ID).
double thread_cpu_time();

}  // namespace ringsim::mpi
