#include "models/analytic/tp_collectives.hpp"

#include "models/analytic/analytic.hpp"
#include "models/analytic/collectives.hpp"
#include "models/core/checked.hpp"

namespace ringsim {

TpLink tp_link(const Hardware& hw, std::int64_t tp) {
  // validate() keeps `run`'s TP group inside one node: the node's link
  // (NVLink through the node's switch on `nodes`, the ring link on `flat`).
  const auto l = collective_link(hw, placed_group(hw, tp));
  return {l.bus_bw, l.crosses_nodes ? l.inter_lat : l.intra_lat};
}

int tp_calls_per_pass(std::int64_t tp, bool sequence_parallel) {
  if (tp <= 1) return 0;
  return sequence_parallel ? 4 : 2;
}

int tp_ring_collectives_per_pass(std::int64_t tp) {
  return tp > 1 ? 4 : 0;
}

std::uint64_t tp_share_bytes(std::int64_t tokens, int d_model, int bytes_per_element,
                             std::int64_t tp) {
  if (tp <= 1) return 0;
  const auto bytes = mul_checked(
      static_cast<std::uint64_t>(tokens),
      static_cast<std::uint64_t>(d_model) * static_cast<std::uint64_t>(bytes_per_element),
      "TP collective bytes");
  return bytes / static_cast<std::uint64_t>(tp);
}

double tp_pass_seconds(std::int64_t tokens, int d_model, int bytes_per_element, std::int64_t tp,
                       const Hardware& hw, bool sequence_parallel) {
  if (tp <= 1) return 0;
  const auto link = tp_link(hw, tp);
  return tp_ring_collectives_per_pass(tp) *
             ring_collective_time(tp_share_bytes(tokens, d_model, bytes_per_element, tp), tp,
                                  link.bandwidth, link.latency) +
         tp_calls_per_pass(tp, sequence_parallel) * kCollectiveBaseLatency;
}

int tp_ring_collectives_per_pass(const Workload& w) {
  if (w.scope != Scope::Layer) return 0;
  return is_moe(w.shape) ? tp_ring_collectives_per_pass(w.tp) / 2
                         : tp_ring_collectives_per_pass(w.tp);
}

double tp_pass_seconds(const Workload& w, const Hardware& hw) {
  if (w.scope != Scope::Layer) return 0;
  // A MoE layer's two (with sequence parallelism, which Megatron-Core
  // requires of MoE with TP: a call per collective) are half of a dense
  // layer's four.
  const double share = is_moe(w.shape) ? 0.5 : 1.0;
  return share *
         tp_pass_seconds(static_cast<std::int64_t>(mul_checked(static_cast<std::uint64_t>(w.block),
                                                               static_cast<std::uint64_t>(w.batch),
                                                               "TP tokens")),
                         w.shape.d_model, dtype_bytes(w.dtype), w.tp, hw, w.sequence_parallel);
}

}  // namespace ringsim
