#include "mpi/sweep/sweep_mpi.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "models/core/errors.hpp"
#include "proc/child.hpp"
#include "sim/progress.hpp"
#include "sweep/journal.hpp"

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

Received receive_from(const MPI_Status& st) {
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

// The next worker's message, or none after a millisecond: rank 0 keeps
// looking at Ctrl-C (a blocking probe would not return until a row came) and
// leaves the cores to the points.
std::optional<Received> poll_row() {
  int flag = 0;
  MPI_Status st;
  MPI_Iprobe(MPI_ANY_SOURCE, kTagRow, MPI_COMM_WORLD, &flag, &st);
  if (!flag) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return std::nullopt;
  }
  return receive_from(st);
}

void answer(int rank, std::int64_t index) {
  MPI_Send(&index, 1, MPI_INT64_T, rank, kTagWork, MPI_COMM_WORLD);
}

// Rank 0 could not start (its journal refused): every worker's first request
// is answered with "stop", so the job ends with rank 0's one-line error.
void dismiss(int ranks) {
  for (int left = ranks - 1; left > 0;) {
    if (auto m = poll_row()) {
      answer(m->source, -1);
      --left;
    }
  }
}

Result coordinate(const std::vector<Point>& pts, const Options& o, int ranks, Journal& journal) {
  Result res;
  for (const auto& note : journal.notes()) std::cerr << "ringsim sweep: " << note << "\n";
  auto done = journal.rows();
  const auto todo = pending(pts, done);
  res.skipped = pts.size() - todo.size();
  sim::Progress bar(o.progress, todo.size(), "ringsim: sweeping over MPI", 0.5);
  std::size_t next = 0;
  // Interrupted, rank 0 stops at once: the workers are stopping too (the
  // launcher passes the signal on), every finished row is already on disk,
  // and a point in flight is the most a stop loses.
  for (int active = ranks - 1; active > 0 && !sim::interrupt_requested();) {
    const auto m = poll_row();
    if (!m) continue;
    if (m->index >= 0) {
      auto row = row_from_json(nlohmann::json::parse(m->text));
      if (!(sim::interrupt_requested() && !row.ok)) {  // not a child stopped by the same signal
        journal.append(row);
        ++res.ran;
        done[row.key] = std::move(row);
        bar.tick();
      }
    }
    std::int64_t give = -1;
    if (next < todo.size() && !sim::interrupt_requested())
      give = static_cast<std::int64_t>(todo[next++]->index);
    if (give < 0) --active;
    answer(m->source, give);
  }
  bar.finish();
  res.interrupted = sim::interrupt_requested();
  finish_outputs(pts, done, o, journal, res);
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
    if (sim::interrupt_requested()) return;  // rank 0 has stopped listening
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
  std::exception_ptr refused;
  try {
    if (ranks == 1) {
      r.result = run_local(pts, o);
    } else if (rank == 0) {
      std::optional<Journal> journal;
      try {
        journal.emplace(o.out, o.header, o.force_new);
      } catch (const InputError&) {
        refused = std::current_exception();
        dismiss(ranks);
      }
      if (journal) r.result = coordinate(pts, o, ranks, *journal);
    } else {
      r.worker = true;
      work(pts, o);
    }
  } catch (...) {
    // Rank 0 failing (its journal, its outputs) must not leave the workers
    // waiting for a point forever.
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  // Interrupted, the other ranks may be busy or stopping: waiting for them in
  // MPI_Finalize could hang, and every row is already on disk, so this rank
  // leaves at once (the launcher ends the job).
  if (!sim::interrupt_requested()) MPI_Finalize();
  if (refused) std::rethrow_exception(refused);
  return r;
}

}  // namespace ringsim::sweep
