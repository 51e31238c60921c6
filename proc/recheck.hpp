#pragma once
// The planner's SimGrid re-check: the attention of the top configurations
// re-run by `ringsim run --engine simgrid` in child processes (one SimGrid
// engine per process), each configuration handed over as a run spec and read
// back as a run summary. A child's failure is judged by its exit code and the
// summary's `engine` field, never by the text of its message.
#include <optional>
#include <string>
#include <vector>

#include "models/plan/plan.hpp"
#include "proc/run_spec.hpp"

namespace ringsim::proc {

struct RecheckRow {
  std::string config;      // PlanConfig::label()
  std::string error;       // "" when the re-check ran
  double fwd_layer_s = 0;  // SimGrid: one layer, forward
  double fwdbwd_layer_s = 0;
  double fwdbwd_layer_analytic_s = 0;  // the child's own closed form, for comparison
  PlanConfig with_simgrid;             // the config evaluated again with SimGrid's attention
  double analytic_attention_s = 0, analytic_step_s = 0;
};

struct Recheck {
  enum class Status { Off, Ok, Partial, Failed, Unavailable };
  Status status = Status::Off;
  std::string message;
  std::vector<RecheckRow> rows;
  const char* status_name() const;  // off | ok | partial | failed | unavailable
};

// The run spec that re-runs one config's attention (one layer) for `pass`;
// `hardware` carries the plan's overrides (--flops, --profile, ...).
RunSpec recheck_spec(const PlanRequest& r, const PlanConfig& c, const Hardware& hw,
                     const HardwareSpec& hardware, Pass pass);

// Re-checks the first `n` feasible configs of `configs` (search order).
Recheck recheck_top(int n, const std::vector<PlanConfig>& configs, const PlanRequest& r,
                    const Hardware& hw, const HardwareSpec& hardware, const Implementation& cm,
                    double timeout_s = 300);

}  // namespace ringsim::proc
