#pragma once
// Error bands (docs/validation.md, "Error bands"): how far ringsim's number
// was from the published one on the scoreboard's cases of the same class,
// out of sample. A class is the command's kind (a framework for plan;
// "inference" for infer; "run" for run) x the device family x the regime
// (training-short | training-long, prefill | decode, attention). The band is
// the smallest symmetric interval holding `coverage` (80%) of the class's
// leave-one-out residuals, in time: a throughput case's error e counts as
// the step-time error 1/(1+e) - 1. `ringsim validate --error-bands FILE`
// writes the table (models/data/error_bands.json) from the same rows it
// prints; a test recomputes it and compares.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ringsim {

struct ValidationRow;
struct JsonReader;

struct ErrorBand {
  std::string klass;         // "pytorch-fsdp/hopper/training-long"
  double low = 0, high = 0;  // fractions of the number: truth within [x(1+low), x(1+high)]
  double coverage = 0.8;     // of the class's cases inside
  int cases = 0;             // validated cases of the class
  std::vector<std::string> ids;
  // "" : the project's scoreboard (models/data/error_bands.json); else the
  // user's calibration file whose runs' leave-one-out residuals made it.
  std::string source;
  bool validated() const;
  // "+-14% (80% of 23 validated cases of pytorch-fsdp/hopper/training-long)",
  // "+-6% (80% of 9 of your runs in FILE, pytorch-fsdp/hopper/training-short)"
  // or "unvalidated (no ... case)".
  std::string text() const;
  // class, low, high, coverage, cases (low/high null: unvalidated), text,
  // source (null: the project's scoreboard; else the calibration file).
  nlohmann::json to_json() const;
};

// A band's bound as printed: whole percent, rounded up like the band itself,
// so a printed band still holds the case that set it ("31%" for 0.305).
std::string band_percent(double fraction);

// Fewest cases a band is stated from; below it the class is unvalidated.
inline constexpr int kMinBandCases = 3;
inline constexpr double kBandCoverage = 0.8;
// Contexts from this many tokens on are "long" (context parallelism's regime).
inline constexpr std::int64_t kLongContextTokens = 65536;

std::string band_class(const std::string& kind, const std::string& family,
                       const std::string& regime);
std::string training_regime(std::int64_t context);
// A residual as a step-time error: time metrics as they are, throughput
// (more is faster) inverted, ratios as they are.
double time_residual(const std::string& metric, double error);

// The band of `residuals` (time errors) at `coverage`.
ErrorBand compute_band(const std::string& klass, const std::vector<double>& residuals,
                       const std::vector<std::string>& ids, double coverage = kBandCoverage);
// Every class's band from the scoreboard's rows (their leave-one-out
// predictions), and each plan class's first-principles band, named
// "<class> (calibration none)"; sorted by class.
std::vector<ErrorBand> bands_of(const std::vector<ValidationRow>& rows);
// The table `validate --error-bands` writes, and its parser.
std::string error_bands_json_text(const std::vector<ErrorBand>& bands);
std::vector<ErrorBand> parse_error_bands(const std::string& text, const std::string& origin);
// One band of either table (error_bands.json's `bands`, a calibration file's
// `error_bands`): class, cases (at least `min_cases`), low <= 0 <= high, ids.
// Its coverage is the caller's to set. Throws InputError through `r`.
ErrorBand read_band(const JsonReader& r, int min_cases);
// The embedded models/data/error_bands.json's band for `klass` (unvalidated
// when the class has none).
ErrorBand find_band(const std::string& klass);
const std::vector<ErrorBand>& embedded_error_bands();

}  // namespace ringsim
