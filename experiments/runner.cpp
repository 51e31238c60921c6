#include "experiments/runner.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "models/core/errors.hpp"
#include "proc/child.hpp"

namespace ringsim::exp {

namespace {

// The summary of one finished child, or why there is none.
PointRun read_point(const proc::Result& r, std::vector<std::string> argv) {
  PointRun run;
  run.argv = std::move(argv);
  run.wall_s = r.wall_s;
  if (!r.ok()) {
    run.error = r.failure();
    return run;
  }
  try {
    run.s = RunSummary::from_json(nlohmann::json::parse(r.out), "ringsim run --json");
    run.ok = true;
  } catch (const nlohmann::json::exception& e) {
    run.error = std::string("unreadable JSON: ") + e.what();
  } catch (const InputError& e) {
    run.error = e.what();
  }
  return run;
}

}  // namespace

proc::Engine engine_of(const std::string& name) {
  return name == "simgrid" ? proc::Engine::SimGrid : proc::Engine::Analytic;
}

std::vector<PointRun> run_points(const Context& ctx, Output& out, std::vector<proc::RunSpec> specs,
                                 double timeout_s) {
  std::vector<proc::Command> cmds;
  std::vector<std::vector<std::string>> shown;
  for (auto& s : specs) {
    s.json = true;
    proc::Command c;
    c.argv = proc::to_args(s);
    shown.push_back(c.argv);
    shown.back().insert(shown.back().begin(), "ringsim");
    c.argv.insert(c.argv.begin(), ctx.ringsim);
    c.timeout_s = timeout_s;
    cmds.push_back(std::move(c));
  }
  if (ctx.log) *ctx.log << fmt::format("  {} run(s)\n", cmds.size());
  const auto results = proc::run_many(cmds, ctx.jobs);
  std::vector<PointRun> runs;
  for (std::size_t i = 0; i < results.size(); ++i) {
    runs.push_back(read_point(results[i], shown[i]));
    ++out.points;
    if (!runs.back().ok) {
      ++out.failed_points;
      if (ctx.log)
        *ctx.log << "  failed: " << proc::shell_line(shown[i]) << "\n    " << runs.back().error
                 << "\n";
    }
  }
  if (!runs.empty() && out.child_examples.size() < 4)
    out.child_examples.push_back(proc::shell_line(runs.front().argv));
  return runs;
}

std::pair<std::string, std::string> choose_engine(const std::string& ringsim,
                                                  const std::string& requested) {
  if (requested == "analytic")
    return {"analytic", "analytic closed forms (requested with --engine analytic)"};
  proc::RunSpec probe;
  probe.workload.devices = 2;
  probe.workload.block = 256;
  probe.workload.model = "llama2-7b";
  probe.json = true;
  proc::Command c;
  c.argv = proc::to_args(probe);
  c.argv.insert(c.argv.begin(), ringsim);
  c.timeout_s = 60;
  const auto p = read_point(proc::run(c), c.argv);
  std::string why = p.error;
  const bool ok = p.ok && p.s.engine == "simgrid";
  if (p.ok && !ok) why = "the run did not report engine simgrid";
  if (ok)
    return {"simgrid",
            "SimGrid discrete-event simulation (`ringsim run --engine simgrid`, one process per "
            "point)"};
  if (requested == "simgrid")
    throw InputError("--engine: simgrid is not available in this build (" + why + ")");
  return {"analytic",
          "analytic closed forms: `ringsim run --engine simgrid` is not available in this build (" +
              why + ")"};
}

}  // namespace ringsim::exp
