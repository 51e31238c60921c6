#include "models/plan/moe.hpp"

#include <algorithm>

namespace ringsim {

double experts_elsewhere(const PlanRequest& r, std::int64_t tp) {
  const double held = static_cast<double>(tp) /
                      static_cast<double>(std::max<std::int64_t>(1, r.ep) * expert_tp(r, tp));
  return static_cast<double>(expert_layer_params(r.shape)) * (1 - held);
}

MoeLayerTime moe_layer_time(const PlanRequest& r, const Hardware& base, std::int64_t tokens,
                            std::int64_t tp, const GemmRates& rates, bool fused_gate_up) {
  MoeParallel p;
  p.ep = r.ep;
  p.etp = expert_tp(r, tp);
  p.capacity_factor = r.capacity_factor;
  p.routing_seed = r.routing_seed;
  p.flex = r.ep_flex;
  p.element_bytes = dtype_bytes(r.dtype);
  auto t = moe_one_layer_time(r.shape, p, base, tokens, tp, rates, fused_gate_up);
  // Dense first layers: the mean over every layer.
  const double share =
      is_moe(r.shape) ? static_cast<double>(moe_layers(r.shape)) / r.shape.layers : 0;
  for (double* x : {&t.permute_f, &t.permute_b, &t.experts_f, &t.experts_b, &t.a2a_f, &t.a2a_b,
                    &t.etp_f, &t.etp_b})
    *x *= share;
  return t;
}

std::vector<std::int64_t> ep_degrees(const PlanRequest& r, std::int64_t ranks) {
  if (!is_moe(r.shape)) return {1};
  if (!r.ep_degrees.empty()) return r.ep_degrees;  // a row that breaks a rule says which
  std::vector<std::int64_t> out;
  for (std::int64_t e = 1; e <= r.shape.experts && e <= ranks; e *= 2)
    if (r.shape.experts % e == 0 && ranks % e == 0) out.push_back(e);
  // No rank left for EP (an --etp wider than tp x cp x dp): EP 1, so that
  // the row is evaluated and says which rule it breaks.
  if (out.empty()) out.push_back(1);
  return out;
}

}  // namespace ringsim
