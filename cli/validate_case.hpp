#pragma once
// One case of `ringsim validate` predicted by the command a user would run,
// in this process: `ringsim plan ... --calibration none --top 1 --json`,
// `ringsim infer ... --engine analytic --json`, or for a speedup two runs of
// the same command (`ringsim run ... --engine analytic --json` or plan), its
// baseline's time over its own.
#include <string>
#include <vector>

#include "models/plan/validation.hpp"

namespace ringsim::cli {

// The command line a case runs (without the program name): its flags, or its
// baseline's, and what validate adds (--json; the analytic engine unless the
// flags name one; plan: no calibration, the best configuration only).
std::vector<std::string> case_command(const ValidationCase& c, bool baseline = false);

// The case's first-principles prediction and its calibration group (none for a
// ratio). Throws InputError naming the case when a command fails.
ValidationRow predict_case(const ValidationCase& c);

// `ringsim calibrate --runs FILE --out FILE`: `validate --cases FILE --fit
// FILE` (cmd_validate.cpp): the project's fit on the user's runs.
int calibrate_runs(const std::string& runs, const std::string& out, bool json);

}  // namespace ringsim::cli
