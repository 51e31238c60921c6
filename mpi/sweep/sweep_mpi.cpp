#include "mpi/sweep/sweep_mpi.hpp"

#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "models/core/errors.hpp"
#include "proc/child.hpp"
#include "sim/progress.hpp"

namespace ringsim::sweep {

namespace {

// A worker's message: the index of the point it finished (-1: none yet) and
// the row as JSON text; rank 0's answer: the next index, or -1 to stop.
constexpr int kTagRow = 1, kTagWork = 2;

void send_row(std::int64_t index, const std::string& text) {
  std::string buf(sizeof index, '\0');
  std::memcpy(buf.data(), &index, sizeof index);
  buf += text;
  MPI_Send(buf.data(), static_cast<int>(buf.size()), MPI_CHAR, 0, kTagRow, MPI_COMM_WORLD);
}

struct Received {
  int source = 0;
  std::int64_t index = -1;
  std::string text;
};

Received receive_row() {
  MPI_Status st;
  MPI_Probe(MPI_ANY_SOURCE, kTagRow, MPI_COMM_WORLD, &st);
  int count = 0;
  MPI_Get_count(&st, MPI_CHAR, &count);
  std::string buf(static_cast<std::size_t>(count), '\0');
  MPI_Recv(buf.data(), count, MPI_CHAR, st.MPI_SOURCE, kTagRow, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  Received r;
  r.source = st.MPI_SOURCE;
  std::memcpy(&r.index, buf.data(), sizeof r.index);
  r.text = buf.substr(sizeof r.index);
  return r;
}

Result coordinate(const std::vector<Point>& pts, const Options& o, int ranks) {
  Result res;
  auto start = resume(pts, o.out);
  auto& done = start.done;
  const auto& pending = start.pending;
  res.skipped = pts.size() - pending.size();
  Journal journal(o.out);
  sim::Progress bar(o.progress, pending.size(), "ringsim: sweeping over MPI", 0.5);
  std::size_t next = 0;
  int active = ranks - 1;
  while (active > 0) {
    const auto m = receive_row();
    if (m.index >= 0) {
      auto row = row_from_json(nlohmann::json::parse(m.text));
      journal.append(row);
      ++res.ran;
      done[row.key] = std::move(row);
      bar.tick();
    }
    std::int64_t give = -1;
    if (next < pending.size() && !sim::interrupt_requested())
      give = static_cast<std::int64_t>(pending[next++]->index);
    if (give < 0) --active;
    MPI_Send(&give, 1, MPI_INT64_T, m.source, kTagWork, MPI_COMM_WORLD);
  }
  bar.finish();
  res.interrupted = next < pending.size();
  finish_outputs(pts, done, o, res);
  return res;
}

void work(const std::vector<Point>& pts, const Options& o) {
  std::string ringsim = o.ringsim;
  if (ringsim.empty()) ringsim = proc::ringsim_exe();
  send_row(-1, "");
  for (;;) {
    std::int64_t index = -1;
    MPI_Recv(&index, 1, MPI_INT64_T, 0, kTagWork, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (index < 0) return;
    const auto row = run_point(pts[static_cast<std::size_t>(index)], ringsim, o.timeout_s);
    send_row(index, to_json(row).dump());
  }
}

}  // namespace

MpiResult run_mpi(const std::vector<Point>& pts, const Options& o) {
  MPI_Init(nullptr, nullptr);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MpiResult r;
  r.ranks = ranks;
  try {
    if (ranks == 1) {
      r.result = run_local(pts, o);
    } else if (rank == 0) {
      r.result = coordinate(pts, o, ranks);
    } else {
      r.worker = true;
      work(pts, o);
    }
  } catch (...) {
    // Rank 0 failing (its journal, its outputs) must not leave the workers
    // waiting for a point forever.
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Finalize();
  return r;
}

}  // namespace ringsim::sweep
