#pragma once
// Framework-level calibration (docs/validation.md): where no kernel-level
// source gives a rate, one efficiency factor per framework x device family,
// fitted by `ringsim validate --fit` to the declared training set of
// published runs (models/data/validation.json) and nothing else. The factor
// multiplies the first-principles step time (or request time); every summary
// that uses one prints it, and --calibration none leaves it out.
#include <memory>
#include <string>
#include <vector>

#include "models/plan/error_band.hpp"

namespace ringsim {

struct CalibrationFactor {
  std::string key;                  // "pytorch-fsdp/hopper"
  std::string framework;            // pytorch-fsdp | megatron | jax-xla | pytorch-inference
  std::string family;               // the catalog device's family
  double factor = 1;                // predicted time x factor = calibrated time
  int runs = 0;                     // training cases it was fitted to
  double loo_median_abs_error = 0;  // leave-one-out, over those cases
  double loo_max_abs_error = 0;
  std::vector<std::string> cases;  // their ids in models/data/validation.json
};

struct Calibration {
  std::string schema, procedure;
  std::vector<CalibrationFactor> factors;
  // A user's file (`calibrate --runs`): the error band of each class its runs
  // validate (at least kMinBandCases), from their leave-one-out residuals.
  std::vector<ErrorBand> bands;
};

// The embedded models/data/calibration.json.
const Calibration& embedded_calibration();
// Parses a calibration file's text; throws InputError naming `origin`.
Calibration parse_calibration(const std::string& text, const std::string& origin);
// The factor for `framework` on `family`, or nullptr when none was fitted.
const CalibrationFactor* find_calibration(const std::string& framework, const std::string& family);
// One line for a summary: "calibration: pytorch-fsdp/hopper x1.18 (fitted to
// 9 published runs, leave-one-out median |error| 6.1%; --calibration none
// for first principles)", or the reason there is none.
// `moved`: the factor is the user's (--set frameworks.NAME.calibration).
std::string calibration_line(const std::string& key, double factor, bool moved = false);
// The same for a factor from the user's file (`--calibration FILE`).
std::string user_calibration_line(const CalibrationFactor& f, const std::string& file);
// The factor of `framework` on `family` in `c`, or nullptr.
const CalibrationFactor* find_in(const Calibration& c, const std::string& framework,
                                 const std::string& family);
// A calibration file (`--calibration FILE`), read and parsed; InputError naming the flag.
Calibration read_calibration_file(const std::string& path);
// The same, shared as the commands hold it (PlanRequest, run, infer); null
// for "" (no file given).
std::shared_ptr<const Calibration> read_user_calibration(const std::string& path);
// The error band of `klass`: the user's file's where its runs validate the
// class (named by `file`), else the project's scoreboard's (find_band).
ErrorBand choose_band(const std::string& klass, const Calibration* user, const std::string& file);

// The request's calibration group (framework/family, named either way) and,
// unless `none` (--calibration none), its fitted factor, or the factor --set
// moved it to (r.moves): what `plan` applies.
struct PlanRequest;
void set_calibration(PlanRequest& r, const std::string& family, bool none);
// The summary's line for what set_calibration chose (the user's file, --set,
// the project's factor or none).
std::string calibration_line(const PlanRequest& r);
// Whether a factor exists for what set_calibration chose: the user's file,
// --set, or one fitted for the request's group (whether or not --calibration
// none left it out).
bool has_factor(const PlanRequest& r);

}  // namespace ringsim
