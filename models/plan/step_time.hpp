#pragma once
// Time of one training step of one configuration (docs/plan.md): attention by
// the closed forms (or a SimGrid re-check's times), projections and MLP at
// the device's rate, pointwise work at HBM bandwidth, tensor-parallel and
// FSDP collectives, the output head and loss, the optimizer.
#include <cstdint>
#include <optional>
#include <string>

#include "models/plan/basics.hpp"

namespace ringsim {

class Implementation;  // models/kernel/implementation.hpp

struct PlanTime {
  std::string engine = "analytic";  // who produced the attention times
  // Seconds per step (all micro-steps, all layers) unless noted.
  double attention_s = 0;            // fwd + bwd, = analyze(fwdbwd, layers) x micro-batch
  double attention_recompute_s = 0;  // full checkpointing: one more forward
  double other_compute_s = 0;        // projections + MLP (+ recompute) by roofline
  double pointwise_s = 0;            // norms, RoPE, residuals, SwiGLU by HBM roofline
  double head_s = 0;                 // output projection + loss
  double tp_comm_s = 0;              // sequence-parallel all-gathers/reduce-scatters (exposed)
  double fsdp_comm_s = 0;            // FSDP all-gathers + reduce-scatters (link time)
  double cp_link_s = 0;              // ring transfers + CP collectives (link time)
  double fsdp_exposed_s = 0;         // FSDP time not hidden behind compute
  double micro_step_s = 0;           // one micro-step
  double optimizer_s = 0;            // AdamW update by HBM roofline
  double step_time_s = 0;            // grad_accum x micro_step + optimizer
};

// Attention times that replace the analytic ones (a SimGrid re-check):
// seconds per layer for one sequence, forward and forward+backward.
struct AttentionOverride {
  double fwd_layer_s = 0, fwdbwd_layer_s = 0;
  std::string engine;
};

// One configuration's shape as the step-time model needs it.
struct StepShape {
  Layout layout = Layout::Ring;
  std::int64_t cp = 1, tp = 1, block = 0, micro_batch = 1, grad_accum = 1;
  int ulysses_degree = 0;
};

// Throws InputError when the compute model cannot time the attention (a
// profile that does not cover the block).
PlanTime step_time(const PlanRequest& r, const Hardware& hw, const Implementation& cm,
                   const StepShape& s, const std::optional<AttentionOverride>& attention);

}  // namespace ringsim
