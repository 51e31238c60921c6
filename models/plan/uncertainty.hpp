#pragma once
// Which catalog assumption moves a config's step time most (docs/plan.md,
// "Uncertainty"): each assumed number behind the hardware (catalog fields
// whose source starts with "assumption:" and that carry a "<field>_range") is
// set to its low and to its high value, one at a time, everything else
// fixed, and the config is evaluated again with evaluate().
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/core/catalog.hpp"
#include "models/kernel/implementation.hpp"
#include "models/plan/plan.hpp"

namespace ringsim {

struct UncertaintyRow {
  Assumption assumption;
  double step_time_s = 0;  // the config's nominal step (every assumption at its value)
  double step_time_s_low = 0, step_time_s_high = 0;  // the field at its low / its high value
  double swing() const;                              // |high - low|
};

// The implementation for a hardware (the attention kernel's prior rate is
// hw.efficiency x peak, so a changed attention efficiency needs a new one).
using ImplementationFor = std::function<std::shared_ptr<const Implementation>(const Hardware& hw)>;

// `hw` with the assumed field set to `v`: gemm_efficiency, attention_efficiency
// (Hardware::efficiency) or an interconnect's latency (intra, inter, or both
// when the link is both).
Hardware with_assumption(const Hardware& hw, const Assumption& a, double v);

// Rows sorted by swing, largest first (ties: catalog order). `c` must be
// feasible; a row whose low or high makes it infeasible keeps NaN there.
std::vector<UncertaintyRow> step_time_uncertainty(const PlanRequest& r, const Hardware& hw,
                                                  const PlanConfig& c,
                                                  const std::vector<Assumption>& assumptions,
                                                  const ImplementationFor& implementation);

// [{"assumption", "field", "value", "low", "high", "step_time_s_low",
//   "step_time_s_high", "source", "range_source"}], largest swing first.
nlohmann::json uncertainty_json(const std::vector<UncertaintyRow>& rows);
// "Uncertainty: which assumption moves the step time most" and one line per
// row, or "no catalog assumption applies".
std::string uncertainty_text(const PlanConfig& c, const std::vector<UncertaintyRow>& rows);

}  // namespace ringsim
