#pragma once
// A team's own measured runs (docs/own-cluster.md, "Your step times"): a CSV
// with the header `id,command,args,metric,value` (optional `tolerance`,
// `note`), one row per run, written as the scoreboard's cases are (`args`:
// the flags of `ringsim plan` or `ringsim infer`). `ringsim calibrate --runs`
// fits the framework-level factors to them by the scoreboard's procedure;
// `ringsim validate --cases` scores them.
#include <string>

#include "models/plan/validation.hpp"

namespace ringsim {

// Throws InputError naming `origin`, the line and the column.
ValidationSet parse_runs_csv(const std::string& text, const std::string& origin);

}  // namespace ringsim
