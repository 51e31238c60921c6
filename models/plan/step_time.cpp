#include "models/plan/step_time.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include "models/analytic/analytic.hpp"
#include "models/analytic/collectives.hpp"
#include "models/analytic/tp_collectives.hpp"
#include "models/core/profile.hpp"
#include "models/core/work.hpp"
#include "models/kernel/gemm.hpp"
#include "models/kernel/implementation.hpp"
#include "models/plan/activations.hpp"
#include "models/plan/execution.hpp"
#include "models/plan/framework.hpp"
#include "models/plan/moe.hpp"
#include "models/plan/pipeline.hpp"
#include "models/plan/schedule.hpp"

namespace ringsim {

namespace {

// The attention times of the search in progress (AttentionMemoScope), by
// what attention_workload varies across one request's configurations.
using AttentionKey = std::tuple<int, std::int64_t, std::int64_t, int, int, int, int, int,
                                std::size_t, std::int64_t, bool>;
thread_local std::unique_ptr<std::map<AttentionKey, double>> t_attention_memo;

// analyze_time, or the time the search in progress already computed for it.
double attention_time(const Workload& w, const Hardware& g, const Implementation& cm) {
  if (!t_attention_memo) return analyze_time(w, g, cm);
  const AttentionKey key{static_cast<int>(w.layout),
                         w.devices,
                         w.block,
                         w.shape.heads,
                         w.shape.kv_heads,
                         w.ulysses_degree,
                         static_cast<int>(w.pass),
                         w.tp,
                         w.documents.size(),
                         w.documents.empty() ? 0 : w.documents.front(),
                         cm.expands_kv()};
  const auto it = t_attention_memo->find(key);
  if (it != t_attention_memo->end()) return it->second;
  return (*t_attention_memo)[key] = analyze_time(w, g, cm);
}

// Link time of one attention pass's CP traffic (ring transfers, final dK/dV
// hop, Ulysses all-to-alls, all-gathers), per layer, one sequence: the same
// transfers analyze() schedules, with the implementation's payload (its dK/dV
// and K bytes, its permutation), summed instead of overlapped.
double cp_link_seconds(const Workload& w, const Hardware& hw, const Implementation& im,
                       bool backward) {
  if (w.devices <= 1) return 0;
  const auto b = pass_bytes(w, backward, im, hw);
  const auto steps = num_steps(w);
  double t = 0;
  // Every step but the last moves b.ring (backward: K, V, dK, dV); dK/dV then
  // take one more hop home.
  if (b.ring) t += static_cast<double>(steps - 1) * ring_step_seconds(w, hw, b.ring);
  if (b.final_hop) t += ring_step_seconds(w, hw, b.final_hop);
  return t + pass_collective_seconds(w, hw, b);
}

// The layer's CP collectives one by one (plan --explain): the ring's
// transfers overlap the next step's compute, the others sit on the
// attention's critical path (analyze()'s schedule, and XLA's on a TPU).
std::vector<CpCollective> cp_collective_rows(const Workload& w, const Hardware& hw,
                                             const Implementation& im) {
  std::vector<CpCollective> rows;
  if (w.devices <= 1) return rows;
  const auto steps = num_steps(w);
  const double n = static_cast<double>(w.devices);
  for (const bool bwd : {false, true}) {
    const auto b = pass_bytes(w, bwd, im, hw);
    const std::string pass = bwd ? "bwd" : "fwd";
    if (b.ring) {
      const auto kv = b.ring - b.final_hop;
      rows.push_back(
          {"collective-permute", pass,
           bwd ? fmt::format("K/V + dK/dV ({} B)", b.ring) : fmt::format("K/V ({} B)", kv),
           ring_step_seconds(w, hw, b.ring), steps - 1, true});
      if (b.final_hop)
        rows.push_back({"collective-permute", pass, fmt::format("dK/dV home ({} B)", b.final_hop),
                        ring_step_seconds(w, hw, b.final_hop), 1, false});
    }
    auto one = [&](const char* op, std::string what, PassBytes only) {
      rows.push_back({op, pass, std::move(what), pass_collective_seconds(w, hw, only), 1, false});
    };
    if (b.a2a_in)
      one("all-to-all", fmt::format("in ({} B per device)", b.a2a_in), {0, 0, b.a2a_in});
    if (b.a2a_out)
      one("all-to-all", fmt::format("out ({} B per device)", b.a2a_out), {0, 0, 0, b.a2a_out});
    if (b.gather_block)
      one("all-gather", fmt::format("K/V ({} B per device, x {:.0f})", b.gather_block, n - 1),
          {0, 0, 0, 0, b.gather_block});
    if (b.scatter_block)
      one("reduce-scatter",
          fmt::format("dK/dV ({} B per device, x {:.0f})", b.scatter_block, n - 1),
          {0, 0, 0, 0, 0, b.scatter_block});
  }
  return rows;
}

// Whether the CP ring and the FSDP collectives cross the same link class
// (both inside the node on NVLink, or both on the NIC): then they share it.
bool cp_shares_fsdp_link(const Hardware& g, std::int64_t cp, std::int64_t fsdp) {
  if (cp <= 1) return false;
  if (g.platform != Platform::Nodes || g.bandwidth_override) return true;
  return (cp > g.gpus_per_node) == (fsdp > g.gpus_per_node);
}

// Which of a layer's linears to count: all, or those a remat policy re-runs.
struct LinearGroups {
  bool qkv = true, out_proj = true, mlp_in = true, mlp_out = true;
};

// One layer's linear GEMMs for `tokens` tokens on one TP GPU (models/kernel/
// gemm.hpp), forward or backward (input and weight gradients).
double linear_seconds(const ModelShape& s, std::int64_t tokens, std::int64_t tp, const Execution& e,
                      const GemmRates& rates, bool backward, LinearGroups on = {}) {
  std::vector<GemmShape> fwd;
  add_attention_gemms(fwd, s, tokens, tp, e.fused_qkv, on.qkv, on.out_proj);
  add_mlp_gemms(fwd, s, tokens, s.ffn / tp, e.fused_gate_up, on.mlp_in, on.mlp_out);
  return linears_seconds(fwd, rates, backward);
}

// A MoE model's dense-MLP layers (DeepSeek-V3's first three), as their mean
// over every layer like moe_layer_time's experts; 0 for other models.
double dense_mlp_seconds(const ModelShape& s, std::int64_t tokens, std::int64_t tp,
                         const Execution& e, const GemmRates& rates, bool backward) {
  if (!is_moe(s) || s.dense_layers == 0) return 0;
  std::vector<GemmShape> fwd;
  add_mlp_gemms(fwd, s, tokens, s.dense_ffn / tp, e.fused_gate_up);
  return linears_seconds(fwd, rates, backward) * s.dense_layers / s.layers;
}

// One layer's forward, part by part, per micro-step: what a recompute
// re-runs some share of.
struct LayerParts {
  double attention, linears, pointwise, fp8_casts, tp, cp_link, gaps, host;
};

// Megatron's and PyTorch's recompute: full re-runs the share fr of the
// layers' forward; selective what execution.hpp says the framework re-runs.
LayerParts recompute(const PlanRequest& r, const Execution& e, const LayerParts& f, double fr) {
  if (r.checkpointing == Checkpointing::Full)
    return {fr * f.attention, fr * f.linears, fr * f.pointwise, fr * f.fp8_casts,
            fr * f.tp,        fr * f.cp_link, fr * f.gaps,      fr * f.host};
  LayerParts re{};
  if (r.checkpointing != Checkpointing::Selective) return re;
  switch (e.selective) {
    case SelectiveRecompute::OpLevel:
      re.linears = 0.5 * f.linears;  // every other matmul, every pointwise op
      re.pointwise = f.pointwise;
      // TorchTitan's save list leaves cuDNN attention out: it runs again.
      if (!sac_saves_attention(r)) re.attention = f.attention;
      break;
    case SelectiveRecompute::CoreAttention:
      re.attention = f.attention;
      break;
    case SelectiveRecompute::Pointwise:
      re.pointwise = f.pointwise;
      break;
  }
  return re;
}

// A jax-xla remat policy (activations.hpp, jax_remat_recompute): the
// attention forward (with its ring) unless the context is saved, the linears
// it does not save, the pointwise ops, and the TP collectives of the re-run
// linears (an all-gather before Q/K/V and before the MLP, a reduce-scatter
// after the output projection: three of the pass's four).
template <typename Linears>
LayerParts jax_recompute(const PlanRequest& r, const LayerParts& f, Linears linears) {
  LayerParts re{};
  if (r.remat_policy.empty() && r.checkpointing == Checkpointing::None) return re;
  const auto p = jax_remat_recompute(r);
  if (p.attention) {
    re.attention = f.attention;
    re.cp_link = f.cp_link;
  }
  re.linears = linears({p.qkv, p.out_proj, p.mlp_in, false});
  re.pointwise = f.pointwise;
  re.tp = f.tp * ((p.qkv ? 1 : 0) + (p.out_proj ? 1 : 0) + (p.mlp_in ? 1 : 0)) / 4.0;
  // Kernel gaps and FP8 casts come with re-run linears (the old "full").
  const bool gemms = p.qkv || p.out_proj || p.mlp_in;
  re.gaps = gemms ? f.gaps : 0;
  re.fp8_casts = gemms ? f.fp8_casts : 0;
  return re;
}

// Members of the FSDP shard group (cp x dp ranks of one stage, TP innermost)
// that share one node: the CP ranks first, tp apart; without a pipeline the
// data-parallel ranks follow on the same nodes.
CollectiveGroup shard_group(const Hardware& hw, std::int64_t Z, std::int64_t cp, std::int64_t tp,
                            std::int64_t pp) {
  auto g = placed_group(hw, Z, tp);
  if (pp > 1) g.per_node = std::min(g.per_node, std::max<std::int64_t>(1, cp));
  return g;
}

}  // namespace

AttentionMemoScope::AttentionMemoScope() {
  if (t_attention_memo) return;
  t_attention_memo = std::make_unique<std::map<AttentionKey, double>>();
  owner_ = true;
}

AttentionMemoScope::~AttentionMemoScope() {
  if (owner_) t_attention_memo.reset();
}

namespace {

// Attention dropout (--attention-dropout) where the kernel writes the scores
// to HBM (KernelSpec scores "hbm", standard attention): one more op over the
// probabilities of the GPU's heads, each query's whole row of keys (the
// square Megatron's CoreAttention computes before its causal mask; under a
// CP ring every step's block, an upper bound where causal steps skip). It
// reads the probabilities and writes the output and a one-byte mask forward
// (2 + 2 + 1 B), reads the gradient and the mask and writes the gradient
// backward (the same 5 B), per layer and micro-step. A fused kernel draws
// the mask inside (not charged: the published curves run without dropout).
double attention_dropout_seconds(const PlanRequest& r, const Implementation& cm, double tokens,
                                 double tp, double hbm) {
  if (!(r.attention_dropout > 0) || !cm.scores_in_hbm()) return 0;
  const double scores = tokens * r.shape.heads / tp * static_cast<double>(r.context);
  return 5 * scores / hbm;
}

}  // namespace

PlanTime step_time(const PlanRequest& r, const Hardware& hw, const Implementation& cm,
                   const StepShape& sh, const std::optional<AttentionOverride>& attention) {
  const auto w = attention_workload(r, sh.layout, sh.cp, sh.tp, sh.ulysses_degree);
  const auto g = group_hardware(hw, sh.tp);
  const auto& e = execution(r);
  const auto cp = sh.cp, tp = sh.tp, micro_batch = sh.micro_batch;
  const auto& s = r.shape;
  const double L = s.layers, V = s.vocab;
  const double t = static_cast<double>(tp), m = static_cast<double>(micro_batch);
  const double k = static_cast<double>(sh.grad_accum);
  const double hbm = hw.hbm_achievable();
  const auto tokens_i = sh.block * micro_batch;  // per CP rank per micro-step (before tp)
  const double tokens = static_cast<double>(tokens_i);
  PlanTime T;

  // Attention: the analytic model for one sequence, all layers, x micro-batch.
  // Under chunked attention (Llama 4) the global layers attend to the whole
  // sequence and the others inside their chunk: causal documents of the
  // chunk's length, which the engines' packed-documents model times (the
  // ring still passes every block; a step that brings no pair skips its
  // compute).
  const auto chunks = attention_chunks(s, r.context);
  const double global = chunks.empty() ? L : global_attention_layers(s);
  double attn_fwd = 0, attn_fwdbwd = 0;
  if (attention) {
    attn_fwd = attention->fwd_layer_s * global;
    attn_fwdbwd = attention->fwdbwd_layer_s * global;
    T.engine = attention->engine;
  } else if (global > 0) {
    attn_fwdbwd = attention_time(w, g, cm) * global / L;
    auto wf = w;
    wf.pass = Pass::Fwd;
    attn_fwd = attention_time(wf, g, cm) * global / L;
  }
  if (!chunks.empty()) {
    T.chunked_layers = static_cast<int>(L - global);
    T.global_layers = static_cast<int>(global);
    T.attention_chunk = s.attention_chunk;
    auto wc = w;
    wc.documents = chunks;
    const double chunked = L - global;
    attn_fwdbwd += attention_time(wc, g, cm) * chunked / L;
    wc.pass = Pass::Fwd;
    attn_fwd += attention_time(wc, g, cm) * chunked / L;
  }
  const double drop = attention_dropout_seconds(r, cm, tokens, t, hbm);
  const double a_f = attn_fwd / L * m + drop, a_b = (attn_fwdbwd - attn_fwd) / L * m + drop;

  // Linears by shape (models/kernel/gemm.hpp): FP8 under --precision fp8, the
  // head in bf16 (precision.hpp).
  const auto bf16 = bf16_gemm_rates(hw);
  const auto lin =
      r.precision == Precision::FP8 ? fp8_gemm_rates(hw, r.fp8_flops, r.fp8_gemm_efficiency) : bf16;
  // A MoE layer's MLP is its experts (moe.hpp): their GEMMs join the
  // linears, their dispatch and combine all-to-alls sit on the layer's path.
  const auto moe = moe_layer_time(r, hw, tokens_i, tp, lin, e.fused_gate_up);
  const LinearGroups dense = is_moe(s) ? LinearGroups{true, true, false, false} : LinearGroups{};
  const double o_f = linear_seconds(s, tokens_i, tp, e, lin, false, dense) + moe.experts_f +
                     dense_mlp_seconds(s, tokens_i, tp, e, lin, false);
  const double o_b = linear_seconds(s, tokens_i, tp, e, lin, true, dense) + moe.experts_b +
                     dense_mlp_seconds(s, tokens_i, tp, e, lin, true);
  // The residual stream's ops (norms, residual adds) shard over the TP
  // group only under sequence parallelism; without it every rank runs them
  // whole, the rest still split by heads and MLP width.
  const double p_all = pointwise_fwd_bytes_per_token(s, e);
  const double res_b = residual_stream_bytes_per_token(s) + 2 * e.norm_extra * s.d_model;
  const double p_f = tp_rank_pointwise_bytes(p_all, res_b, t, r.sequence_parallel) * tokens / hbm;
  const double p_b = e.backward_traffic * p_f;
  const double gap_f = e.kernels_fwd * e.gap_s, gap_b = e.kernels_bwd * e.gap_s;
  const double host_f = e.kernels_fwd * e.dispatch_s, host_b = e.kernels_bwd * e.dispatch_s;

  // Sequence parallel (Korthikanti et al. sec. 4.2.2): 2 all-gathers + 2
  // reduce-scatters of the tokens x D activation per pass (without it, 2
  // all-reduces of the same bytes); exposed, or hidden behind the linears
  // when the framework overlaps them. A MoE layer runs
  // its attention's pair only (moe.hpp, sequence_parallel_share).
  const double tp_f =
      tp_pass_seconds(tokens_i, s.d_model, dtype_bytes(r.dtype), tp, hw, r.sequence_parallel) *
      sequence_parallel_share(s);
  const double tp_b = tp_f;
  // Megatron overlaps TP communication only under sequence parallelism
  // (arguments.py: "Tensor parallel communication/GEMM overlap can happen
  // only when sequence parallelism is enabled").
  const bool tp_overlap =
      r.tp_overlap < 0 ? e.tp_overlap && r.sequence_parallel : r.tp_overlap == 1;
  T.tp_where = tp <= 1 ? "no TP group"
               : hw.platform == Platform::Nodes && tp > hw.nvlink_group()
                   ? "across hosts on the NICs"
                   : "inside a node on " + hw.intra_name;

  const double r_f = cp_link_seconds(w, g, cm, false) * m;
  const double r_b = cp_link_seconds(w, g, cm, true) * m;

  // Data parallel: the shard group is the cp x dp ranks of one pipeline stage.
  // Inside one slice, and under HSDP inside one replica group.
  const std::int64_t reps = std::max<std::int64_t>(1, r.dp_replicate);
  const std::int64_t Z = r.gpus / r.slices / reps / tp / sh.pp;
  const auto zg = shard_group(hw, Z, cp, tp, sh.pp);
  auto gather = [&](double params, double bytes_per_param) {
    return collective_time(Collective::AllGather, params / t * bytes_per_param, zg, hw).seconds;
  };
  auto scatter = [&](double params) {
    return collective_time(Collective::ReduceScatter, params / t * e.grad_reduce_bytes, zg, hw)
        .seconds;
  };
  // Expert parallelism (moe.hpp): a device gathers, reduces and updates its
  // EP rank's experts only, over the ranks that hold the same ones.
  const double ep_elsewhere = experts_elsewhere(r, tp);
  const double lp = static_cast<double>(layer_params(s)) - ep_elsewhere;
  // FP8 all-gather (precision.hpp): linear weights travel as FP8.
  const double ag_layer = gather(lp, 2 * fsdp_allgather_fraction(r));
  const double rs_layer = scatter(lp);
  // FSDP under a pipeline (framework.hpp, fsdp_gathered_with_pp): a stage
  // gathers its parameters once per step and reduce-scatters its accumulated
  // gradients once, after the last microbatch, as the memory model holds them.
  const bool sharded = e.dp_comm == DataParallelComm::PerLayer && Z > 1;
  const bool once_per_step = sharded && sh.pp > 1 && framework_profile(r).fsdp_gathered_with_pp;
  const bool per_layer = sharded && !once_per_step;
  const double f_f = per_layer ? ag_layer : 0;
  const double f_b = per_layer ? (e.reshard_after_forward ? ag_layer : 0) + rs_layer : 0;
  // FP8 casts (precision.hpp): memory-bound, charged with the compute.
  const double c8_f = fp8_cast_seconds(r, hw, tokens, tp, Z, false);
  const double c8_b = fp8_cast_seconds(r, hw, tokens, tp, Z, true);
  const bool shared = cp_shares_fsdp_link(g, cp, zg.ranks);

  // Recomputation in backward (execution.hpp: what "selective" means where;
  // activations.hpp: what a jax-xla remat policy re-runs).
  const bool full = r.checkpointing == Checkpointing::Full;
  // --recompute-layers N: only N layers per stage and model chunk recompute
  // (Megatron's block method); the others keep their activations.
  const int stage_l = sh.stage_layers.empty()
                          ? s.layers
                          : *std::max_element(sh.stage_layers.begin(), sh.stage_layers.end());
  const double fr = full ? recompute_fraction(r, stage_l, sh.pp > 1 ? sh.pp_virtual : 1) : 0;
  const LayerParts fwd{a_f, o_f, p_f, c8_f, tp_f, r_f, gap_f, host_f};
  const auto R =
      framework_profile(r).saver == FrameworkProfile::Saver::JaxPolicy
          ? jax_recompute(r, fwd,
                          [&](LinearGroups on) {
                            const bool experts = on.mlp_in && is_moe(s);
                            on.mlp_in = on.mlp_in && !is_moe(s);
                            on.mlp_out = on.mlp_out && !is_moe(s);
                            return linear_seconds(s, tokens_i, tp, e, lin, false, on) +
                                   (experts ? moe.experts_f +
                                                  dense_mlp_seconds(s, tokens_i, tp, e, lin, false)
                                            : 0);
                          })
          : recompute(r, e, fwd, fr);
  const double re = R.attention + R.linears + R.pointwise + R.fp8_casts;

  // A layer's device work, its kernel gaps, and the host time to issue it:
  // the layer runs at the slower of device and host (the host runs ahead
  // while it can).
  // Full recompute re-runs the experts with their dispatch and combine.
  const double moe_re = fr * moe.a2a_f;
  // --ep-overlap: dispatch and combine run beside the other micro-batch's
  // compute (on the links below); otherwise on the layer's path.
  const double a2a_f = r.ep_overlap ? 0 : moe.a2a_f;
  const double a2a_b = r.ep_overlap ? 0 : moe.a2a_b + moe_re;
  const double dev_f = a_f + o_f + p_f + c8_f + gap_f + a2a_f;
  const double dev_b = a_b + o_b + p_b + c8_b + gap_b + re + R.gaps + a2a_b;
  const double run_f = std::max(dev_f, host_f), run_b = std::max(dev_b, host_b + R.host);
  // TP: exposed, or overlapped with the linears (their share of the GEMMs).
  const double tpb_total = tp_b + R.tp;
  const double tpx_f = tp_overlap ? std::max(0.0, tp_f - o_f) : tp_f;
  const double tpx_b =
      tp_overlap && e.tp_overlap_backward ? std::max(0.0, tpb_total - o_b) : tpb_total;
  // Overlapped communication (FSDP prefetch, a CP ring sharing its link, TP
  // under overlap) slows the compute it runs beside.
  const double link_f = f_f + (shared ? r_f : 0) + (moe.a2a_f - a2a_f);
  const double link_b = f_b + (shared ? r_b + R.cp_link : 0) + (moe.a2a_b + moe_re - a2a_b);
  const int sms = hw.sm_count;
  const double ov_f = link_f + (tp_overlap ? tp_f - tpx_f : 0);
  const double ov_b = link_b + tpb_total - tpx_b;
  const double slow_f = overlapped_compute(run_f, ov_f, sms, kCollectiveCtas);
  const double slow_b = overlapped_compute(run_b, ov_b, sms, kCollectiveCtas);
  const double layer_f = std::max(slow_f, link_f) + tpx_f;
  const double layer_b = std::max(slow_b, link_b) + tpx_b;

  // Output head + loss: the head's GEMMs by shape in bf16; the loss's fp32
  // passes over the logits at HBM (10 B forward, 14 B backward per logit).
  const double logits = tokens * V / t;
  const std::vector<GemmShape> head{{tokens_i, static_cast<std::int64_t>(V / t), s.d_model}};
  const double hc_f = linears_seconds(head, bf16, false) + 10 * logits / hbm;
  const double hc_b = linears_seconds(head, bf16, true) + 14 * logits / hbm;
  const double ep = static_cast<double>(embedding_params(s));
  // Gathered per micro-step only under per-layer sharding: the distributed
  // optimizer and FSDP under a pipeline move the embedding with the stage's
  // other parameters, once per step (below).
  const double ag_head = per_layer ? gather(ep, 2) : 0;
  const double rs_head = per_layer ? scatter(ep) : 0;
  const double head_f = std::max(hc_f, ag_head), head_b = std::max(hc_b, ag_head + rs_head);
  // Each micro-step opens with the embedding's and the first layer's
  // all-gathers and closes with the last reduce-scatters: nothing to hide them.
  const double edges = per_layer ? ag_head + rs_head + ag_layer + rs_layer : 0;

  const std::vector<int> layers =
      sh.stage_layers.empty() ? std::vector<int>{s.layers} : sh.stage_layers;
  const size_t P = layers.size();
  // The schedule (schedule.hpp) decides which device runs the head and the
  // embedding's edges, and how many layers a microbatch passes on each.
  const auto sched = sh.schedule;  // the effective one (PipelineChoice::effective, evaluate)
  const auto Pn = static_cast<std::int64_t>(P);
  auto at = [](size_t i) { return static_cast<std::int64_t>(i); };
  auto stage_s = [&](size_t i, bool compute) {
    double t_i = device_layers(sched, layers, at(i)) *
                 (compute ? dev_f + dev_b + tp_f + tpb_total : layer_f + layer_b);
    t_i += head_share(sched, Pn, at(i)) * (compute ? hc_f + hc_b : head_f + head_b);
    if (!compute) t_i += embedding_share(sched, Pn, at(i)) * edges;
    return t_i;
  };
  size_t slow = 0;
  for (size_t i = 1; i < P; ++i)
    if (stage_s(i, false) > stage_s(slow, false)) slow = i;
  // The slowest device's shares of the head and of the embedding's edges.
  const double last = head_share(sched, Pn, at(slow)), first = embedding_share(sched, Pn, at(slow));
  const double Ls = device_layers(sched, layers, at(slow));
  const double micro = stage_s(slow, false);
  T.attention_s = k * Ls * (a_f + a_b);
  T.attention_recompute_s = k * Ls * R.attention;
  T.other_compute_s = k * Ls * (o_f + o_b + R.linears);
  T.pointwise_s = k * Ls * (p_f + p_b + R.pointwise);
  T.fp8_cast_s = k * Ls * (c8_f + c8_b + R.fp8_casts);
  T.fp8_cast_how = fp8_cast_text(r);
  T.head_s = last * k * (hc_f + hc_b);
  T.tp_comm_s = k * Ls * (tp_f + tpb_total);
  T.ep_alltoall_s = k * Ls * (moe.a2a_f + moe.a2a_b + moe_re);
  T.etp_comm_s = k * Ls * (moe.etp_f * (1 + fr) + moe.etp_b);
  T.ep_alltoall_bytes = moe.a2a_bytes;
  T.moe_imbalance = moe.imbalance;
  T.ep_overlapped = r.ep_overlap;
  T.ep_flex = r.ep_flex;
  T.expert_compute_s = k * Ls * (moe.experts_f * (1 + fr) + moe.experts_b);
  T.tp_exposed_s = k * Ls * (tpx_f + tpx_b);
  T.fsdp_comm_s = k * (Ls * (f_f + f_b) + last * (2 * ag_head + rs_head) + first * edges);
  T.cp_link_s = k * Ls * (r_f + r_b + R.cp_link);
  T.launch_s = k * Ls * (gap_f + gap_b + R.gaps);
  T.host_bound_s = k * Ls * (run_f - dev_f + run_b - dev_b);
  T.interference_s = k * Ls * (slow_f - run_f + slow_b - run_b);
  T.edges_s = first * k * edges;
  T.fsdp_exposed_s =
      k * (Ls * (std::max(slow_f, link_f) - slow_f + std::max(slow_b, link_b) - slow_b) +
           first * edges + last * (head_f - hc_f + head_b - hc_b));
  T.micro_step_s = micro;
  T.cp_collectives = cp_collective_rows(w, g, cm);
  T.ring_bytes_per_step = w.devices > 1 ? pass_bytes(w, false, cm, g).ring : 0;
  T.cp_model = g.xla_collectives ? "xla-ici" : "links";

  // The distributed optimizer's once-per-step collectives over the same
  // group: the gradients reduce-scattered while the last microbatch's
  // backward runs, the parameters all-gathered during the first's forward.
  // (dualpipe: a device holds two stages, schedule.hpp device_params)
  double stage_n = 0, held_layers = Ls;
  for (size_t i = 0; i < P; ++i) {
    const double held = sched == PipelineSchedule::DualPipe && P > 1 && i != P - 1 - i
                            ? layers[i] + layers[P - 1 - i]
                            : layers[i];
    const double n = device_params(s, sched, layers, at(i)) - held * ep_elsewhere;
    if (n > stage_n) held_layers = held;
    stage_n = std::max(stage_n, n);
  }
  if (e.dp_comm == DataParallelComm::PerStep && Z > 1) {
    const double rs = scatter(stage_n), ag = gather(stage_n, 2);
    T.dp_step_comm_s = rs + ag;
    // --dp-overlap off: Megatron-LM before --overlap-grad-reduce and
    // --overlap-param-gather reduce-scatters after the backward and gathers
    // after the optimizer step, on the step's path.
    T.dp_step_exposed_s = r.dp_overlap
                              ? std::max(0.0, rs - Ls * layer_b) + std::max(0.0, ag - Ls * layer_f)
                              : rs + ag;
    T.fsdp_comm_s += T.dp_step_comm_s;
    T.fsdp_exposed_s += T.dp_step_exposed_s;
  } else if (once_per_step) {
    // FSDP2's prefetch hides all but the first layer's all-gather behind the
    // first microbatch's forward, and all but the last reduce-scatter behind
    // the last one's backward.
    const double lin = Ls * lp, rest = stage_n - lin;
    const double ag = gather(lin, 2 * fsdp_allgather_fraction(r)) + gather(rest, 2);
    const double rs = scatter(stage_n);
    const double fwd = Ls * layer_f, bwd = Ls * layer_b;
    T.dp_step_comm_s = rs + ag;
    T.edges_s = ag_layer + rs_layer;
    T.dp_step_exposed_s =
        T.edges_s + std::max(0.0, ag - ag_layer - fwd) + std::max(0.0, rs - rs_layer - bwd);
    T.fsdp_comm_s += T.dp_step_comm_s;
    T.fsdp_exposed_s += T.dp_step_exposed_s;
  }
  // Multi-slice (--slices): each chip's gradient shard is all-reduced across
  // the slices over the DCN once per step (a ring over S slices), XLA's async
  // collective overlapping it with the last micro-step's backward.
  if (r.slices > 1 && r.dcn_bandwidth_per_chip > 0) {
    const double S = static_cast<double>(r.slices);
    const double bytes = stage_n * e.grad_reduce_bytes / (t * static_cast<double>(Z));
    T.dcn_s = 2 * (S - 1) / S * bytes / r.dcn_bandwidth_per_chip + 2 * (S - 1) * r.dcn_latency;
    T.dcn_exposed_s = std::max(0.0, T.dcn_s - Ls * layer_b);
  }
  // HSDP (--dp-replicate R): the gradient shards are all-reduced across the R
  // replica groups once per step (FSDP2's replicate mesh dimension), the
  // groups Z x tp x pp ranks apart, overlapped with the last micro-step's
  // backward as FSDP2 runs it after each reduce-scatter.
  if (reps > 1) {
    const double bytes = stage_n * e.grad_reduce_bytes / (t * static_cast<double>(Z));
    const auto group = placed_group(hw, reps, Z * tp * sh.pp);
    T.hsdp_s = collective_time(Collective::AllReduce, bytes, group, hw).seconds;
    T.hsdp_exposed_s = std::max(0.0, T.hsdp_s - Ls * layer_b);
  }
  // The optimizer runs on every stage at once after the flush: the stage with
  // the most parameters, sharded over its gpus / pp devices.
  // (every parameter's optimizer state is sharded over all the stage's GPUs,
  // experts included: the EP rank's experts over the ranks holding them)
  const double stage_all = stage_n + held_layers * ep_elsewhere;
  T.optimizer_s =
      PlanConstants::kOptimizerTrafficBytes * stage_all / static_cast<double>(r.gpus / sh.pp) / hbm;
  // Pipeline schedule (Narayanan et al. 2021, arXiv 2104.04473, sec. 2.2):
  // m + (p-1)/V slots of the slowest stage's microbatch. P2P is not
  // overlapped with compute (Megatron's default: its 1F1B posts each send
  // and receive as a blocking batched P2P between computations), so every
  // slot also waits for the slowest stage's V forward activation and V
  // backward gradient messages.
  const auto pp = static_cast<std::int64_t>(P);
  const int vs = pp > 1 ? sh.pp_virtual : 1;  // virtual stages per device
  // The other schedules' bubbles (schedule.hpp) in the slowest stage's F, B
  // and W: W the linears' weight-gradient GEMMs, half their backward.
  const StageTimes ft{Ls * dev_f, Ls * dev_b, Ls * o_b / 2};
  const double bubble_slots = schedule_bubble_slots(sched, pp, vs, ft);
  const double slots = static_cast<double>(sh.grad_accum) + bubble_slots;
  const auto p2p = pipeline_p2p(r, hw, cp, tp, sh.block, micro_batch, pp);
  const double p2p_slot = pp > 1 ? 2.0 * schedule_chunks(sched, vs) * p2p.message_s : 0;
  T.pp_schedule = sched;
  T.pp_bubble_slots = bubble_slots;
  T.pp_bubble_s = bubble_slots * micro;
  T.pp_bubble_fraction = bubble_slots / slots;
  T.pp_p2p_s = slots * p2p_slot;
  T.pp_message_bytes = p2p.message_bytes;
  T.pp_message_s = p2p.message_s;
  T.pp_link = p2p.link;
  T.pp_slowest_stage = static_cast<std::int64_t>(slow);
  T.step_time_first_principles_s = slots * (micro + p2p_slot) + T.optimizer_s +
                                   T.dp_step_exposed_s + T.dcn_exposed_s + T.hsdp_exposed_s;
  T.calibration = r.calibration;
  T.step_time_s = T.step_time_first_principles_s * r.calibration;
  return T;
}

}  // namespace ringsim
