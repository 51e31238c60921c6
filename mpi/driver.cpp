#include "mpi/driver.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>

#include "models/core/errors.hpp"
#include "models/core/schema.hpp"
#include "mpi/pingpong.hpp"
#include "mpi/report.hpp"
#include "mpi/trace.hpp"

namespace ringsim::mpi {

namespace {

int run_pingpong(const World& w, const RingOptions& o) {
  const auto res = pingpong(w, o);
  if (w.rank == 0) {
    if (o.json) {
      auto j = res.to_json();
      j["ranks"] = w.size;
      j["schema_version"] = kJsonSchemaVersion;
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << res.text();
    }
  }
  return 0;
}

int count_hosts(const std::vector<std::string>& hosts) {
  auto h = hosts;
  std::sort(h.begin(), h.end());
  return static_cast<int>(std::unique(h.begin(), h.end()) - h.begin());
}

}  // namespace

int mpi_main(int argc, char** argv, const Program& prog,
             const std::function<int(const World&, RingOptions&)>& ring) {
  MPI_Init(&argc, &argv);
  // Errors come back as codes (RS_MPI turns them into exceptions) instead of
  // killing the job from inside the library.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int code = 0;
  try {
    const auto w = world();
    auto parsed = parse_args(argc, argv, prog);
    if (parsed.exit_now) {
      if (w.rank == 0) (parsed.exit_code == 0 ? std::cout : std::cerr) << parsed.message << "\n";
      code = parsed.exit_code;
    } else if (parsed.opts.pingpong) {
      validate(parsed.opts, w.size);
      code = run_pingpong(w, parsed.opts);
    } else {
      code = ring(w, parsed.opts);
    }
  } catch (const InputError& e) {
    if (rank == 0) std::cerr << prog.name << ": error: " << one_line(e.what()) << "\n";
    code = 2;
  } catch (const std::exception& e) {
    // A rank may be blocked in a collective the others will never join: only
    // MPI_Abort ends the job cleanly from here.
    std::cerr << prog.name << ": rank " << rank << ": " << one_line(e.what()) << "\n";
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  std::cout.flush();
  MPI_Finalize();
  // Only rank 0 reports the verdict in its exit status. Were every rank to exit
  // 1 on a failed check, mpirun would abort the job at the first of them, which
  // can be before rank 0's report reaches the terminal (seen on a fresh
  // Debian 12 machine: exit 1 with an empty stdout). mpirun and srun return a
  // failed rank's status, so the job's code is rank 0's either way.
  return rank == 0 ? code : 0;
}

template <typename T>
int finish_run(const World& w, const RingOptions& o, const Program& prog,
               const std::vector<RankRun>& runs, const FwdOut<T>& fwd, const BwdOut<T>* bwd,
               const FullInputs& full) {
  const auto timing = gather_timing(w, runs);
  const auto hosts = gather_hosts(w);
  int median = timing.median;
  RS_MPI(MPI_Bcast(&median, 1, MPI_INT, 0, w.comm));
  const auto events =
      gather_strings(w, encode_events(runs[static_cast<std::size_t>(median)].events));
  std::optional<CheckResult> check;
  if (o.check) check = check_against_reference(w, o, fwd, bwd, full);

  // Only rank 0 writes, and only rank 0 exits with the verdict (mpi_main).
  int code = 0;
  if (w.rank == 0) {
    try {
      auto s = summary_of(o, w.size, count_hosts(hosts), timing);
      s.program = prog.name;
      if (check) s.check = check->to_json();
      const auto summary = s.to_json();
      if (!o.trace.empty()) {
        std::vector<std::vector<Event>> ev;
        for (const auto& e : events) ev.push_back(decode_events(e));
        write_trace(o.trace, ev, hosts,
                    {{"format", "ringsim-trace-1"},
                     {"source", prog.name},
                     {"engine", "mpi"},
                     {"devices", w.size},
                     {"steps", w.size},
                     {"layout", to_string(o.layout)},
                     {"summary", summary}});
      }
      if (o.json) {
        auto out = summary;
        out["schema_version"] = kJsonSchemaVersion;
        std::cout << out.dump(2) << "\n";
      } else {
        std::cout << s.text();
        if (check) std::cout << check->line() << "\n";
      }
      if (check && !check->matches) code = 1;
      std::cout.flush();  // before any rank can leave: the report is complete
    } catch (const InputError& e) {
      std::cerr << prog.name << ": error: " << one_line(e.what()) << "\n";
      code = 2;
    }
  }
  // Every rank learns the verdict (only rank 0 exits with it, mpi_main), and
  // none leaves before rank 0 has flushed its report.
  RS_MPI(MPI_Bcast(&code, 1, MPI_INT, 0, w.comm));
  return code;
}

template int finish_run(const World&, const RingOptions&, const Program&,
                        const std::vector<RankRun>&, const FwdOut<float>&, const BwdOut<float>*,
                        const FullInputs&);
template int finish_run(const World&, const RingOptions&, const Program&,
                        const std::vector<RankRun>&, const FwdOut<double>&, const BwdOut<double>*,
                        const FullInputs&);

}  // namespace ringsim::mpi
