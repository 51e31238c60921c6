#include "models/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "models/analytic.hpp"
#include "models/errors.hpp"
#include "models/memory.hpp"
#include "models/parse.hpp"
#include "models/profile.hpp"
#include "models/work.hpp"

namespace ringsim {

const std::vector<std::string>& checkpointing_names() {
  static const std::vector<std::string> n{"none", "selective", "full"};
  return n;
}
const std::vector<std::string>& loss_names() {
  static const std::vector<std::string> n{"eager", "chunked"};
  return n;
}
std::string to_string(Checkpointing c) {
  return checkpointing_names()[static_cast<int>(c)];
}
std::string to_string(LossImpl l) {
  return loss_names()[static_cast<int>(l)];
}
Checkpointing parse_checkpointing(const std::string& flag, const std::string& s) {
  const auto v = parse_choice(flag, s, checkpointing_names());
  const auto& n = checkpointing_names();
  return static_cast<Checkpointing>(std::find(n.begin(), n.end(), v) - n.begin());
}
LossImpl parse_loss(const std::string& flag, const std::string& s) {
  return parse_choice(flag, s, loss_names()) == "eager" ? LossImpl::Eager : LossImpl::Chunked;
}

std::uint64_t layer_params(const ModelShape& s) {
  const std::uint64_t D = s.d_model, d = s.head_dim, H = s.heads, kvh = s.kv_heads, F = s.ffn;
  // Wq, Wk, Wv (D x d(H + 2 kvh)), Wo (Hd x D), SwiGLU W1, W3, W2 (3 D F), two RMSNorm gains.
  return D * d * (H + 2 * kvh) + H * d * D + 3 * D * F + 2 * D;
}

std::uint64_t embedding_params(const ModelShape& s) {
  return static_cast<std::uint64_t>(s.vocab) * static_cast<std::uint64_t>(s.d_model);
}

std::uint64_t total_params(const ModelShape& s) {
  // Layers + input embedding + untied output head + final norm.
  return static_cast<std::uint64_t>(s.layers) * layer_params(s) + 2 * embedding_params(s) +
         static_cast<std::uint64_t>(s.d_model);
}

double activation_bytes_per_token(const ModelShape& s, Checkpointing c) {
  const double D = s.d_model, d = s.head_dim, H = s.heads, kvh = s.kv_heads, F = s.ffn;
  const double qkv = 2 * d * (H + 2 * kvh);  // Q, K, V after RoPE, kept by flash attention
  const double out = 2 * H * d + 4 * H;      // attention output + fp32 LSE
  switch (c) {
    case Checkpointing::Full:
      // Only the layer input (Korthikanti et al. sec. 5: 2sbh per layer).
      return 2 * D;
    case Checkpointing::Selective:
      // Keep matmul and attention outputs and the two residual-stream tensors;
      // recompute norms, SiLU and the gate product (op-level selective
      // checkpointing as PyTorch's SAC policy does it).
      return 2 * D + qkv + out + 2 * D + 4 * F;
    case Checkpointing::None:
      break;
  }
  // Layer input 2D, norm1 output 2D, Q/K/V, O + LSE, residual 2D, norm2
  // output 2D, gate and up 4F, SiLU(gate) 2F, product 2F. With flash attention
  // Korthikanti's 5as/h term (scores, softmax, dropout mask) is never stored.
  return 8 * D + qkv + out + 8 * F;
}

double model_flops_per_token(const ModelShape& s, std::int64_t context, bool causal) {
  const double n_nonembed = static_cast<double>(total_params(s) - embedding_params(s));
  const double attn = 12.0 * s.layers * s.heads * s.head_dim * static_cast<double>(context);
  return 6 * n_nonembed + (causal ? attn / 2 : attn);
}

const PlanMemoryItem& PlanMemory::largest() const {
  static const PlanMemoryItem none{"none", 0, "", ""};
  if (items.empty()) return none;
  return *std::max_element(items.begin(), items.end(),
                           [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
}

std::string PlanConfig::label() const {
  std::string s = cp == 1 ? "no cp" : fmt::format("{} cp {}", to_string(layout), cp);
  if (layout == Layout::Hybrid && cp > 1)
    s += fmt::format(" (u{}xr{})", ulysses_degree, cp / std::max(1, ulysses_degree));
  if (tp > 1) s += fmt::format(" tp {}", tp);
  return s;
}

Hardware group_hardware(const Hardware& hw, std::int64_t tp) {
  Hardware g = hw;
  if (tp > 1) g.gpus_per_node = static_cast<int>(std::max<std::int64_t>(1, hw.gpus_per_node / tp));
  return g;
}

Workload attention_workload(const PlanRequest& r, const PlanConfig& c) {
  Workload w;
  w.devices = c.cp;
  w.block = c.block;
  w.layout = c.cp == 1 ? Layout::Ring : c.layout;
  w.causal = r.causal;
  w.pass = Pass::FwdBwd;
  w.dtype = r.dtype;
  w.shape = r.shape;
  w.shape.heads = r.shape.heads / static_cast<int>(c.tp);
  w.shape.kv_heads = r.shape.kv_heads / static_cast<int>(c.tp);
  w.shape.ffn = r.shape.ffn / static_cast<int>(c.tp);
  w.ulysses_degree = c.layout == Layout::Hybrid ? c.ulysses_degree : 0;
  w.layers = r.shape.layers;
  w.scope = Scope::Attention;
  w.batch = 1;
  return w;
}

namespace {

constexpr double kGB = 1e9;

std::string gb(double b) {
  return fmt::format("{:.2f} GB", b / kGB);
}

std::int64_t sequences_per_step(const PlanRequest& r, std::int64_t dp) {
  return r.global_batch_tokens > 0 ? r.global_batch_tokens / r.context : dp;
}

// Bytes per token per layer that the memory-bound ops move in the forward
// pass (bf16): two RMSNorms (read + write D each, 8D), RoPE on Q and K
// (4d(H + kvh)), two residual adds (12D), SwiGLU fused (read gate and up,
// write the product: 6F). A lower bound: eager PyTorch moves more.
double pointwise_bytes_per_token(const ModelShape& s) {
  const double D = s.d_model, d = s.head_dim, H = s.heads, kvh = s.kv_heads, F = s.ffn;
  return 20 * D + 4 * d * (H + kvh) + 6 * F;
}

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

// A shape rule that rejects the config before any memory or time; empty if it passes.
std::string shape_rule(const PlanRequest& r, const Hardware& hw, Layout layout, std::int64_t cp,
                       std::int64_t tp, int* ulysses) {
  const auto& s = r.shape;
  if (tp < 1 || r.gpus % tp != 0)
    return fmt::format("tp {} does not divide {} devices", tp, r.gpus);
  if (s.heads % tp || s.kv_heads % tp || s.ffn % tp)
    return fmt::format("tp {} must divide the heads ({}), KV heads ({}) and FFN ({})", tp, s.heads,
                       s.kv_heads, s.ffn);
  if ((r.gpus / tp) % cp != 0)
    return fmt::format("cp {} x tp {} does not divide {} devices", cp, tp, r.gpus);
  if (r.context % cp != 0)
    return fmt::format("context {} is not divisible by cp {}", r.context, cp);
  const auto block = r.context / cp;
  const auto kvh = s.kv_heads / tp;
  if (cp > 1) {
    switch (layout) {
      case Layout::Zigzag:
      case Layout::Allgather:
        if (block % 2)
          return fmt::format("{} needs an even block (context / cp), got {}", to_string(layout),
                             block);
        break;
      case Layout::Ulysses:
        if (kvh % cp)
          return fmt::format(
              "ulysses degree {} must divide the {} KV heads per tensor-parallel rank", cp, kvh);
        break;
      case Layout::Hybrid: {
        const auto g = group_hardware(hw, tp);
        *ulysses = auto_ulysses_degree(cp, static_cast<int>(kvh), g.gpus_per_node);
        if (*ulysses <= 1 || *ulysses >= cp)
          return fmt::format(
              "hybrid's Ulysses degree would be {} (the same as {}); it needs 1 < U < cp", *ulysses,
              *ulysses <= 1 ? "zigzag" : "ulysses");
        if ((block * *ulysses) % 2) return "hybrid needs an even group block";
        break;
      }
      default:
        break;
    }
  }
  const auto dp = r.gpus / (tp * cp);
  const auto seqs = sequences_per_step(r, dp);
  if (seqs % dp != 0)
    return fmt::format(
        "a global batch of {} sequences does not split over {} data-parallel replicas", seqs, dp);
  return {};
}

}  // namespace

PlanMemory training_memory(const PlanRequest& r, const Hardware& hw, Layout layout, std::int64_t cp,
                           std::int64_t tp, std::int64_t micro_batch) {
  const auto& s = r.shape;
  const double L = s.layers, D = s.d_model, F = s.ffn, V = s.vocab;
  const double t = static_cast<double>(tp), G = static_cast<double>(r.gpus);
  const double N = static_cast<double>(total_params(s));
  const double c = static_cast<double>(r.context / cp) * static_cast<double>(micro_batch);
  const double ct = c / t;  // sequence parallel: norms and residuals shard by tp too
  const double unit = static_cast<double>(std::max(layer_params(s), embedding_params(s))) / t;
  PlanMemory m;
  auto add = [&](std::string name, double bytes, const char* phase, std::string formula) {
    m.items.push_back({std::move(name), bytes, phase, std::move(formula)});
  };
  add("params_bf16", PlanConstants::kParamBytes * N / G, "persistent",
      "2 B x params / devices (ZeRO-3)");
  add("grads_bf16", PlanConstants::kGradBytes * N / G, "persistent",
      "2 B x params / devices (ZeRO-3)");
  add("optimizer_fp32_master_m_v", PlanConstants::kOptimizerBytes * N / G, "persistent",
      "12 B x params / devices (fp32 master, Adam m, v)");
  add("fsdp_gathered_params", 2 * 2 * unit, "persistent",
      "2 units (current + prefetched) x largest unit / tp x 2 B");
  add("fsdp_unsharded_grads", 2 * unit, "persistent",
      "1 unit x largest unit / tp x 2 B, before reduce-scatter");
  const double act = activation_bytes_per_token(s, r.checkpointing);
  add(r.checkpointing == Checkpointing::Full ? "activations_layer_inputs" : "activations_saved",
      L * act * ct, "persistent",
      fmt::format("layers x {:.0f} B/token x tokens / tp ({} checkpointing)", act,
                  to_string(r.checkpointing)));
  const double loss_tokens =
      r.loss == LossImpl::Eager ? c : std::min<double>(c, PlanConstants::kLossChunkTokens);
  add("logits_and_loss_fp32", PlanConstants::kLossBytesPerLogit * loss_tokens * V / t, "loss",
      r.loss == LossImpl::Eager ? "12 B x tokens x vocab / tp (fp32 cross-entropy on upcast logits)"
                                : "12 B x 4096-token chunk x vocab / tp (chunked loss)");
  const double none = activation_bytes_per_token(s, Checkpointing::None);
  const double recomputed = none - act;  // 0 without checkpointing
  if (recomputed > 0)
    add("recomputed_layer_activations", recomputed * ct, "layer_backward",
        fmt::format("{:.0f} B/token x tokens / tp (one layer, recomputed for its backward)",
                    recomputed));
  add("residual_grad", 2 * D * ct, "layer_backward", "2D B/token x tokens / tp");
  PlanConfig pc;
  pc.layout = layout;
  pc.cp = cp;
  pc.tp = tp;
  pc.block = r.context / cp;
  if (layout == Layout::Hybrid && cp > 1) {
    const auto g = group_hardware(hw, tp);
    pc.ulysses_degree = auto_ulysses_degree(cp, s.kv_heads / static_cast<int>(tp), g.gpus_per_node);
  }
  auto w = attention_workload(r, pc);
  w.batch = micro_batch;
  const double attn = static_cast<double>(attention_memory(w).total());
  const double mlp_grads = 6 * F * ct;
  // Attention's and the MLP's backward do not run at once: the larger counts.
  if (attn >= mlp_grads)
    add("attention_buffers", attn, "layer_backward",
        "models/memory.hpp attention_memory (fwd+bwd, one layer)");
  else
    add("mlp_grads", mlp_grads, "layer_backward",
        "6F B/token x tokens / tp (gate, up, product grads)");

  for (const auto& i : m.items) {
    if (i.phase == std::string("persistent")) m.persistent += i.bytes;
    if (i.phase == std::string("loss")) m.loss_phase += i.bytes;
    if (i.phase == std::string("layer_backward")) m.backward_phase += i.bytes;
  }
  const double tensors = m.persistent + std::max(m.loss_phase, m.backward_phase);
  m.peak_phase = m.loss_phase >= m.backward_phase ? "loss" : "layer_backward";
  add("framework_fixed", PlanConstants::kFixedOverheadBytes, "overhead",
      "1.5 GiB: CUDA context, cuBLAS workspaces, NCCL buffers");
  add("allocator_fragmentation", PlanConstants::kFragmentation * tensors, "overhead",
      "5% of the tensors' peak (caching allocator)");
  m.overhead = PlanConstants::kFixedOverheadBytes + PlanConstants::kFragmentation * tensors;
  m.total = tensors + m.overhead;
  return m;
}

PlanConfig evaluate(const PlanRequest& r, const Hardware& hw, const ComputeModel& cm, Layout layout,
                    std::int64_t cp, std::int64_t tp, std::int64_t micro_batch,
                    const std::optional<AttentionOverride>& attention, bool memory_only) {
  PlanConfig c;
  c.layout = cp == 1 ? Layout::Ring : layout;
  c.cp = cp;
  c.tp = tp;
  c.micro_batch = micro_batch;
  int ulysses = 0;
  c.reason = shape_rule(r, hw, c.layout, cp, tp, &ulysses);
  c.ulysses_degree = ulysses;
  if (!c.reason.empty()) return c;
  c.dp = r.gpus / (tp * cp);
  c.block = r.context / cp;
  const auto seqs = sequences_per_step(r, c.dp);
  const auto per_replica = seqs / c.dp;
  if (per_replica % micro_batch != 0) {
    c.reason = fmt::format("micro-batch {} does not divide the {} sequences per replica",
                           micro_batch, per_replica);
    return c;
  }
  c.grad_accum = per_replica / micro_batch;
  const auto w = attention_workload(r, c);
  const auto g = group_hardware(hw, tp);
  try {
    validate(w, g);
  } catch (const InputError& e) {
    c.reason = e.what();
    return c;
  }
  c.evaluated = true;
  c.memory = training_memory(r, hw, c.layout, cp, tp, micro_batch);
  const double hbm = r.hbm_bytes > 0 ? r.hbm_bytes : hw.hbm_bytes;
  c.overflow_bytes = c.memory.total - hbm;
  if (c.overflow_bytes > 0) {
    const auto& big = c.memory.largest();
    c.reason =
        fmt::format("needs {} > {} HBM (over by {}); largest term: {} ({}, {})", gb(c.memory.total),
                    gb(hbm), gb(c.overflow_bytes), big.name, gb(big.bytes),
                    big.phase == "persistent" ? "held throughout" : "at the " + big.phase);
    if (big.name == "logits_and_loss_fp32" && r.loss == LossImpl::Eager)
      c.reason += "; --loss chunked keeps 4096 tokens of logits at a time";
  } else {
    c.feasible = true;
  }
  if (memory_only || !c.feasible) return c;

  // --- Step time -----------------------------------------------------------
  const auto& s = r.shape;
  const double L = s.layers, D = s.d_model, V = s.vocab;
  const double t = static_cast<double>(tp), m = static_cast<double>(micro_batch);
  const double k = static_cast<double>(c.grad_accum);
  const double eff = hw.effective_flops();
  const double tokens = static_cast<double>(c.block) * m;  // per device per micro-step (before tp)
  PlanTime& T = c.time;

  // Attention: the analytic model for one sequence, all layers, x micro-batch.
  double attn_fwd = 0, attn_fwdbwd = 0;
  if (attention) {
    attn_fwd = attention->fwd_layer_s * L;
    attn_fwdbwd = attention->fwdbwd_layer_s * L;
    T.engine = attention->engine;
  } else {
    try {
      attn_fwdbwd = analyze(w, g, cm).time_s;
      auto wf = w;
      wf.pass = Pass::Fwd;
      attn_fwd = analyze(wf, g, cm).time_s;
    } catch (const InputError& e) {
      // A measured profile does not cover this block: no time, said why.
      c.feasible = false;
      c.reason = std::string("fits, but no step time: ") + e.what();
      return c;
    }
  }
  const double a_f = attn_fwd / L * m, a_b = (attn_fwdbwd - attn_fwd) / L * m;

  auto wt = w;  // the rest of the layer sees all micro-batch tokens
  wt.block = c.block * micro_batch;
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

  const double G = static_cast<double>(r.gpus);
  c.tokens_per_step =
      static_cast<double>(sequences_per_step(r, c.dp)) * static_cast<double>(r.context);
  c.tokens_per_s_per_gpu = c.tokens_per_step / (T.step_time_s * G);
  c.model_flops_per_step = c.tokens_per_step * model_flops_per_token(s, r.context, r.causal);
  c.mfu = c.model_flops_per_step / (T.step_time_s * hw.flops * G);
  c.mfu_palm = c.tokens_per_step * model_flops_per_token(s, r.context, false) /
               (T.step_time_s * hw.flops * G);
  return c;
}

namespace {

std::vector<std::int64_t> auto_cp(std::int64_t gpus_per_tp) {
  std::vector<std::int64_t> out;
  for (std::int64_t p = 1; p <= std::min(gpus_per_tp, kMaxAutoCp); p *= 2)
    if (gpus_per_tp % p == 0) out.push_back(p);
  return out;
}

void check_request(const PlanRequest& r) {
  if (r.context < 1) throw InputError("--context: must be at least 1 token");
  if (r.gpus < 1) throw InputError("--gpus: must be at least 1");
  if (r.global_batch_tokens > 0 && r.global_batch_tokens % r.context != 0)
    throw InputError(
        fmt::format("--global-batch-tokens: must be a multiple of --context ({}), got {}",
                    r.context, r.global_batch_tokens));
  for (auto cp : r.cp_degrees)
    if (cp < 1 || r.gpus % cp != 0)
      throw InputError(fmt::format("--cp: must divide --gpus ({}), got {}", r.gpus, cp));
  for (auto tp : r.tp_degrees)
    if (tp < 1 || r.gpus % tp != 0)
      throw InputError(fmt::format("--tp: must divide --gpus ({}), got {}", r.gpus, tp));
}

struct Candidate {
  Layout layout;
  std::int64_t cp, tp;
};

std::vector<Candidate> candidates(const PlanRequest& r, const Hardware& hw, bool* any) {
  std::vector<Candidate> out;
  const auto& all = layout_names();
  for (int tp : r.tp_degrees) {
    const auto cps = r.cp_degrees.empty() ? auto_cp(r.gpus / tp) : r.cp_degrees;
    for (auto cp : cps) {
      if (cp == 1) {
        out.push_back({Layout::Ring, 1, tp});
        continue;
      }
      for (size_t i = 0; i < all.size(); ++i) {
        const auto l = static_cast<Layout>(i);
        if (!r.layouts.empty() &&
            std::find(r.layouts.begin(), r.layouts.end(), l) == r.layouts.end())
          continue;
        // Automatic search: hybrid only where it differs from zigzag and ulysses.
        if (r.layouts.empty() && l == Layout::Hybrid) {
          int u = 0;
          if (!shape_rule(r, hw, l, cp, tp, &u).empty() && (u <= 1 || u >= cp)) continue;
        }
        out.push_back({l, cp, tp});
      }
    }
  }
  *any = !out.empty();
  return out;
}

}  // namespace

std::vector<PlanConfig> search(const PlanRequest& r, const Hardware& hw, const ComputeModel& cm) {
  check_request(r);
  bool any = false;
  const auto cands = candidates(r, hw, &any);
  std::vector<PlanConfig> out;
  for (const auto& cd : cands) {
    const auto dp = r.gpus % (cd.tp * cd.cp) == 0 ? r.gpus / (cd.tp * cd.cp) : 1;
    const auto seqs = sequences_per_step(r, dp);
    const auto per_replica = seqs % dp == 0 ? seqs / dp : 1;
    // Micro-batch: powers of two dividing the sequences per replica, and all of them.
    std::vector<std::int64_t> mbs;
    for (std::int64_t m = 1; m <= per_replica; m *= 2)
      if (per_replica % m == 0) mbs.push_back(m);
    if (mbs.back() != per_replica) mbs.push_back(per_replica);
    std::optional<PlanConfig> best;
    for (auto m : mbs) {
      auto c = evaluate(r, hw, cm, cd.layout, cd.cp, cd.tp, m);
      if (!best ||
          (c.feasible && (!best->feasible || c.tokens_per_s_per_gpu > best->tokens_per_s_per_gpu)))
        best = std::move(c);
      if (!best->feasible && !best->evaluated) break;  // a shape rule: every micro-batch fails
    }
    out.push_back(std::move(*best));
  }
  std::stable_sort(out.begin(), out.end(), [](const PlanConfig& a, const PlanConfig& b) {
    if (a.feasible != b.feasible) return a.feasible;
    if (a.feasible) {
      if (a.tokens_per_s_per_gpu != b.tokens_per_s_per_gpu)
        return a.tokens_per_s_per_gpu > b.tokens_per_s_per_gpu;
      return a.memory.total < b.memory.total;
    }
    if (a.evaluated != b.evaluated) return a.evaluated;
    return a.overflow_bytes < b.overflow_bytes;
  });
  return out;
}

MaxContext max_context(const PlanRequest& req, const Hardware& hw, std::int64_t limit) {
  PlanRequest r = req;
  r.global_batch_tokens = 0;
  r.context = 1;
  check_request(r);
  bool any = false;
  const double hbm = r.hbm_bytes > 0 ? r.hbm_bytes : hw.hbm_bytes;
  MaxContext out;
  for (const auto& cd : candidates(r, hw, &any)) {
    const std::int64_t q = std::lcm<std::int64_t>(1024, 2 * cd.cp);
    out.granularity = std::max(out.granularity, q);
    auto fits = [&](std::int64_t units) {
      r.context = units * q;
      int u = 0;
      if (!shape_rule(r, hw, cd.layout, cd.cp, cd.tp, &u).empty()) return false;
      return training_memory(r, hw, cd.layout, cd.cp, cd.tp, 1).total <= hbm;
    };
    MaxContextEntry e{cd.cp == 1 ? Layout::Ring : cd.layout, cd.cp, cd.tp, 0, q, "", ""};
    PlanConfig shown;
    shown.layout = e.layout;
    shown.cp = cd.cp;
    shown.tp = cd.tp;
    if (cd.layout == Layout::Hybrid && cd.cp > 1)
      shown.ulysses_degree = auto_ulysses_degree(cd.cp, r.shape.kv_heads / static_cast<int>(cd.tp),
                                                 group_hardware(hw, cd.tp).gpus_per_node);
    e.label = shown.label();
    const std::int64_t max_units = limit / q;
    std::int64_t lo = 0, hi = 1;
    while (hi <= max_units && fits(hi)) {
      lo = hi;
      hi *= 2;
    }
    hi = std::min(hi, max_units + 1);
    while (lo + 1 < hi) {
      const auto mid = lo + (hi - lo) / 2;
      (fits(mid) ? lo : hi) = mid;
    }
    e.max_context = lo * q;
    if (lo < max_units) {
      r.context = (lo + 1) * q;
      int u = 0;
      const auto rule = shape_rule(r, hw, cd.layout, cd.cp, cd.tp, &u);
      e.limited_by =
          !rule.empty() ? rule : training_memory(r, hw, cd.layout, cd.cp, cd.tp, 1).largest().name;
    } else {
      e.limited_by = fmt::format("the search limit ({} tokens)", limit);
    }
    out.tokens = std::max(out.tokens, e.max_context);
    out.by_config.push_back(e);
  }
  std::stable_sort(out.by_config.begin(), out.by_config.end(),
                   [](const auto& a, const auto& b) { return a.max_context > b.max_context; });
  return out;
}

}  // namespace ringsim
