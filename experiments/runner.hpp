#pragma once
// Runs ringsim subcommands as children and reads their one JSON object.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/experiment.hpp"

namespace ringsim::exp {

struct JsonRun {
  bool ok = false;
  nlohmann::json j;   // the child's JSON object when ok
  std::string error;  // one line when not ok
  double wall_s = 0;  // the child's wall time (start to exit)
  std::vector<std::string> argv;
};

// `ringsim ARGS...` for each entry (ARGS start with the subcommand and include
// --json), `ctx.jobs` at a time. Counts points and failures in `out` and keeps
// the first command as an example for the report.
std::vector<JsonRun> run_json(const Context& ctx, Output& out,
                              const std::vector<std::vector<std::string>>& args, double timeout_s);

// `ringsim run FLAGS... --engine ENGINE --json` for each entry.
std::vector<JsonRun> run_points(const Context& ctx, Output& out,
                                const std::vector<std::vector<std::string>>& flags,
                                const std::string& engine, double timeout_s);

// Whether `ringsim SUB --help` succeeds (the subcommand is built in).
bool has_subcommand(const std::string& ringsim, const std::string& sub);

// Engine for simulated points: `requested` is auto | simgrid | analytic. auto
// takes simgrid when `ringsim run --engine simgrid` answers a 2-device run.
// Returns {engine, note for the report}; throws InputError when simgrid is
// requested but not available.
std::pair<std::string, std::string> choose_engine(const std::string& ringsim,
                                                  const std::string& requested);

// Numeric field of a summary (0 when absent or not a number).
double num(const nlohmann::json& j, const std::string& key);

}  // namespace ringsim::exp
