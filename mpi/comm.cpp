#include "mpi/comm.hpp"

#include <fmt/format.h>

#include <ctime>

#include "models/core/errors.hpp"

namespace ringsim::mpi {

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw MpiError(fmt::format("{} failed: {}", call, std::string(text, static_cast<size_t>(len))));
}

World world() {
  World w;
  RS_MPI(MPI_Comm_rank(w.comm, &w.rank));
  RS_MPI(MPI_Comm_size(w.comm, &w.size));
  return w;
}

std::string broadcast_string(const World& w, std::string s, int root) {
  std::int64_t n = static_cast<std::int64_t>(s.size());
  RS_MPI(MPI_Bcast(&n, 1, MPI_INT64_T, root, w.comm));
  s.resize(static_cast<size_t>(n));
  if (n > 0) RS_MPI(MPI_Bcast(s.data(), static_cast<int>(n), MPI_CHAR, root, w.comm));
  return s;
}

void agree_on_error(const World& w, const std::string& local_error) {
  // The lowest failing rank speaks for all: rank r contributes r, others size.
  int mine = local_error.empty() ? w.size : w.rank, first = w.size;
  RS_MPI(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, w.comm));
  if (first == w.size) return;
  throw InputError(broadcast_string(w, local_error, first));
}

std::vector<std::string> gather_strings(const World& w, const std::string& mine) {
  int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<size_t>(w.size)), displs(static_cast<size_t>(w.size));
  RS_MPI(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, w.comm));
  std::string all;
  if (w.rank == 0) {
    int total = 0;
    for (int r = 0; r < w.size; ++r) {
      displs[static_cast<size_t>(r)] = total;
      total += counts[static_cast<size_t>(r)];
    }
    all.resize(static_cast<size_t>(total));
  }
  RS_MPI(MPI_Gatherv(mine.data(), n, MPI_CHAR, all.data(), counts.data(), displs.data(), MPI_CHAR,
                     0, w.comm));
  std::vector<std::string> out;
  if (w.rank == 0)
    for (int r = 0; r < w.size; ++r)
      out.push_back(all.substr(static_cast<size_t>(displs[static_cast<size_t>(r)]),
                               static_cast<size_t>(counts[static_cast<size_t>(r)])));
  return out;
}

double now() {
  return MPI_Wtime();
}

double thread_cpu_time() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace ringsim::mpi
