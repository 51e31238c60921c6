#include "models/plan/basics.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/core/parse.hpp"

namespace ringsim {

std::vector<int> auto_tp_degrees(const PlanRequest& r, const Hardware& hw) {
  std::vector<int> tps;
  for (int t = 1; t <= hw.gpus_per_node && t <= r.shape.kv_heads; t *= 2)
    if (r.gpus % t == 0 && r.shape.kv_heads % t == 0) tps.push_back(t);
  return tps;
}

void set_default_batch(PlanRequest& r) {
  const bool card = r.shape.global_batch_tokens > 0;
  const auto budget = card ? r.shape.global_batch_tokens : kDefaultBatchTokens;
  const auto seqs = std::max<std::int64_t>(1, budget / r.context);
  r.global_batch_tokens = seqs * r.context;
  r.batch_source =
      card ? fmt::format("the model card's {} tokens ({})", budget, r.shape.global_batch_source)
           : fmt::format(
                 "the default budget of {} tokens (Llama 2's 4M-token batch; "
                 "--global-batch-tokens N to change, replica for one sequence per replica)",
                 budget);
}

const std::vector<std::string>& checkpointing_names() {
  static const std::vector<std::string> n{"none", "selective", "full"};
  return n;
}
const std::vector<std::string>& loss_names() {
  static const std::vector<std::string> n{"eager", "chunked", "compiled", "fused"};
  return n;
}
std::string to_string(Checkpointing c) {
  return checkpointing_names()[static_cast<int>(c)];
}
std::string to_string(LossImpl l) {
  return loss_names()[static_cast<int>(l)];
}
Checkpointing parse_checkpointing(const std::string& flag, const std::string& s) {
  return parse_named<Checkpointing>(flag, s, checkpointing_names());
}
LossImpl parse_loss(const std::string& flag, const std::string& s) {
  return parse_named<LossImpl>(flag, s, loss_names());
}
const std::vector<std::string>& pipeline_layout_names() {
  static const std::vector<std::string> n{"auto", "balanced", "even", "embedding-loss"};
  return n;
}
std::string to_string(PipelineLayout l) {
  return pipeline_layout_names()[static_cast<int>(l)];
}
PipelineLayout parse_pipeline_layout(const std::string& flag, const std::string& s) {
  return parse_named<PipelineLayout>(flag, s, pipeline_layout_names());
}
const std::vector<std::string>& pipeline_schedule_names() {
  static const std::vector<std::string> n{"1f1b", "interleaved", "zb-h1", "zb-v", "dualpipe"};
  return n;
}
std::string to_string(PipelineSchedule s) {
  return pipeline_schedule_names()[static_cast<int>(s)];
}
PipelineSchedule parse_pipeline_schedule(const std::string& flag, const std::string& s) {
  return parse_named<PipelineSchedule>(flag, s, pipeline_schedule_names());
}

std::uint64_t embedding_params(const ModelShape& s) {
  return static_cast<std::uint64_t>(s.vocab) * static_cast<std::uint64_t>(s.d_model);
}

std::uint64_t total_params(const ModelShape& s) {
  // Layers + input embedding + untied output head + final norm.
  return all_layer_params(s) + 2 * embedding_params(s) + static_cast<std::uint64_t>(s.d_model);
}

namespace {
// One expert's MLP matrices (D x expert_ffn each).
std::uint64_t one_expert_params(const ModelShape& s) {
  return static_cast<std::uint64_t>(mlp_matrices(s)) * static_cast<std::uint64_t>(s.d_model) *
         static_cast<std::uint64_t>(s.expert_ffn);
}
}  // namespace

std::uint64_t expert_layer_params(const ModelShape& s) {
  if (!is_moe(s)) return 0;
  // One MoE layer's routed experts, spread as a mean over every layer.
  const std::uint64_t one = one_expert_params(s) * static_cast<std::uint64_t>(s.experts);
  return one * static_cast<std::uint64_t>(moe_layers(s)) / static_cast<std::uint64_t>(s.layers);
}

std::uint64_t active_params(const ModelShape& s) {
  if (!is_moe(s)) return total_params(s);
  // The routed experts a token does not take.
  const auto idle =
      one_expert_params(s) * static_cast<std::uint64_t>(s.experts - s.experts_per_token);
  return total_params(s) - static_cast<std::uint64_t>(moe_layers(s)) * idle;
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
      return 2 * D + qkv + out + 2 * D + 2 * mlp_up_matrices(s) * F;
    case Checkpointing::None:
      break;
  }
  // Layer input 2D, norm1 output 2D, Q/K/V, O + LSE, residual 2D, norm2
  // output 2D, gate and up 4F, SiLU(gate) 2F, product 2F. With flash attention
  // Korthikanti's 5as/h term (scores, softmax, dropout mask) is never stored.
  return 8 * D + qkv + out + (mlp_gated(s) ? 8 : 4) * F;
}

double model_flops_per_token(const ModelShape& s, std::int64_t context, bool causal) {
  // A MoE model counts the parameters a token passes through (active).
  const double n_nonembed = static_cast<double>(active_params(s) - embedding_params(s));
  const double ctx = static_cast<double>(context);
  const double span =
      !chunked_attention_applies(s, context)
          ? ctx * s.layers
          : ctx * global_attention_layers(s) +
                static_cast<double>(s.attention_chunk) * chunked_attention_layers(s);
  const double attn = 12.0 * s.heads * s.head_dim * span;
  return 6 * n_nonembed + (causal ? attn / 2 : attn);
}

bool chunked_attention_applies(const ModelShape& s, std::int64_t context) {
  return s.attention_chunk > 0 && chunked_attention_layers(s) > 0 && context > s.attention_chunk;
}

std::vector<std::int64_t> attention_chunks(const ModelShape& s, std::int64_t context) {
  if (!chunked_attention_applies(s, context)) return {};
  std::vector<std::int64_t> chunks(static_cast<std::size_t>(context / s.attention_chunk),
                                   s.attention_chunk);
  if (const auto rest = context % s.attention_chunk; rest > 0) chunks.push_back(rest);
  return chunks;
}

std::int64_t sequences_per_step(const PlanRequest& r, std::int64_t dp, std::int64_t pp) {
  if (r.global_batch_tokens > 0) return r.global_batch_tokens / r.context;
  if (r.microbatches > 0) return r.microbatches * dp;
  return pp > 1 ? pp * dp : dp;
}

Workload attention_workload(const PlanRequest& r, Layout layout, std::int64_t cp, std::int64_t tp,
                            int ulysses_degree) {
  Workload w;
  w.devices = cp;
  w.block = r.context / cp;
  w.layout = cp == 1 ? Layout::Ring : layout;
  w.causal = r.causal;
  w.pass = Pass::FwdBwd;
  w.dtype = r.attention_dtype;  // --attention-precision (precision.hpp)
  w.shape = r.shape;
  w.shape.heads = r.shape.heads / static_cast<int>(tp);
  w.shape.kv_heads = r.shape.kv_heads / static_cast<int>(tp);
  w.shape.ffn = r.shape.ffn / static_cast<int>(tp);
  // Whether the ring passes grouped or expanded K/V is the implementation's
  // (Implementation::ring_kv_heads): in run and minblock the kernel's rule
  // (KernelSpec ring_kv), in plan the framework's (evaluate).
  w.ulysses_degree = layout == Layout::Hybrid ? ulysses_degree : 0;
  w.layers = r.shape.layers;
  w.scope = Scope::Attention;
  w.batch = 1;
  return w;
}

namespace {
// Binary GiB, like every memory figure the CLI prints (models/core/parse.hpp).
std::string gb(double b) {
  return fmt::format("{:.2f} GiB", to_gib(b));
}
}  // namespace

std::string Infeasibility::text() const {
  switch (kind) {
    case Kind::Fits:
      return {};
    case Kind::Rule:
      return rule;
    case Kind::NoTime:
      return "fits, but no step time: " + rule;
    case Kind::Memory:
      break;
  }
  return fmt::format("needs {} > {} HBM (over by {}); largest term: {} ({}, {}){}",
                     gb(needed_bytes), gb(hbm_bytes), gb(needed_bytes - hbm_bytes), term,
                     gb(term_bytes),
                     term_phase == "persistent" ? "held throughout" : "at the " + term_phase,
                     stage >= 0 ? fmt::format(" on pipeline stage {}", stage) : "");
}

std::string Infeasibility::line() const {
  auto t = text();
  if (!hint.empty() && !t.empty()) t += "; " + hint;
  return t;
}

const char* Infeasibility::kind_name() const {
  switch (kind) {
    case Kind::Fits:
      return "fits";
    case Kind::Rule:
      return "rule";
    case Kind::Memory:
      return "memory";
    case Kind::NoTime:
      return "no_time";
  }
  return "";
}

}  // namespace ringsim
