#pragma once
// An experiment: a sweep of `ringsim` child runs (or library closed forms),
// written as DIR/NAME/data.csv, plot.png (via ringsim-plot) and report.md.
// Experiments only orchestrate and compare: every number comes from the
// catalog, the model presets and the ringsim commands, never from a fit.
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "experiments/plot_spec.hpp"
#include "experiments/table.hpp"

namespace ringsim::exp {

// What one run of `ringsim experiment` is given.
struct Context {
  bool quick = false;
  std::string out_dir;          // DIR; the experiment writes DIR/NAME/
  std::string ringsim;          // path of the ringsim binary (children)
  std::string plotter;          // path of ringsim-plot ("" = not found)
  std::string engine;           // engine for simulated points: simgrid | analytic
  std::string engine_note;      // why that engine (for the report)
  int jobs = 2;                 // children in flight at once
  std::ostream* log = nullptr;  // progress lines (stderr); may be null
  std::string command;          // the exact `ringsim experiment ...` line, for the report
};

// A named invariant the experiment checks on its own output.
struct Check {
  std::string name;
  bool passed = false;
  std::string detail;
};

// What an experiment produces; the driver writes it out.
struct Output {
  Table data;
  // Measured on this machine (wall times): written to timing.csv, the one
  // file that differs from run to run; data.csv, the plot and report.md
  // stay byte-identical for the same inputs. Empty: no timing.csv.
  Table timing;
  // Set when no point is simulated (every one a closed form evaluated in
  // process): the report says so instead of naming the engine.
  bool evaluated_only = false;
  PlotSpec plot;
  std::string report;  // markdown body: method, comparison table, reading
  std::vector<Check> checks;
  std::vector<std::string> child_examples;  // representative child command lines
  int points = 0;                           // child runs or evaluated points
  int failed_points = 0;                    // children that did not return a summary
  void check(const std::string& name, bool passed, const std::string& detail);
};

struct Experiment {
  std::string name, title, summary;
  std::function<void(const Context&, Output&)> run;
};

const std::vector<Experiment>& experiments();
const Experiment* find_experiment(const std::string& name);

// Result of running one experiment through the driver.
struct RunRecord {
  std::string name, dir, plot_status;
  bool plot_ok = false;
  int points = 0, failed_points = 0;
  std::vector<Check> checks;
  double wall_s = 0;
  bool all_passed() const;
};

// Runs `e`, writes DIR/NAME/{data.csv, plot.json, plot.png, report.md}.
// Throws InputError when DIR cannot be written.
RunRecord run_experiment(const Experiment& e, const Context& ctx);

}  // namespace ringsim::exp
