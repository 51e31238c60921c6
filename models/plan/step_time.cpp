#include "models/plan/step_time.hpp"

#include <algorithm>

#include "models/analytic/analytic.hpp"
#include "models/analytic/tp_collectives.hpp"
#include "models/core/profile.hpp"
#include "models/core/work.hpp"
#include "models/kernel/implementation.hpp"
#include "models/plan/pipeline.hpp"

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
  // Projections and MLP: FP8 under --precision fp8; the head stays bf16 (precision.hpp).
  const double eff_linear = linear_gemm_flops(r, hw);
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
  const double o_f = other_layer_flops(wt, false) / eff_linear;
  const double o_b = other_layer_flops(wt, true) / eff_linear;
  const double p_f = pointwise_bytes_per_token(s) * tokens / t / hw.hbm_bandwidth, p_b = 2 * p_f;

  // Sequence parallel (Korthikanti et al. sec. 4.2.2): 2 all-gathers + 2
  // reduce-scatters of the tokens x D activation per pass, not overlapped; the
  // cost `ringsim run --tp` charges (models/analytic/tp_collectives.hpp).
  const double tp_f =
      tp_pass_seconds(sh.block * micro_batch, s.d_model, dtype_bytes(r.dtype), tp, hw);
  const double tp_b = tp_f;

  const double r_f = cp_link_seconds(w, g, false) * m;
  const double r_b = cp_link_seconds(w, g, true) * m;

  // FSDP shard group: the cp x dp ranks of one pipeline stage (all of a TP
  // slice without a pipeline). Its data-parallel members are tp x cp x pp
  // ranks apart, so with pp > 1 and dp > 1 its ring spans the whole slice.
  const std::int64_t Z = r.gpus / tp / sh.pp;
  const std::int64_t span = Z > cp ? Z * sh.pp : Z;
  const double zbw = g.ring_bandwidth(span), zlat = g.ring_latency(span);
  auto shard_collective = [&](double params) {
    return ring_collective_time(static_cast<std::uint64_t>(2 * params / t / static_cast<double>(Z)),
                                Z, zbw, zlat);
  };
  const double ag_layer = shard_collective(static_cast<double>(layer_params(s)));
  // FP8 all-gather (precision.hpp): linear weights travel as FP8; the reduce-scatter stays bf16.
  const double ag_gather =
      shard_collective(static_cast<double>(layer_params(s)) * fsdp_allgather_fraction(r));
  const double f_f = ag_gather,
               f_b = ag_gather + ag_layer;  // backward: all-gather + reduce-scatter
  // FP8 casts (precision.hpp): memory-bound, charged with the compute.
  const double c8_f = fp8_cast_seconds(r, hw, tokens, tp, Z, false);
  const double c8_b = fp8_cast_seconds(r, hw, tokens, tp, Z, true);
  const bool shared = cp_shares_fsdp_link(g, cp, span);

  const bool full = r.checkpointing == Checkpointing::Full;
  const bool selective = r.checkpointing == Checkpointing::Selective;
  const double compute_f = a_f + o_f + p_f + c8_f;
  const double compute_b = a_b + o_b + p_b + c8_b + (full ? compute_f : 0) + (selective ? p_f : 0);
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

  // One microbatch on each pipeline stage (one stage without a pipeline): its
  // layers; the first stage also opens and closes with the embedding's
  // collectives, the last runs the output head and loss. The slowest stage
  // paces the schedule.
  const std::vector<int> layers =
      sh.stage_layers.empty() ? std::vector<int>{s.layers} : sh.stage_layers;
  const size_t P = layers.size();
  auto stage_s = [&](size_t i, bool compute) {
    double t_i = layers[i] * (compute ? compute_f + compute_b + tp_f + tpc_b : layer_f + layer_b);
    if (i + 1 == P) {
      t_i += compute ? hc_f : head_f;
      t_i += compute ? hc_b : head_b;
    }
    if (i == 0 && !compute) t_i += edges;
    return t_i;
  };
  size_t slow = 0;
  for (size_t i = 1; i < P; ++i)
    if (stage_s(i, false) > stage_s(slow, false)) slow = i;
  const bool first = slow == 0, last = slow + 1 == P;
  const double Ls = layers[slow];
  const double micro = stage_s(slow, false);
  const double compute_only = stage_s(slow, true);
  T.attention_s = k * Ls * (a_f + a_b);
  T.attention_recompute_s = full ? k * Ls * a_f : 0;
  T.other_compute_s = k * Ls * (o_f + o_b + (full ? o_f : 0));
  T.pointwise_s = k * Ls * (p_f + p_b + (full || selective ? p_f : 0));
  T.fp8_cast_s = k * Ls * (c8_f + c8_b + (full ? c8_f : 0));
  T.head_s = last ? k * (hc_f + hc_b) : 0;
  T.tp_comm_s = k * Ls * (tp_f + tpc_b);
  T.fsdp_comm_s = k * (Ls * (f_f + f_b) + (last ? 3 * ag_head : 0) + (first ? edges : 0));
  T.cp_link_s = k * Ls * (r_f + r_b + (full ? r_f : 0));
  T.fsdp_exposed_s = k * (micro - compute_only);
  T.micro_step_s = micro;
  // The optimizer runs on every stage at once after the flush: the stage with
  // the most parameters, sharded over its gpus / pp devices.
  double stage_n = 0;
  for (size_t i = 0; i < P; ++i)
    stage_n = std::max(stage_n, stage_params(s, layers, static_cast<std::int64_t>(i)));
  T.optimizer_s = PlanConstants::kOptimizerTrafficBytes * stage_n /
                  static_cast<double>(r.gpus / sh.pp) / hw.hbm_bandwidth;
  // Pipeline schedule (Narayanan et al. 2021, arXiv 2104.04473, sec. 2.2):
  // m + (p-1)/V slots of the slowest stage's microbatch. P2P is not
  // overlapped with compute (Megatron's default: its 1F1B posts each send
  // and receive as a blocking batched P2P between computations), so every
  // slot also waits for the slowest stage's V forward activation and V
  // backward gradient messages.
  const auto pp = static_cast<std::int64_t>(P);
  const int vs = pp > 1 ? sh.pp_virtual : 1;  // virtual stages per device
  const double slots = schedule_slots(pp, vs, sh.grad_accum);
  const auto p2p = pipeline_p2p(r, hw, cp, tp, sh.block, micro_batch, pp);
  const double p2p_slot = pp > 1 ? 2.0 * vs * p2p.message_s : 0;
  T.pp_bubble_s = static_cast<double>(pp - 1) / vs * micro;
  T.pp_bubble_fraction = bubble_fraction(pp, vs, sh.grad_accum);
  T.pp_p2p_s = slots * p2p_slot;
  T.pp_message_bytes = p2p.message_bytes;
  T.pp_message_s = p2p.message_s;
  T.pp_link = p2p.link;
  T.pp_slowest_stage = static_cast<std::int64_t>(slow);
  T.step_time_s = slots * (micro + p2p_slot) + T.optimizer_s;

  return T;
}

}  // namespace ringsim
