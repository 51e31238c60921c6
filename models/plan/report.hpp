#pragma once
// The planner's answers as text and JSON (`ringsim plan`, docs/plan.md).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/plan/plan.hpp"

namespace ringsim {

// One ranked config: layout, degrees, block, memory itemised, step time
// itemised, tokens/s, MFU; `reason` and `infeasible` {kind, rule or term,
// hint} when it does not fit.
nlohmann::json config_json(const PlanConfig& c, int rank, double hbm);
// "12.3 ms", "1.25 s"
std::string seconds(double s);
// The request and hardware, as the first lines of the table.
std::string header(const PlanRequest& r, const Hardware& hw, double hbm,
                   const std::string& cm_name);
// The ranked feasible configs (at most `top`), then the infeasible ones with
// their reasons, rows of one cp/tp and one reason merged, hints said once.
std::string table(const std::vector<PlanConfig>& cs, int top);
// A memory itemisation: the largest three terms first, then every term by
// size with its phase, pool and formula, the total and PyTorch's peaks.
std::string memory_itemised(const PlanMemory& m);
// One config's memory and time, term by term.
std::string explain(const PlanConfig& c, double hbm);

}  // namespace ringsim
