#pragma once
// Mixture of experts in a training plan (docs/plan.md, "Mixture of
// experts"): a MoE layer's cost (models/analytic/moe.hpp) over a model's
// layers, with the row's EP, expert TP, capacity factor and routing seed;
// the experts' parameters a GPU holds; the EP degrees a search tries.
#include <cstdint>
#include <vector>

#include "models/analytic/moe.hpp"
#include "models/plan/basics.hpp"

namespace ringsim {

// The expert tensor-parallel degree of a row with `tp`: --etp, else tp.
inline std::int64_t expert_tp(const PlanRequest& r, std::int64_t tp) {
  return r.etp > 0 ? r.etp : tp;
}

// A layer's routed-expert parameters one GPU does not hold, in units of
// what dividing by tp leaves: experts x (1 - tp / (ep x etp)). Subtracted
// from a layer's parameters before "/ tp", it leaves the dense part / tp
// plus the experts / (ep x etp).
double experts_elsewhere(const PlanRequest& r, std::int64_t tp);

// One MoE layer's time per micro-step on one GPU (0s for a dense model), on
// the cluster's hardware `base` (not a TP group's: where the EP group sits
// depends on etp). `fused_gate_up`: gate and up as one GEMM (Megatron).
MoeLayerTime moe_layer_time(const PlanRequest& r, const Hardware& base, std::int64_t tokens,
                            std::int64_t tp, const GemmRates& rates, bool fused_gate_up);

// Expert-parallel degrees searched for a row: --ep's, or the powers of two
// dividing both the experts and `ranks`, the tp x cp x dp ranks over the
// expert TP degree (the EP groups' room).
std::vector<std::int64_t> ep_degrees(const PlanRequest& r, std::int64_t ranks);

}  // namespace ringsim
