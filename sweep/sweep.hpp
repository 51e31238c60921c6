#pragma once
// Capacity planning as a sweep: a grid of `ringsim run` configurations
// (devices x blocks x layouts x kernels x faults ...), each point run in its
// own child process (SimGrid allows one engine per process), one row per
// point with the child's full run summary. Rows are journalled as points
// finish (sweep/journal.hpp: a header, framed and fsync'd rows, a lock), so a
// killed sweep resumes where it stopped; at the end the journal is rewritten
// in grid order, so the same grid gives the same bytes whatever the order
// points finished in (-j N, or ranks of an MPI job, mpi/sweep_mpi.hpp).
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "proc/run_spec.hpp"
#include "sweep/header.hpp"

namespace ringsim::sweep {

// One swept flag of `ringsim run` (e.g. "--devices") and its values.
struct Axis {
  std::string flag;
  std::vector<std::string> values;
};

// Expands one axis as the user wrote it: a list "8,64,512", a geometric
// range "2K..32K:x2", an arithmetic range "1..8:+1" ("1..8" steps by 1), or
// names "ring,zigzag". Numbers keep binary K/M/G suffixes as run takes them.
// Throws InputError naming `flag` (at most 10000 values). --documents, whose
// values hold ',' and '..' themselves, lists them with '|' and has no ranges:
// "fixed:1K|8K,2K|lognormal:2K,1".
std::vector<std::string> expand(const std::string& flag, const std::string& text);

// An axis value as the plot's x: a decimal ("0.5", read the same under any
// locale) or a size with run's binary suffix ("4K" = 4096). False otherwise.
bool axis_number(const std::string& value, double& x);

// Whether `text` given to `flag` is a list of values to sweep (',' or a
// range; '|' for --documents).
bool is_list(const std::string& flag, const std::string& text);

// The flags a sweep may vary (those of `ringsim run` with one value each).
const std::vector<std::string>& sweepable_flags();
// "--set KEY": an axis over one --set key's values (--set KEY=V1,V2 on the
// command line; docs/sweep.md, "Sweeping an assumption").
bool is_set_axis(const std::string& flag);
// One of sweepable_flags(), or a --set axis.
bool sweepable(const std::string& flag);

// A grid: the base configuration (every other flag of `ringsim run`, as
// text) and the swept axes, first axis slowest.
struct Grid {
  proc::RunFlags base;
  std::vector<Axis> axes;
  // The base flags a grid file set ("--gpu" -> "h100-sxm"), for the journal's header.
  std::map<std::string, std::string> file_base;
};

// A grid from a JSON file: {"base": {"--gpu": "h100-sxm", ...},
// "axes": {"--devices": "8,64", "--layout": ["ring", "zigzag"]}} (axes in
// file order), on top of `base` (the command line's flags); the file's base
// sets only the flags not in `given` (the command line wins). Throws
// InputError naming `flag` and the file.
Grid read_grid_file(const std::string& path, const std::string& flag, const proc::RunFlags& base,
                    const std::vector<std::string>& given);
// The same from the file's text (`path` names it in messages; fuzz/grid.cpp).
Grid parse_grid(const std::string& text, const std::string& path, const std::string& flag,
                const proc::RunFlags& base, const std::vector<std::string>& given);

struct Point {
  std::size_t index = 0;                                    // position in the grid
  std::vector<std::pair<std::string, std::string>> params;  // flag -> value, axis order
  std::string key;  // "--devices=8 --block=2048": stable across runs, the resume key
  std::optional<proc::RunSpec> spec;  // none: the point's flags are refused (see error)
  std::string error;                  // why, one line
};

// Every point of the grid (the cartesian product), each parsed as `ringsim
// run` would parse its flags; a point the parser refuses keeps its error and
// becomes a failed row, the rest still run. Throws InputError for a grid
// that cannot be formed (unknown flag, empty axis, a flag swept twice) and
// for one whose every point is refused (the first point's line).
std::vector<Point> points(const Grid& g);

// One finished point. `summary` is the child's `ringsim run --json` object
// (checked with RunSummary::from_json) when status == "ok".
struct Row {
  std::size_t index = 0;
  std::string key;
  std::vector<std::pair<std::string, std::string>> params;
  bool ok = false;
  std::string error;  // one line when !ok
  nlohmann::json summary;
  // The point's input files as hashed at the sweep's start (inputs_hash), the
  // bytes its child was held to; "" for a point refused before it ran.
  std::string inputs_sha256;
  // The child's wall time, start to exit; not journalled (the journal stays
  // byte-identical across runs), so 0 in a row read back on resume.
  double wall_s = 0;
};
nlohmann::json to_json(const Row& r);
// Throws std::runtime_error for a line that is not a row (resume skips it).
Row row_from_json(const nlohmann::json& j);

// Runs one point as a child `ringsim run --json` (`ringsim`: the binary).
Row run_point(const Point& p, const std::string& ringsim, double timeout_s);

// True when an MPI launcher started this process (Open MPI, MPICH/PMI, PMIx
// or Slurm's environment), whatever the number of ranks; no MPI needed.
bool launched_by_mpi();

struct Options {
  std::string out;                  // JSONL journal and result ("": rows only returned)
  JournalHeader header;             // what the rows depend on (make_header), checked on resume
  bool force_new = false;           // keep any old journal aside and start anew (--force-new)
  bool aside_if_different = false;  // resume a matching journal; keep any other aside
  std::string csv;                  // also write a CSV of every row ("": none)
  int jobs = 1;                     // children at once
  double timeout_s = 0;             // per point; 0: none
  bool progress = false;            // bar with ETA on stderr
  std::string ringsim;              // the binary children run ("": proc::ringsim_exe())
  // A plot of `metric` (a summary key, e.g. time_s) against the axis `x`,
  // one series per combination of the other axes' values (`series` first,
  // then `others` in grid order; none: one series), so no line joins points
  // of different configurations; written as PLOT.json and rendered to
  // PLOT.png when ringsim-plot exists.
  std::string plot, metric = "time_s", x, series;
  std::vector<std::string> others;
};

struct Result {
  std::vector<Row> rows;  // every point of the grid that has a row, in grid order
  std::size_t ran = 0, skipped = 0, failed = 0;
  std::string plot_status;  // "" when no plot was asked or it was written
  // ringsim-plot is there and failed: a missing output, exit 1 (without it
  // the PNG is a documented skip).
  bool plot_failed = false;
  bool interrupted = false;
};

// Runs the points not already in the journal, `jobs` at a time, appending
// each row as it finishes; then rewrites the journal (and CSV) in grid order.
Result run_local(const std::vector<Point>& pts, const Options& o);

// The points of `pts` that have no row in `done`, in grid order.
std::vector<const Point*> pending(const std::vector<Point>& pts,
                                  const std::map<std::string, Row>& done);

// The name of one plotted series: the values of the axes other than x
// ("--devices 64, --layout zigzag"; "" for none). Sweeps and experiments
// both draw one series per such combination, so no line joins points of
// different configurations.
std::string group_name(const std::vector<std::pair<std::string, std::string>>& values);

class Journal;
// The rows in grid order into `res`; unless interrupted, the journal
// rewritten in that order, the CSV and the plot.
void finish_outputs(const std::vector<Point>& pts, const std::map<std::string, Row>& rows,
                    const Options& o, Journal& journal, Result& res);

}  // namespace ringsim::sweep
