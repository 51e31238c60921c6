#pragma once
// The planner's SimGrid re-check: the attention of the top configurations
// re-run by `ringsim run --engine simgrid` in child processes, and for those
// with TP or DP the whole layer in job mode (one SimGrid
// engine per process), each configuration handed over as a run spec and read
// back as a run summary. A child's failure is judged by its exit code and the
// summary's `engine` field, never by the text of its message.
#include <optional>
#include <string>
#include <vector>

#include "models/plan/plan.hpp"
#include "proc/run_spec.hpp"

namespace ringsim::proc {

// The config's whole layer simulated in job mode (TP x CP x DP GPUs on one
// fabric, `ringsim run --dp --tp --scope layer --pass fwdbwd`).
struct RecheckJob {
  std::string skipped;  // why no job run ("" when one ran or failed)
  std::string error;    // the job run's failure ("" when it ran)
  std::int64_t gpus = 0;
  bool fsdp = false;
  double layer_s = 0;     // simulated, the slowest ring's layer
  double alone_s = 0;     // one ring alone, closed form
  double contention = 0;  // layer_s / alone_s
  std::string why;        // why the slowest ring took longer ("" for a single ring)
  std::string hottest_link;
  double hottest_peak = 0, hottest_mean = 0;
};

// What-ifs for the whole step (`plan --recheck N --straggler GPU:F --degrade
// LINK:F --jitter S`): each re-check child runs with them, and the config is
// evaluated again with its attention from those runs and, for a straggler,
// every other compute of the step F times slower (synchronous training runs
// at its slowest GPU's pace: TP collectives wait for it every layer, the
// pipeline for its stage, the data-parallel reduction for its replica).
struct PlanFaults {
  std::vector<std::pair<std::int64_t, double>> stragglers;  // (GPU of the job, factor)
  std::vector<std::string> degrades;                        // run's LINK:FACTOR, as given
  double jitter = 0;
  std::uint64_t seed = 1;
  bool any() const { return !stragglers.empty() || !degrades.empty() || jitter > 0; }
  // The slowest straggler's factor (1: none).
  double worst() const;
  std::string describe() const;  // "--straggler 5:1.5 --jitter 0.05", "" when none
};

struct RecheckRow {
  std::string config;      // PlanConfig::label()
  std::string error;       // "" when the re-check ran
  double fwd_layer_s = 0;  // SimGrid: one layer, forward
  double fwdbwd_layer_s = 0;
  double fwdbwd_layer_analytic_s = 0;  // the child's own closed form, for comparison
  PlanConfig with_simgrid;             // the config evaluated again with SimGrid's attention
  double analytic_attention_s = 0, analytic_step_s = 0;
  // With --straggler: the factor applied to every compute outside the
  // attention (PlanFaults); 1 without.
  double compute_slowdown = 1;
  RecheckJob job;
};

struct Recheck {
  enum class Status { Off, Ok, Partial, Failed, Unavailable };
  Status status = Status::Off;
  std::string message;
  std::vector<RecheckRow> rows;
  std::string faults;               // PlanFaults::describe() of the run, "" without faults
  const char* status_name() const;  // off | ok | partial | failed | unavailable
};

// The run spec that re-runs one config's attention (one layer) for `pass`;
// `hardware` carries the plan's overrides (--flops, --profile, ...).
RunSpec recheck_spec(const PlanRequest& r, const PlanConfig& c, const Hardware& hw,
                     const HardwareSpec& hardware, Pass pass, const PlanFaults& faults = {});

// Whether the re-check simulates a config's layer in job mode: tp or dp > 1,
// a ring layout (ring, striped, zigzag), and a model whose layer `run
// --scope layer` plays as the config runs it (a MoE model's experts over its
// TP group, EP inside one ring, no capacity factor; no chunked attention);
// if not, `why` says why.
bool wants_job(const PlanRequest& r, const PlanConfig& c, std::string* why);
// The run spec of that job: one layer, forward and backward, of every CP ring
// of the config (--dp, --tp, --scope layer) on the plan's cluster, FSDP flows
// on under pytorch-fsdp; a MoE model by its name, with the config's --ep and
// the plan's --routing-seed.
RunSpec job_spec(const PlanRequest& r, const PlanConfig& c, const Hardware& hw,
                 const HardwareSpec& hardware, const PlanFaults& faults = {});

// Re-checks the first `n` feasible configs of `configs` (search order).
Recheck recheck_top(int n, const std::vector<PlanConfig>& configs, const PlanRequest& r,
                    const Hardware& hw, const HardwareSpec& hardware, const Implementation& cm,
                    const PlanFaults& faults = {}, double timeout_s = 300);

}  // namespace ringsim::proc
