#pragma once
// Runs simulated sweep points: each point is a run spec handed to its own
// `ringsim run --json` child (SimGrid allows one engine per process) and read
// back as a typed run summary, a few children at a time (proc::run_many).
#include <string>
#include <utility>
#include <vector>

#include "experiments/experiment.hpp"
#include "models/analytic/report.hpp"
#include "proc/run_spec.hpp"

namespace ringsim::exp {

struct PointRun {
  bool ok = false;
  RunSummary s;                   // the child's summary when ok
  std::string error;              // one line when not ok
  double wall_s = 0;              // the child's wall time (start to exit)
  std::vector<std::string> argv;  // the command, as a reader would type it
};

// One child per spec (--json added), `ctx.jobs` at a time. Counts points and
// failures in `out` and keeps the first command as an example for the report.
std::vector<PointRun> run_points(const Context& ctx, Output& out, std::vector<proc::RunSpec> specs,
                                 double timeout_s);

// The engine named by the context ("simgrid" or "analytic").
proc::Engine engine_of(const std::string& name);

// Engine for simulated points: `requested` is auto | simgrid | analytic. auto
// takes simgrid when `ringsim run --engine simgrid` answers a 2-device run.
// Returns {engine, note for the report}; throws InputError when simgrid is
// requested but not available.
std::pair<std::string, std::string> choose_engine(const std::string& ringsim,
                                                  const std::string& requested);

}  // namespace ringsim::exp
