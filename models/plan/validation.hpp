#pragma once
// The project's scoreboard (docs/validation.md): published measurements of
// real runs, each with its source, its configuration as ringsim flags, the
// metric, the published value and a tolerance (models/data/validation.json),
// and the framework-level calibration fitted to the cases marked "fit"
// (calibration.hpp). `ringsim validate` runs the cases; this file holds the
// data and the arithmetic, which need no process.
#include <map>
#include <string>
#include <vector>

#include "models/plan/calibration.hpp"

namespace ringsim {

struct ValidationSource {
  std::string id, title, url, setup;
};

struct ValidationCase {
  std::string id, source, command, args, metric, note;
  // The file the case comes from, named in its errors.
  std::string origin = "models/data/validation.json";
  // metric "speedup" only: the baseline's flags (the same command); the case
  // is time(baseline_args) / time(args).
  std::string baseline_args;
  // Where the source prints the number ("Table 3"; "" = see the note), and
  // the numbers it prints beside it for the same configuration (not scored;
  // kept here so an experiment reads them from this one copy).
  std::string table;
  std::map<std::string, double> also_published;
  double published = 0, tolerance = 0.35, flops_per_token = 0;
  bool fit = false;
  // metric peak_memory_gib: which of the planner's peaks the source measured:
  // "reserved" (torch.cuda.max_memory_reserved, as TorchTitan logs it),
  // "allocated" (max_memory_allocated) or "device" (nvidia-smi's used).
  std::string memory_scope;
  // A fits case the file does not list: derived from a run case with the
  // same command and flags (every published run must fit).
  bool derived = false;
  // A stated finding (docs/validation.md, 'Findings'): the case is out of its
  // tolerance for a reason the text names, and stays counted as out. Its
  // signed error when stated guards it: worse by more than kFindingSlack
  // fails, and so does coming back within tolerance (remove the finding).
  std::string finding;
  double finding_error = 0;
  // A run that ran but the memory model refuses: the finding its derived
  // fits case carries (the case's own finding says why its number misses).
  std::string fits_finding;
};

inline constexpr double kFindingSlack = 0.05;

struct ValidationSet {
  std::vector<ValidationSource> sources;
  std::vector<ValidationCase> cases;
};

// The embedded models/data/validation.json.
const ValidationSet& embedded_validation();
// Parses a validation file's text; throws InputError naming `origin` and the case.
ValidationSet parse_validation(const std::string& text, const std::string& origin);

// The median of `v` (0 when empty): the summary's and the leave-one-out's.
double median(std::vector<double> v);

// Metrics a case may name, and whether more is faster (throughput) or slower
// (time). A ratio ("speedup": one run's time over another's of the same
// command) is neither: a factor on the step time cancels in it.
bool metric_is_time(const std::string& metric);
bool metric_is_ratio(const std::string& metric);
bool known_metric(const std::string& metric);
// peak_memory_gib: a measured peak (no step-time factor applies); fits: a
// run that ran must be predicted to fit (1) rather than refused (0).
bool metric_is_memory(const std::string& metric);
bool metric_is_fits(const std::string& metric);
// Whole-step metrics (throughput, step time, TTFT, decode): the scoreboard's
// time error and the calibration's domain.
bool metric_is_step(const std::string& metric);

// A case's flags as the words a shell would pass (split at whitespace).
std::vector<std::string> case_words(const std::string& args);

// One case's outcome. first_principles: the prediction with no calibration;
// predicted: with the group's factor; loo: with the factor refitted without
// this case (fit cases only; else = predicted).
struct ValidationRow {
  const ValidationCase* c = nullptr;
  std::string group;  // framework/family of the calibration, empty: none applies
  double first_principles = 0, predicted = 0, loo = 0;
  std::string refused;  // the planner's reason when it found the run infeasible
  std::string klass;    // the error-band class its command prints (error_band.hpp), "" for memory
  double error() const { return predicted / c->published - 1; }
  double loo_error() const { return loo / c->published - 1; }
  bool within() const;
  // "ok" (within), "finding" (out, stated, no worse than stated),
  // "resolved" (within, but a finding is still stated) or "OUT".
  std::string status() const;
  bool failing() const {
    const auto s = status();
    return s == "OUT" || s == "resolved";
  }
};

// Time ratio published / first-principles of one case (> 1: the run was slower).
double time_ratio(const ValidationCase& c, double first_principles);
// A metric value under a factor on the step time (a ratio: unchanged).
double apply_factor(const ValidationCase& c, double first_principles, double factor);

// Fits one factor per group: the geometric mean of time_ratio over its fit
// cases (the least-squares fit of log time), with leave-one-out errors. Fills
// predicted and loo of every row; returns the factors, sorted by key.
std::vector<CalibrationFactor> fit_calibration(std::vector<ValidationRow>& rows);
// Applies existing factors (by group) to every row; loo = predicted.
void apply_calibration(std::vector<ValidationRow>& rows,
                       const std::vector<CalibrationFactor>& factors);

// The calibration file `ringsim validate --fit` writes.
// `runs`: the user's runs file it was fitted to (`ringsim calibrate --runs`),
// or "" for the project's scoreboard.
// `bands`: with `runs`, the error bands of the classes those runs validate
// (their leave-one-out residuals, bands_of), kept for `--calibration FILE`.
std::string calibration_json_text(const std::vector<CalibrationFactor>& factors,
                                  const std::string& runs = "",
                                  const std::vector<ErrorBand>& bands = {});

}  // namespace ringsim
