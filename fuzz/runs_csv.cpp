// Fuzz target: a team's measured runs (`ringsim calibrate --runs RUNS.csv`,
// `validate --cases`: parse_runs_csv). Any bytes must be refused with one
// InputError line or read into cases with an id, a known command and metric,
// and a positive finite measured value.
#include "models/plan/runs_csv.hpp"

#include <cmath>
#include <string>

#include "fuzz/target.hpp"
#include "models/core/errors.hpp"

namespace ringsim::fuzz {

int runs_csv(const std::uint8_t* data, std::size_t size) {
  if (size > 16384) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto set = parse_runs_csv(text, "--runs fuzz.csv");
    for (const auto& c : set.cases) {
      if (c.id.empty() || c.command.empty() || c.metric.empty())
        finding("runs_csv: a case without an id, command or metric");
      if (!(c.published > 0) || !std::isfinite(c.published))
        finding("runs_csv: a non-positive measured value accepted");
    }
  } catch (const InputError& e) {
    check_message("runs_csv", e.what(), true);
  }
  return 0;
}

}  // namespace ringsim::fuzz

RINGSIM_FUZZ_ENTRY(runs_csv)
