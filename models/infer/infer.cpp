#include "models/infer/infer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/analytic/analytic.hpp"
#include "models/analytic/collectives.hpp"
#include "models/analytic/moe.hpp"
#include "models/core/calls.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/infer/size_guard.hpp"
#include "models/kernel/gemm.hpp"
#include "models/kernel/implementation.hpp"
#include "models/plan/basics.hpp"
#include "models/plan/execution.hpp"
#include "models/plan/moe.hpp"
#include "models/plan/runtime_memory.hpp"

namespace ringsim {

namespace {

// KV heads on one GPU: the model's split over TP, or one replicated head when
// TP is wider than the KV heads (Megatron-LM and vLLM replicate them).
int local_kv_heads(const InferRequest& r) {
  return static_cast<int>(std::max<std::int64_t>(1, r.shape.kv_heads / r.tp));
}
int local_heads(const InferRequest& r) {
  return static_cast<int>(r.shape.heads / r.tp);
}

}  // namespace

InferDims infer_dims(const ModelShape& s, bool decode) {
  InferDims d;
  d.query_dim = d.out_dim = s.head_dim;
  if (!is_mla(s)) return d;
  d.latent = true;
  if (decode) {
    // Absorbed (MQA) form: a query of kv_lora_rank + rope dimensions against
    // the one latent entry per token, values its first kv_lora_rank.
    d.query_dim = s.kv_lora_rank + s.qk_rope_head_dim;
    d.out_dim = s.kv_lora_rank;
  } else {
    // Up-projected (MHA) form: each head's query and key of qk_head_dim, value v_head_dim.
    d.query_dim = s.qk_head_dim;
    d.out_dim = s.v_head_dim;
  }
  return d;
}

double decode_kv_elements_per_token(const ModelShape& s, std::int64_t tp) {
  if (is_mla(s)) return s.kv_lora_rank + s.qk_rope_head_dim;  // every TP rank holds it whole
  return 2.0 * std::max<std::int64_t>(1, s.kv_heads / tp) * s.head_dim;
}

double decode_flops_per_pair(const ModelShape& s) {
  if (is_mla(s)) return 2.0 * (s.kv_lora_rank + s.qk_rope_head_dim) + 2.0 * s.kv_lora_rank;
  return 4.0 * s.head_dim;
}

namespace {

// `chunked`: a chunked-attention layer (Llama 4's iRoPE layers): the
// chunks lie over the absolute positions as packed documents do, each token
// attending causally inside its own (models/core/infer_work.hpp, documents).
InferWork attention_work(const InferRequest& r, InferVariant v, bool decode, bool chunked = false) {
  InferWork w;
  w.ranks = r.cp;
  w.layout = r.layout;
  w.variant = v;
  w.heads = local_heads(r);
  w.kv_heads = local_kv_heads(r);
  w.head_dim = r.shape.head_dim;
  w.causal = true;
  if (decode) {
    w.mode = InferMode::Decode;
    w.cached = r.context;  // the whole prompt is in the cache; one new token per sequence
    w.fresh = 1;
  } else {
    w.mode = InferMode::Prefill;
    w.cached = r.cached;
    w.fresh = r.context - r.cached;
  }
  if (chunked) w.documents = attention_chunks(r.shape, w.context());
  return w;
}

// The projections and MLP of `tokens` tokens on one GPU, each GEMM by its
// shape (models/kernel/gemm.hpp: tile and wave quantisation, and the weight
// read that bounds a decode's few rows): Q/K/V and gate/up fused, as serving
// stacks run them; the MLP at the FP8 rate with --precision fp8. A MoE
// model's MLP is its experts (models/infer/moe.hpp), averaged over the layers
// with any dense first layers; `moe` receives one MoE layer's experts.
// `cached_rows`: cached tokens on this rank whose MLA latents a prefill
// up-projects; `decode`: the tokens are a decode step's (the same on every
// CP rank).
double dense_seconds(const InferRequest& r, const Hardware& hw, double tokens, InferMoe* moe,
                     bool decode, std::int64_t cached_rows = 0) {
  const auto& sh = r.shape;
  const std::int64_t M = std::max<std::int64_t>(1, static_cast<std::int64_t>(tokens));
  const std::int64_t D = sh.d_model, d = sh.head_dim;
  const std::int64_t q = local_heads(r) * d, kv = local_kv_heads(r) * d;
  const auto bf16 = bf16_gemm_rates(hw);
  const auto mlp = r.fp8_mlp ? fp8_gemm_rates(hw, r.fp8_flops, r.fp8_gemm_efficiency) : bf16;
  double attn = 0;
  if (is_mla(sh)) {
    // Multi-head latent attention's projections as Megatron-Core and the
    // serving stacks split them (models/analytic/moe.hpp add_mla_gemms); a
    // decode's absorbed form reads the same weights, and reading them bounds it.
    std::vector<GemmShape> g;
    add_mla_gemms(g, sh, M, r.tp, true, true);
    for (const auto& x : g) attn += gemm_time(x, bf16).seconds;
    // An up-projected (MHA-form) prefill first up-projects the cached
    // tokens' latents on this rank to per-head K and V.
    if (cached_rows > 0)
      attn += gemm_time({cached_rows,
                         local_heads(r) * (sh.qk_head_dim - sh.qk_rope_head_dim + sh.v_head_dim),
                         sh.kv_lora_rank},
                        bf16)
                  .seconds;
  } else {
    attn = gemm_time({M, q + 2 * kv, D}, bf16).seconds + gemm_time({M, D, q}, bf16).seconds;
  }
  auto dense_mlp = [&](std::int64_t width) {
    const std::int64_t f = width / r.tp;
    return gemm_time({M, mlp_up_matrices(sh) * f, D}, mlp).seconds +
           gemm_time({M, D, f}, mlp).seconds;
  };
  if (!is_moe(sh)) return attn + dense_mlp(sh.ffn);
  const auto m = infer_moe_mlp(r, hw, M, mlp, bf16, decode);
  const double L = sh.layers, Lm = moe_layers(sh);
  const double mean = (Lm * m.seconds + (L - Lm) * (Lm < L ? dense_mlp(sh.dense_ffn) : 0)) / L;
  *moe = m;
  return attn + mean;
}

// The share of a model's layers whose MLP is its experts (a layer here is
// their mean, as dense_seconds averages them).
double moe_share(const ModelShape& s) {
  return s.layers > 0 ? static_cast<double>(moe_layers(s)) / s.layers : 0;
}

// A MoE model's routed experts' weights, every layer.
double routed_expert_params(const ModelShape& s) {
  return static_cast<double>(moe_layers(s)) * s.experts * mlp_matrices(s) * s.d_model *
         s.expert_ffn;
}

// A model's MLP weights (every expert, shared and dense MLP included):
// what --precision fp8 stores at one byte.
double mlp_params(const ModelShape& s) {
  const double D = s.d_model, L = s.layers, mats = mlp_matrices(s);
  if (!is_moe(s)) return mats * D * s.ffn * L;
  const double Lm = moe_layers(s);
  return Lm * (s.experts + s.shared_experts) * mats * D * s.expert_ffn +
         (L - Lm) * mats * D * s.dense_ffn;
}

// Merging one partial output of `rows` (query, head) rows into the running
// one: the implementation's forward ops on the output that a ring step after
// the first runs (models/data/kernels.json, by the bytes they move at HBM
// bandwidth), plus the compute model's measured merge when it has one.
double merge_seconds(const Implementation& im, const Hardware& hw, std::uint64_t rows,
                     std::int64_t block, int d) {
  double t = im.rates().merge_seconds(rows, block, d);
  if (hw.hbm_bandwidth <= 0) return t;
  for (const auto& op : im.ops()) {
    if (op.pass == "bwd" || (op.when != "after_first" && op.when != "step")) continue;
    if (op.per != "call_q_elems" && op.per != "call_q_rows") continue;  // not the output's
    const double units =
        op.per == "call_q_elems" ? static_cast<double>(rows) * d : static_cast<double>(rows);
    t += op.bytes * units / hw.hbm_bandwidth;
  }
  return t;
}

// How --ep splits a model's experts.
void check_moe(const InferRequest& r) {
  const auto& s = r.shape;
  if (r.ep < 1) throw InputError(fmt::format("--ep: must be at least 1, got {}", r.ep));
  if (!is_moe(s)) {
    if (r.ep != 1) throw InputError(not_moe_message("--ep", s));
    return;
  }
  // Inside the TP group (every GPU of it holds every token), or across the
  // TP groups of neighbouring CP ranks (moe.hpp).
  const bool inside = r.tp % r.ep == 0;
  const bool across = r.ep > r.tp && r.ep % r.tp == 0 && r.cp % (r.ep / r.tp) == 0;
  if (!inside && !across)
    throw InputError(fmt::format(
        "--ep: expert parallelism runs inside the TP group (--ep dividing --tp {}) or across CP "
        "ranks (--tp times a divisor of --cp {}), got {}",
        r.tp, r.cp, r.ep));
  if (s.experts % r.ep != 0)
    throw InputError(
        fmt::format("--ep: must divide the model's {} experts, got {}", s.experts, r.ep));
  const auto etp = expert_tp(r);
  if (s.expert_ffn % etp != 0)
    throw InputError(fmt::format(
        "--tp: the {} GPUs that share each expert (--tp / --ep) must divide its width {}, got "
        "--tp {}",
        etp, s.expert_ffn, r.tp));
  if ((s.shared_experts * s.expert_ffn) % r.tp != 0 || (s.dense_layers > 0 && s.dense_ffn % r.tp))
    throw InputError(fmt::format(
        "--tp: must divide the model's shared-expert and dense MLP widths ({} and {}), got {}",
        s.shared_experts * s.expert_ffn, s.dense_ffn, r.tp));
}

}  // namespace

void check_request(const InferRequest& r) {
  const auto& s = r.shape;
  if (r.gpus < 1) throw InputError(fmt::format("--gpus: must be at least 1, got {}", r.gpus));
  if (r.tp < 1 || r.cp < 1) throw InputError("--tp/--cp: must be at least 1");
  if (r.tp * r.cp != r.gpus)
    throw InputError(
        fmt::format("--gpus: one model replica spans --tp x --cp = {} x {} = {} GPUs, got {}", r.tp,
                    r.cp, r.tp * r.cp, r.gpus));
  if (s.heads % r.tp != 0)
    throw InputError(
        fmt::format("--tp: must divide the model's {} query heads, got {}", s.heads, r.tp));
  if (s.kv_heads % r.tp != 0 && r.tp % s.kv_heads != 0)
    throw InputError(
        fmt::format("--tp: must divide the model's {} KV heads or be a multiple of them (KV heads "
                    "replicated), got {}",
                    s.kv_heads, r.tp));
  if (!is_moe(s) && s.ffn % r.tp != 0)
    throw InputError(
        fmt::format("--tp: must divide the model's MLP width {}, got {}", s.ffn, r.tp));
  check_moe(r);
  if (r.context < 1) throw InputError("--context: must be at least 1 token");
  if (r.cached < 0 || r.cached >= r.context)
    throw InputError(fmt::format(
        "--cached: tokens already in the KV cache must be at least 0 and below --context ({}), "
        "got {}",
        r.context, r.cached));
  if (r.batch < 1) throw InputError("--batch: must be at least 1");
  if (r.decode_tokens < 0) throw InputError("--decode-tokens: must be at least 0");
  // The KV cache grows to the context plus every decoded token.
  if (r.decode_tokens > kMaxTokens - r.context)
    throw InputError(fmt::format(
        "--decode-tokens: the context and the decoded tokens must total at most 2^40 tokens, got "
        "{} + {}",
        r.context, r.decode_tokens));
  check_infer(attention_work(r, InferVariant::PassKv, false), "--context", "--cached");
  check_infer(attention_work(r, InferVariant::PassKv, true), "--context", "--context");
  if (chunked_attention_layers(r.shape) > 0) {
    check_infer(attention_work(r, InferVariant::PassKv, false, true), "--context", "--cached");
    check_infer(attention_work(r, InferVariant::PassKv, true, true), "--context", "--context");
  }
}

namespace {
// One TP rank's memory-bound bytes per token: an inference TP group
// all-reduces without sequence parallelism, so every rank runs the residual
// stream's norms and residual adds whole.
double rank_pointwise_bytes(const ModelShape& s, std::int64_t tp) {
  return tp_rank_pointwise_bytes(pointwise_bytes_per_token(s), residual_stream_bytes_per_token(s),
                                 static_cast<double>(tp), false);
}
}  // namespace

double tp_allreduce_seconds(std::uint64_t bytes, std::int64_t tp, const Hardware& hw) {
  if (tp <= 1 || bytes == 0) return 0;
  return collective_time(Collective::AllReduce, static_cast<double>(bytes), placed_group(hw, tp),
                         hw)
      .seconds;
}

double head_seconds(const InferRequest& r, const Hardware& hw, std::int64_t tokens) {
  const double D = r.shape.d_model, V = r.shape.vocab, t = static_cast<double>(r.tp);
  const double flops = 2 * D * V / t * static_cast<double>(tokens);
  const double weights = D * V / t * dtype_bytes(r.dtype);
  return std::max(flops / hw.gemm_flops(), weights / hw.hbm_achievable());
}

namespace {

// The layer's TP all-reduce time and its kernels' fixed costs: a device gap
// per kernel, and the host's dispatch where it is slower than the device's
// work (a prefill of a few tokens; decode without CUDA graphs).
void finish_layer(InferLayer& l, const InferRequest& r, const Hardware& hw, bool graphs) {
  l.tp_allreduce_s = tp_allreduce_seconds(l.tp_bytes, r.tp, hw);
  const auto kernels = static_cast<double>(kInferKernelsPerLayer + l.step_s.front().size());
  double device = l.dense_s + l.pointwise_s + l.merge_s + l.tp_allreduces * l.tp_allreduce_s;
  for (std::size_t s = 0; s < l.step_s.front().size(); ++s) {
    double c = 0;
    for (const auto& rank : l.step_s) c = std::max(c, rank[s]);
    device += c;
  }
  const double host = graphs ? 0 : kernels * kEagerDispatch;
  l.fixed_s = kernels * kKernelGap + std::max(0.0, host - device);
}

// FBGEMM's dynamic row-wise quantisation of each FP8 GEMM's input, as Meta
// serves its FP8 models (fbgemm_gpu experimental/gemm/triton_gemm/fp8_gemm.py,
// _kernel_quantize_fp8_row: per row a max pass, then a scale-and-cast pass):
// the bf16 row read once from HBM (the second pass re-reads a row the first
// has just read, from L2: an assumption) and its FP8 copy written, 3 B per
// element, at the streaming rate. Per token on a TP rank: a dense MLP's input
// (d_model, whole on every rank) and its activation (ffn / tp); a MoE model's
// dense layers alike, averaged over the layers as dense_seconds does (its
// experts' inputs are not charged).
double fp8_quantise_seconds(const InferRequest& r, const Hardware& hw, double tokens) {
  if (!r.fp8_mlp) return 0;
  const auto& s = r.shape;
  const double t = static_cast<double>(r.tp), D = static_cast<double>(s.d_model);
  double elements = D + static_cast<double>(s.ffn) / t;
  if (is_moe(s)) {
    const double L = s.layers, Lm = moe_layers(s);
    elements = (L - Lm) / L * (D + static_cast<double>(s.dense_ffn) / t);
  }
  return 3.0 * elements * tokens / hw.hbm_achievable();
}

}  // namespace

InferLayer infer_layer(const InferRequest& r, const Hardware& hw, const Implementation& im,
                       InferVariant variant, bool decode, bool chunked) {
  InferLayer l;
  l.work = attention_work(r, variant, decode, chunked);
  const auto& w = l.work;
  const auto& rates = im.rates();
  const int d = w.head_dim, db = dtype_bytes(r.dtype);
  const auto dims = infer_dims(r.shape, decode);
  const auto n = w.ranks, steps = infer_steps(w);
  const double B = static_cast<double>(r.batch);
  // A partial output row (O in the working dtype, LSE in fp32) per (query, head).
  const std::uint64_t partial_row =
      static_cast<std::uint64_t>(w.heads) * static_cast<std::uint64_t>(dims.out_dim * db + 4);
  l.step_s.assign(static_cast<std::size_t>(n),
                  std::vector<double>(static_cast<std::size_t>(steps)));
  if (!decode) {
    const auto q = w.fresh / n;
    const auto rows = static_cast<std::uint64_t>(q) * static_cast<std::uint64_t>(w.heads);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t s = 0; s < steps; ++s) {
        double t = 0;
        for (const auto& c : infer_step_calls(w, i, s)) t += rates.call_seconds(c, d, false);
        if (variant == InferVariant::PassKv && s > 0)
          t += merge_seconds(im, hw, rows, q, dims.out_dim);
        l.step_s[static_cast<std::size_t>(i)][static_cast<std::size_t>(s)] = t;
      }
    // Pass-KV moves K and V (head_dim is their mean width under MLA, so the
    // bytes are exact); pass-Q moves queries of query_dim.
    auto ring = infer_ring_elements(w);
    if (variant == InferVariant::PassQ)
      ring = ring / static_cast<std::uint64_t>(d) * dims.query_dim;
    l.ring_bytes = ring * static_cast<std::uint64_t>(db);
    if (variant == InferVariant::PassQ && n > 1) {
      l.return_bytes = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(q) * partial_row;
      l.merge_s = static_cast<double>(n - 1) * merge_seconds(im, hw, rows, q, dims.out_dim);
    }
    const double tokens = static_cast<double>(q);
    l.dense_s = dense_seconds(r, hw, tokens, &l.moe, false, dims.latent ? r.cached / n : 0);
    l.ep_s = moe_share(r.shape) * l.moe.alltoall_s;
    l.quantise_s = fp8_quantise_seconds(r, hw, tokens);
    l.pointwise_s =
        rank_pointwise_bytes(r.shape, r.tp) * tokens / hw.hbm_achievable() + l.quantise_s;
    l.tp_bytes = static_cast<std::uint64_t>(q) * static_cast<std::uint64_t>(r.shape.d_model) *
                 static_cast<std::uint64_t>(db);
    finish_layer(l, r, hw, /*graphs=*/false);
    return l;
  }
  // Decode: each rank reads its K/V shard (Flash-Decoding, Dao et al. 2023:
  // memory-bound at HBM bandwidth), or computes it, whichever is slower. With
  // CP it runs as Meta's pass-Q decode (Yang et al. 2025, arXiv 2411.01783,
  // sec. 3.5 and Table 8): the new token's queries (padded to the CP degree)
  // travel the ring, so every rank runs N attention calls over its own shard,
  // N - 1 SendRecvs of Q, one all-to-all of the partial outputs home, and
  // N - 1 merges.
  // Under MLA the absorbed form (FlashMLA) reads one latent entry per token
  // for every head (decode_kv_elements_per_token).
  const std::int64_t calls = n;
  const double kv_elems = decode_kv_elements_per_token(r.shape, r.tp);
  const double pair_flops = decode_flops_per_pair(r.shape);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto entries = static_cast<double>(infer_step_entries(w, i, 0));
    // The keys the new token sees on this rank: all of its shard, or in a
    // chunked layer those of the token's own chunk (the rest is never read).
    const double keys = entries / w.heads;
    const double bytes = keys * kv_elems * db * B;
    const double flops = pair_flops * entries * B;
    const double one = std::max(bytes / hw.hbm_achievable(), flops / hw.effective_flops());
    l.step_s[static_cast<std::size_t>(i)].assign(static_cast<std::size_t>(calls), one);
  }
  const auto rows = static_cast<std::uint64_t>(r.batch) * static_cast<std::uint64_t>(w.heads);
  if (n > 1) {
    const auto padded = static_cast<std::uint64_t>((r.batch + n - 1) / n * n);
    l.ring_bytes = padded * static_cast<std::uint64_t>(w.heads) *
                   static_cast<std::uint64_t>(dims.query_dim * db);
    l.return_bytes = padded * partial_row;
    l.merge_s = static_cast<double>(n - 1) * merge_seconds(im, hw, rows, 1, dims.out_dim);
  }
  l.dense_s = dense_seconds(r, hw, B, &l.moe, true);
  l.ep_s = moe_share(r.shape) * l.moe.alltoall_s;
  l.quantise_s = fp8_quantise_seconds(r, hw, B);
  l.pointwise_s = rank_pointwise_bytes(r.shape, r.tp) * B / hw.hbm_achievable() + l.quantise_s;
  l.tp_bytes = static_cast<std::uint64_t>(r.batch) * static_cast<std::uint64_t>(r.shape.d_model) *
               static_cast<std::uint64_t>(db);
  finish_layer(l, r, hw, /*graphs=*/r.cuda_graphs);
  return l;
}

InferLayerTimes layer_times(const InferLayer& l, const InferRequest& r, const Hardware& hw) {
  const auto cp_hw = group_hardware(hw, r.tp);
  InferLayerTimes t;
  const auto n = l.work.ranks;
  const auto steps = static_cast<std::int64_t>(l.step_s.front().size());
  const double bw = cp_hw.ring_bandwidth(n), lat = cp_hw.ring_latency(n);
  for (std::int64_t s = 0; s < steps; ++s) {
    double c = 0;
    for (const auto& rank : l.step_s) c = std::max(c, rank[static_cast<std::size_t>(s)]);
    const double m = s + 1 < steps && l.ring_bytes > 0 && n > 1
                         ? static_cast<double>(l.ring_bytes) / bw + lat
                         : 0;
    t.step_compute_s.push_back(c);
    t.step_comm_s.push_back(m);
    t.attention_s += cp_hw.overlap ? std::max(c, m) : c + m;
    t.compute_only_s += c;
  }
  t.exposed_s = t.attention_s - t.compute_only_s;
  if (l.return_bytes > 0) t.return_s = alltoall_time(l.return_bytes, n, bw, lat);
  t.merge_s = l.merge_s;
  t.dense_s = l.dense_s + l.fixed_s;
  t.fixed_s = l.fixed_s;
  t.moe = l.moe;
  t.pointwise_s = l.pointwise_s;
  t.quantise_s = l.quantise_s;
  t.tp_s = l.tp_allreduces * l.tp_allreduce_s;
  t.ep_s = l.ep_s;
  t.total_s = t.attention_s + t.return_s + t.merge_s + t.dense_s + t.pointwise_s + t.tp_s + t.ep_s;
  return t;
}

InferMemory infer_memory(const InferRequest& r, const Hardware& hw, InferVariant variant) {
  InferMemory m;
  const double db = dtype_bytes(r.dtype), t = static_cast<double>(r.tp);
  const double d = r.shape.head_dim, D = r.shape.d_model, F = r.shape.ffn / t;
  const double Hl = local_heads(r), kvl = local_kv_heads(r);
  const double B = static_cast<double>(r.batch), cp = static_cast<double>(r.cp);
  // --precision fp8: the MLP's matrices (3 gated, 2 plain) at one byte per weight.
  const double mlp = mlp_params(r.shape);
  m.weights =
      (static_cast<double>(total_params(r.shape)) * db - (r.fp8_mlp ? mlp * (db - 1) : 0)) / t;
  // EP across CP ranks: each GPU holds ep-th of the routed experts, whole.
  const double span = static_cast<double>(ep_span(r));
  if (span > 1)
    m.weights -= routed_expert_params(r.shape) * (r.fp8_mlp ? 1 : db) * (1 / t - 1 / (t * span));
  // Under MLA each token's cache entry is its latent and RoPE key, whole on
  // every TP rank (decode_kv_elements_per_token).
  // A chunked layer keeps its current chunk only (the keys a later token can see).
  const double tokens = static_cast<double>(r.context + r.decode_tokens);
  const double held =
      global_attention_layers(r.shape) * tokens +
      chunked_attention_layers(r.shape) * std::min<double>(tokens, r.shape.attention_chunk);
  m.kv_cache = held / cp * decode_kv_elements_per_token(r.shape, r.tp) * db * B;
  const double q = static_cast<double>(r.context - r.cached) / cp;  // prefill tokens per GPU
  // One layer's live tensors: the residual stream and its norm, Q/K/V (MLA:
  // the latents and each head's query, key and value), the MLP's gate, up and
  // product (plain: up and the activation), and the running output with its
  // LSE in fp32.
  const auto& sh = r.shape;
  const double qkv = is_mla(sh) ? sh.q_lora_rank + sh.kv_lora_rank + sh.qk_rope_head_dim +
                                      Hl * (2.0 * sh.qk_head_dim + sh.v_head_dim)
                                : d * (Hl + 2 * kvl);
  const double out_d = infer_dims(sh, false).out_dim;
  const double mlp_live = mlp_gated(r.shape) ? 3 : 2;
  m.activations = q * db * (2 * D + qkv + mlp_live * F) + q * Hl * (out_d + 1) * 4;
  // MLA's up-projected prefill: the cached tokens' latents become per-head K
  // and V for the kernel (one layer's, on this rank). Pass-KV's ring buffers
  // hold them already (its K/V blocks); pass-Q keeps them beside the cache.
  if (is_mla(sh) && variant == InferVariant::PassQ)
    m.activations +=
        static_cast<double>(r.cached) / cp * Hl * (sh.qk_head_dim + sh.v_head_dim) * db;
  const auto w = attention_work(r, variant, false);
  double ring = static_cast<double>(infer_ring_elements(w)) * db;
  if (variant == InferVariant::PassQ) ring *= infer_dims(sh, false).query_dim / d;
  m.ring_buffers = 2 * ring;  // the block computed on and the one arriving
  // EP across CP ranks: a prefill's dispatch sends and receives the GPU's
  // T/tp tokens' k routed copies (the mean; both buffers live at once).
  if (span > 1)
    m.ring_buffers +=
        2 * ep_alltoall_bytes(sh, static_cast<std::int64_t>(q), r.tp, static_cast<int>(db));
  if (variant == InferVariant::PassQ)
    m.ring_buffers += (cp - 1) * q * Hl * (out_d * db + 4);  // partials held for other ranks
  auto add = [&](const char* name, double bytes, const char* pool, std::string formula) {
    m.items.push_back({name, bytes, pool == std::string("tensors") ? "persistent" : "overhead",
                       std::move(formula), pool});
  };
  add("weights", m.weights, "tensors",
      span > 1 ? "params / tp, the routed experts / ep (FP8 MLP weights at 1 B with --precision "
                 "fp8)"
               : "params / tp (FP8 MLP weights at 1 B with --precision fp8)");
  add("kv_cache", m.kv_cache, "tensors",
      is_mla(sh) ? "layers x (context + decode) / cp x (kv_lora_rank + rope dims), whole on every "
                   "TP rank (MLA's latent cache)"
      : sh.attention_chunk > 0
          ? "2 x (global layers x (context + decode) + chunked layers x one chunk) / cp x KV "
            "heads / tp x d"
          : "2 x layers x (context + decode) / cp x KV heads / tp x d");
  add("activations", m.activations, "tensors",
      is_mla(sh) && variant == InferVariant::PassQ && r.cached > 0
          ? "one layer's live prefill tensors, with the cached tokens' K and V up-projected"
          : "one layer's live prefill tensors");
  add("ring_buffers", m.ring_buffers, "tensors",
      span > 1 ? "the block computed on and the one arriving, and the EP dispatch's send and "
                 "receive buffers"
               : "the block computed on and the one arriving");
  const double tensors = m.weights + m.kv_cache + m.activations + m.ring_buffers;
  // The runtime beside the tensors (models/plan/runtime_memory.hpp): as a
  // PyTorch program on a GPU; a TPU's bytes_limit is already net of it.
  if (!hw.tpu) {
    add("blas_workspace", hw.blas_workspace_bytes, "tensors", "cuBLAS workspace (catalog)");
    add("allocator_reserve", PlanConstants::kFragmentation * tensors, "allocator",
        "5% of the tensors (the caching allocator's blocks beyond them; assumption)");
    add("driver_reserved", hw.hbm_driver_reserved, "runtime",
        "the device's total less what CUDA may allocate");
    add("cuda_context", hw.context_bytes, "runtime",
        "the CUDA context with lazy loading (catalog)");
    // EP across CP ranks adds the EP group's communicator.
    const int comms = communicators(1, r.tp, r.cp, 1) + (span > 1 ? 1 : 0);
    add("nccl_buffers", comms * NcclConstants::per_communicator(), "runtime",
        fmt::format("{} communicator(s) x NCCL's default channel buffers", comms));
  }
  m.overhead = 0;
  for (const auto& i : m.items)
    if (i.phase == std::string("overhead") || i.name == std::string("blas_workspace"))
      m.overhead += i.bytes;
  m.total = tensors + m.overhead;
  m.hbm = hw.hbm_bytes;
  return m;
}

namespace {

// One pass's layers: the global attention layers, and (Llama 4) the
// chunked ones, each kind timed once and charged per layer of it.
struct LayerKinds {
  InferLayer global, chunked;
};

LayerKinds make_layers(const InferRequest& r, const Hardware& hw, const Implementation& im,
                       InferVariant v, bool decode) {
  LayerKinds k;
  k.global = infer_layer(r, hw, im, v, decode, false);
  if (chunked_attention_layers(r.shape) > 0) k.chunked = infer_layer(r, hw, im, v, decode, true);
  return k;
}

double prefill_ttft(const InferRequest& r, const Hardware& hw, const LayerKinds& layers,
                    InferLayerTimes* out, InferLayerTimes* out_chunked) {
  const auto t = layer_times(layers.global, r, hw);
  const int chunked = chunked_attention_layers(r.shape);
  const auto tc = chunked > 0 ? layer_times(layers.chunked, r, hw) : InferLayerTimes{};
  if (out) *out = t;
  if (out_chunked) *out_chunked = tc;
  return global_attention_layers(r.shape) * t.total_s + chunked * tc.total_s +
         head_seconds(r, hw, 1);
}

std::uint64_t layer_bytes(const InferLayer& l) {
  const auto n = static_cast<std::uint64_t>(l.work.ranks);
  if (n < 2) return 0;
  return (n - 1) * l.ring_bytes + l.return_bytes / n * (n - 1);
}

// `layers`: each variant's prefill layers, [pass-kv, pass-q]; a chunked layer
// moves what a global one does (the ring passes every block).
VariantChoice choose(const InferRequest& r, const Hardware& hw, const LayerKinds (&layers)[2]) {
  VariantChoice c;
  c.automatic = r.auto_variant;
  for (int v = 0; v < 2; ++v) {
    c.message_bytes[v] = layers[v].global.ring_bytes;
    c.layer_bytes[v] = layer_bytes(layers[v].global);
    c.ttft_s[v] = prefill_ttft(r, hw, layers[v], nullptr, nullptr);
  }
  const double kv = c.ttft_s[0], q = c.ttft_s[1];
  const bool tie = std::fabs(kv - q) <= 1e-9 * std::max(kv, q);
  if (!r.auto_variant) {
    c.variant = r.variant;
  } else if (tie) {
    c.variant = c.layer_bytes[1] < c.layer_bytes[0] ? InferVariant::PassQ : InferVariant::PassKv;
  } else {
    c.variant = q < kv ? InferVariant::PassQ : InferVariant::PassKv;
  }
  const double cached_share =
      static_cast<double>(r.cached) / static_cast<double>(std::max<std::int64_t>(1, r.context));
  const auto H = local_heads(r), kvh = local_kv_heads(r);
  const std::string shares =
      fmt::format("{:.0f}% of the context is cached, {} query head{} per KV head",
                  100 * cached_share, H / kvh, H / kvh == 1 ? "" : "s");
  if (r.cp < 2) {
    c.reason = "one CP rank: nothing travels, both variants are the same";
    return c;
  }
  const bool q_smaller = c.layer_bytes[1] < c.layer_bytes[0];
  const std::string sizes = fmt::format(
      "per ring step pass-kv sends K/V {} and pass-q sends Q {} (plus a {} return of partial "
      "outputs per layer); per layer {} vs {}",
      human_bytes(static_cast<double>(c.message_bytes[0])),
      human_bytes(static_cast<double>(c.message_bytes[1])),
      human_bytes(static_cast<double>(c.layer_bytes[1]) -
                  static_cast<double>(r.cp - 1) * static_cast<double>(c.message_bytes[1])),
      human_bytes(static_cast<double>(c.layer_bytes[0])),
      human_bytes(static_cast<double>(c.layer_bytes[1])));
  const std::string times = fmt::format("TTFT {:.4g} s with pass-kv, {:.4g} s with pass-q", kv, q);
  if (!r.auto_variant) {
    c.reason = fmt::format("chosen by --variant; {}; {} ({})", times, sizes, shares);
  } else if (tie) {
    c.reason = fmt::format("both variants hide their transfers ({}); {} moves fewer bytes: {} ({})",
                           times, to_string(c.variant), sizes, shares);
  } else {
    c.reason =
        fmt::format("{}{}; {} ({})", times,
                    (c.variant == InferVariant::PassQ) == q_smaller
                        ? ", the variant that moves fewer bytes"
                        : ", although it moves more bytes (its transfers hide behind compute "
                          "or the other's return is exposed)",
                    sizes, shares);
  }
  return c;
}

}  // namespace

InferResult infer(const InferRequest& r, const Hardware& hw, const Implementation& im) {
  check_request(r);
  check_closed_form_size(r);  // before any [rank][step] table is allocated
  InferResult res;
  // Each variant's layers once: their O(cp^2) rank-steps are the costly part.
  const LayerKinds layers[2] = {make_layers(r, hw, im, InferVariant::PassKv, false),
                                make_layers(r, hw, im, InferVariant::PassQ, false)};
  res.choice = choose(r, hw, layers);
  const auto v = res.choice.variant;
  const double Lg = global_attention_layers(r.shape), Lc = chunked_attention_layers(r.shape);
  res.chunked_layers = static_cast<int>(Lc);
  res.ttft_s = prefill_ttft(r, hw, layers[static_cast<int>(v)], &res.prefill_layer,
                            &res.prefill_chunked_layer);
  const auto& p = res.prefill_layer;
  const auto& pc = res.prefill_chunked_layer;
  auto both = [&](double InferLayerTimes::*f) { return Lg * p.*f + Lc * pc.*f; };
  res.attention_s = both(&InferLayerTimes::attention_s);
  res.attention_exposed_s = both(&InferLayerTimes::exposed_s);
  res.return_s = both(&InferLayerTimes::return_s);
  res.merge_s = both(&InferLayerTimes::merge_s);
  res.dense_s = both(&InferLayerTimes::dense_s);
  res.pointwise_s = both(&InferLayerTimes::pointwise_s);
  res.quantise_s = both(&InferLayerTimes::quantise_s);
  res.tp_s = both(&InferLayerTimes::tp_s);
  res.ep_s = both(&InferLayerTimes::ep_s);
  res.launch_s = both(&InferLayerTimes::fixed_s);
  res.head_s = head_seconds(r, hw, 1);

  const auto dl = make_layers(r, hw, im, v, true);
  const auto dt = layer_times(dl.global, r, hw);
  const auto dc = Lc > 0 ? layer_times(dl.chunked, r, hw) : InferLayerTimes{};
  res.decode_layer = dt;
  res.decode_chunked_layer = dc;
  auto each = [&](double InferLayerTimes::*f) { return Lg * dt.*f + Lc * dc.*f; };
  res.decode_s_per_token = each(&InferLayerTimes::total_s) + head_seconds(r, hw, r.batch);
  res.decode_attention_s = each(&InferLayerTimes::attention_s);
  res.decode_dense_s = each(&InferLayerTimes::dense_s) + each(&InferLayerTimes::pointwise_s) +
                       head_seconds(r, hw, r.batch);
  res.decode_comm_s = each(&InferLayerTimes::return_s) + each(&InferLayerTimes::merge_s);
  res.decode_tp_s = each(&InferLayerTimes::tp_s);
  res.decode_ep_s = each(&InferLayerTimes::ep_s);
  res.decode_launch_s = each(&InferLayerTimes::fixed_s);
  res.tokens_per_s = static_cast<double>(r.batch) / res.decode_s_per_token;
  res.generation_s = res.ttft_s + static_cast<double>(r.decode_tokens) * res.decode_s_per_token;
  res.memory = infer_memory(r, hw, v);

  // Useful FLOPs of the prefill: 2 per parameter per new token (forward only,
  // Kaplan et al. 2020), the visible attention pairs (4 d per pair; a chunked
  // layer's inside its chunks), the last token's output head.
  auto pairs = [&](bool chunked) {
    auto full = attention_work(r, v, false, chunked);
    full.heads = r.shape.heads;
    return static_cast<double>(infer_total_entries(full));
  };
  const double fresh = static_cast<double>(r.context - r.cached);
  // A MoE model's active parameters: the experts a token takes.
  const double nonembed =
      static_cast<double>(active_params(r.shape) - 2 * embedding_params(r.shape));
  res.prefill_flops =
      2 * nonembed * fresh +
      4.0 * r.shape.head_dim * (Lg * pairs(false) + (Lc > 0 ? Lc * pairs(true) : 0)) +
      2.0 * r.shape.d_model * r.shape.vocab;
  res.mfu = res.prefill_flops / (res.ttft_s * static_cast<double>(r.gpus) * hw.flops);
  return res;
}

}  // namespace ringsim
