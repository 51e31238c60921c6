#pragma once
// An experiment declared as data, which reads like a figure caption: the runs
// (the flags every point shares, the configurations compared, the axes swept
// inside each), what each point measures, the panels (a measure against an
// axis, one series per configuration and combination of the other axes) and
// the report's text. Simulated points run through the sweep engine (sweep/,
// as `ringsim sweep` runs them): one child `ringsim run --json` each,
// journalled to DIR/NAME/rows.jsonl as they finish, so a stopped experiment
// resumes where it stopped and --jobs gives the same rows. Closed-form points
// (the planner, inference, minimum block: microseconds each) are evaluated
// in this process by the declaration's `evaluate`, over the same grid. What
// is particular to an experiment (a check on its rows, a reference line, a
// report table) is an analysis: a function of the finished rows.
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "experiments/experiment.hpp"

namespace ringsim::exp {

// A flag swept inside every configuration, its values as `ringsim sweep`
// reads them ("256..131072:x2", "ring,zigzag"), in full and --quick mode. For
// child runs it is a `ringsim run` flag; for evaluated points, any name the
// evaluator reads ("--context", "--nodes").
struct SweptAxis {
  std::string flag, full, quick;
};

// A configuration compared: its name in legends and tables, the run flags
// that make it, and facts about it for data.csv and the analyses (a
// published value, which panel it belongs in).
struct Config {
  std::string name;
  std::vector<std::pair<std::string, std::string>> flags;
  std::map<std::string, std::string> facts;
  // Optional: this configuration's own values of some of the grid's swept
  // axes (same flag), where a grid is not one product for all: each setting
  // its own sequence lengths, Ulysses only where its degree divides the KV
  // heads.
  std::vector<SweptAxis> axes = {};
};

struct GridPoint;
// A measure computed from the point and every point of the grid.
using Compute = std::function<double(const GridPoint&, const std::vector<GridPoint>&)>;

// A column of data.csv from a point's summary: `key` ("time_s"; dotted for a
// nested one, "verdict.min_block"), divided by the key `over` when given. A
// key whose value is text (a configuration's label) is written as it is.
struct Measure {
  std::string column, key, over;
  // Optional: the value is computed instead (from several keys, from a
  // neighbouring point found with `sibling`: the ring's time beside each
  // layout's, or from what is not in the summary, the child's wall time);
  // `key` and `over` are then unused.
  Compute compute = {};
};

// A panel: the measure `measure` against the axis `x` (a swept flag), one
// series per configuration whose fact "panel" is `panel` ("" = every
// configuration) and per combination of the other axes; with both engines,
// analytic points are lines and simulated ones hollow circles.
// One series of a categorical panel: a measure across the configurations.
struct MeasureSeries {
  std::string measure, name;  // a measure's column; the legend's name
  std::string color = {};     // "" = the palette, by the series' order
  std::string marker = "circle";
  bool hollow = false;  // a large outline (a published value around ours)
};

struct PanelDecl {
  std::string title, x, measure, panel;
  Axis x_axis, y_axis;
  // Optional, for panels whose series are not one per configuration:
  // x_measure: plot this measure as x (the sequence, devices x block, while
  // `x` names the axis swept along it); series_of: the series a point belongs
  // to ("" leaves the point out; a colour per layout across settings); make:
  // the series a name starts, from its first point (colour, marker, dash).
  std::string x_measure = {};
  std::function<std::string(const GridPoint&)> series_of = {};
  std::function<Series(const std::string& name, const GridPoint& first)> make = {};
  // Optional: one series per measure rather than per configuration (two
  // predictions of the same points side by side, or a table's rows). With
  // `x` an axis, each is a line against it (a hollow one: outlined markers
  // only); with `x` empty, x is one category per point in the panel (its
  // configuration's fact "category", else its name) and each is a scatter
  // series. `measure` is unused.
  std::vector<MeasureSeries> series = {};
  std::string legend = {};  // "" = the plot's default (bottom)
};

// Evaluates one closed-form point in process: the configuration and the
// point's swept values in, the summary (the JSON the command's --json would
// print, or the keys the measures name) out. Throws InputError for a point
// the model refuses (the row then records why).
using Evaluate =
    std::function<nlohmann::json(const Config&, const std::map<std::string, std::string>& axes)>;

// One finished point: its configuration, swept values, engine and summary.
struct GridPoint {
  const Config* config = nullptr;
  std::map<std::string, std::string> axes;  // flag -> value as swept
  std::string engine;
  bool ok = false;
  std::string error;
  nlohmann::json summary;  // the child's `ringsim run --json` when ok
  double wall_s = 0;       // the child's wall time, start to exit (0: evaluated in process)
  // A summary value (dotted key); NaN when the point failed or lacks it.
  double value(const std::string& key) const;
  std::string text(const std::string& key) const;  // a text value; "" when not text
  double axis(const std::string& flag) const;      // a swept value as a number
};

struct GridExperiment {
  std::string name, title, summary;                       // the experiment list's three lines
  std::string caption;                                    // the report's first paragraph
  std::vector<std::pair<std::string, std::string>> base;  // every point's flags
  std::vector<Config> configs, quick_configs;             // --quick: quick_configs when given
  std::vector<SweptAxis> axes = {};
  bool both_engines = false;  // every point analytic, and simulated when SimGrid runs
  std::vector<Measure> measures;
  std::vector<PanelDecl> panels;
  std::string plot_title, plot_note;
  int plot_columns = 2, plot_width = 1500, plot_height = 850;
  double timeout_s = 600;  // per point
  // false: the report leaves out the "Every point" table (thousands of
  // points, an interpolated curve's every length: data.csv holds them).
  bool list_points = true;
  // Optional: the points of the product to run (false leaves one out: Ulysses
  // where its degree does not divide the KV heads), from its configuration
  // and the point's flags (for child runs the configuration's flags too).
  std::function<bool(const Config&, const std::map<std::string, std::string>& point)> keep = {};
  // Set: points are closed forms evaluated in process (no children, no
  // engines, no journal); `base` and the configurations' flags are then the
  // evaluator's to read.
  Evaluate evaluate;
  // An analysis runs SimGrid children of its own (plan-cases' re-check,
  // seed-reproduction's runs): the report then names the engine even when
  // every grid point is evaluated.
  bool analyses_simulate = false;
  std::vector<std::function<void(const std::vector<GridPoint>&, const Context&, Output&)>> analyses;
};

// The point that differs from `p` only in the swept (or configuration) flag
// `flag`, which is `value` there: same configuration, engine and other
// values; nullptr when there is none or it failed.
const GridPoint* sibling(const std::vector<GridPoint>& all, const GridPoint& p,
                         const std::string& flag, const std::string& value);

// The experiment that runs `g`'s grid and writes its declared outputs.
Experiment declare(GridExperiment g);

// The analyses every grid experiment can name: engines agree on `key` within
// `tol` (relative) at every point where both ran.
std::function<void(const std::vector<GridPoint>&, const Context&, Output&)> engines_agree(
    std::string check_name, std::string key, double tol, std::string why);

}  // namespace ringsim::exp
