#include "models/plan/step_time.hpp"

#include <algorithm>

#include "models/analytic/analytic.hpp"
#include "models/core/profile.hpp"
#include "models/core/work.hpp"
#include "models/kernel/implementation.hpp"

namespace ringsim {

namespace {

// Link time of one attention pass's CP traffic (ring transfers, final dK/dV
// hop, Ulysses all-to-alls, all-gathers), per layer, one sequence: the same
// transfers analyze() schedules, summed instead of overlapped.
double cp_link_seconds(const Workload& w, const Hardware& hw, bool backward) {
  const auto b = pass_bytes(w, backward);
  const double bw = hw.ring_bandwidth(w.devices), lat = hw.ring_latency(w.devices);
  double t = 0;
  const auto steps = num_steps(w);
  if (w.devices <= 1) return 0;
  // Every step but the last moves b.ring (backward: K, V, dK, dV); dK/dV then
  // take one more hop home.
  if (b.ring) t += static_cast<double>(steps - 1) * (static_cast<double>(b.ring) / bw + lat);
  if (b.final_hop) t += static_cast<double>(b.final_hop) / bw + lat;
  if (b.a2a_in || b.a2a_out) {
    const auto g = w.ulysses();
    const double abw = alltoall_bandwidth(hw, g), alat = alltoall_latency(hw, g);
    t += alltoall_time(b.a2a_in, g, abw, alat) + alltoall_time(b.a2a_out, g, abw, alat);
  }
  if (b.gather_block) t += ring_collective_time(b.gather_block, w.devices, bw, lat);
  if (b.scatter_block) t += ring_collective_time(b.scatter_block, w.devices, bw, lat);
  return t;
}

// Whether the CP ring and the FSDP collectives cross the same link class
// (both inside the node on NVLink, or both on the NIC): then they share it.
bool cp_shares_fsdp_link(const Hardware& g, std::int64_t cp, std::int64_t fsdp) {
  if (cp <= 1) return false;
  if (g.platform != Platform::Nodes || g.bandwidth_override) return true;
  return (cp > g.gpus_per_node) == (fsdp > g.gpus_per_node);
}

}  // namespace

PlanTime step_time(const PlanRequest& r, const Hardware& hw, const Implementation& cm,
                   const StepShape& sh, const std::optional<AttentionOverride>& attention) {
  const auto w = attention_workload(r, sh.layout, sh.cp, sh.tp, sh.ulysses_degree);
  const auto g = group_hardware(hw, sh.tp);
  const auto cp = sh.cp, tp = sh.tp, micro_batch = sh.micro_batch;
  const auto& s = r.shape;
  const double L = s.layers, D = s.d_model, V = s.vocab;
  const double t = static_cast<double>(tp), m = static_cast<double>(micro_batch);
  const double k = static_cast<double>(sh.grad_accum);
  // Projections, MLP and the output head are matmuls: the device's GEMM rate.
  const double eff = hw.gemm_flops();
  const double tokens = static_cast<double>(sh.block) * m;  // per device per micro-step (before tp)
  PlanTime T;

  // Attention: the analytic model for one sequence, all layers, x micro-batch.
  double attn_fwd = 0, attn_fwdbwd = 0;
  if (attention) {
    attn_fwd = attention->fwd_layer_s * L;
    attn_fwdbwd = attention->fwdbwd_layer_s * L;
    T.engine = attention->engine;
  } else {
    attn_fwdbwd = analyze(w, g, cm).time_s;
    auto wf = w;
    wf.pass = Pass::Fwd;
    attn_fwd = analyze(wf, g, cm).time_s;
  }
  const double a_f = attn_fwd / L * m, a_b = (attn_fwdbwd - attn_fwd) / L * m;

  auto wt = w;  // the rest of the layer sees all micro-batch tokens
  wt.block = sh.block * micro_batch;
  const double o_f = other_layer_flops(wt, false) / eff, o_b = other_layer_flops(wt, true) / eff;
  const double p_f = pointwise_bytes_per_token(s) * tokens / t / hw.hbm_bandwidth, p_b = 2 * p_f;

  // Sequence parallel (Korthikanti et al. sec. 4.2.2): 2 all-gathers + 2
  // reduce-scatters of the tokens x D activation per pass, not overlapped.
  const double tp_one = ring_collective_time(static_cast<std::uint64_t>(2 * D * tokens / t), tp,
                                             hw.ring_bandwidth(tp), hw.ring_latency(tp));
  const double tp_f = 4 * tp_one, tp_b = 4 * tp_one;

  const double r_f = cp_link_seconds(w, g, false) * m;
  const double r_b = cp_link_seconds(w, g, true) * m;

  const std::int64_t Z = r.gpus / tp;  // FSDP shard group
  const double zbw = g.ring_bandwidth(Z), zlat = g.ring_latency(Z);
  auto shard_collective = [&](double params) {
    return ring_collective_time(static_cast<std::uint64_t>(2 * params / t / static_cast<double>(Z)),
                                Z, zbw, zlat);
  };
  const double ag_layer = shard_collective(static_cast<double>(layer_params(s)));
  const double f_f = ag_layer, f_b = 2 * ag_layer;  // backward: all-gather + reduce-scatter (bf16)
  const bool shared = cp_shares_fsdp_link(g, cp, Z);

  const bool full = r.checkpointing == Checkpointing::Full;
  const bool selective = r.checkpointing == Checkpointing::Selective;
  const double compute_f = a_f + o_f + p_f;
  const double compute_b = a_b + o_b + p_b + (full ? compute_f : 0) + (selective ? p_f : 0);
  const double link_f = f_f + (shared ? r_f : 0);
  const double link_b = f_b + (shared ? r_b + (full ? r_f : 0) : 0);
  const double tpc_b = tp_b + (full ? tp_f : 0);
  const double layer_f = std::max(compute_f, link_f) + tp_f;
  const double layer_b = std::max(compute_b, link_b) + tpc_b;

  // Output head + loss: 2 x tokens x D x V / tp forward, twice that backward;
  // the loss's fp32 passes over the logits by HBM roofline (10 B forward, 14 B
  // backward per logit: the casts and log-softmax reads and writes).
  const double logits = tokens * V / t;
  const double hc_f = 2 * D * logits / eff + 10 * logits / hw.hbm_bandwidth;
  const double hc_b = 4 * D * logits / eff + 14 * logits / hw.hbm_bandwidth;
  const double ag_head = shard_collective(static_cast<double>(embedding_params(s)));
  const double head_f = std::max(hc_f, ag_head), head_b = std::max(hc_b, 2 * ag_head);
  // The embedding's all-gather opens the step and its reduce-scatter closes
  // it: nothing to hide behind.
  const double edges = 2 * ag_head;

  const double micro = L * (layer_f + layer_b) + head_f + head_b + edges;
  const double compute_only = L * (compute_f + compute_b + tp_f + tpc_b) + hc_f + hc_b;
  T.attention_s = k * L * (a_f + a_b);
  T.attention_recompute_s = full ? k * L * a_f : 0;
  T.other_compute_s = k * L * (o_f + o_b + (full ? o_f : 0));
  T.pointwise_s = k * L * (p_f + p_b + (full || selective ? p_f : 0));
  T.head_s = k * (hc_f + hc_b);
  T.tp_comm_s = k * L * (tp_f + tpc_b);
  T.fsdp_comm_s = k * (L * (f_f + f_b) + 3 * ag_head + edges);
  T.cp_link_s = k * L * (r_f + r_b + (full ? r_f : 0));
  T.fsdp_exposed_s = k * (micro - compute_only);
  T.micro_step_s = micro;
  T.optimizer_s = PlanConstants::kOptimizerTrafficBytes * static_cast<double>(total_params(s)) /
                  static_cast<double>(r.gpus) / hw.hbm_bandwidth;
  T.step_time_s = k * micro + T.optimizer_s;

  return T;
}

}  // namespace ringsim
