#include "models/plan/activations.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "models/core/errors.hpp"
#include "models/plan/framework.hpp"
#include "models/plan/precision.hpp"

namespace ringsim {

const std::vector<std::string>& remat_policy_names() {
  static const std::vector<std::string> n{"full",
                                          "minimal",
                                          "minimal_with_context",
                                          "save_dot_with_context_except_mlp",
                                          "save_dot_except_mlpwi",
                                          "save_dot_except_mlp",
                                          "save_qkv_proj",
                                          "save_out_proj",
                                          "qkv_proj_offloaded",
                                          "minimal_offloaded"};
  return n;
}

const std::vector<std::string>& remat_tensor_names() {
  static const std::vector<std::string> n{"query_proj", "key_proj", "value_proj", "kv_proj",
                                          "qkv_proj",   "context",  "out_proj",   "mlpwi_0",
                                          "mlpwi_1",    "mlpwi",    "mlpwo"};
  return n;
}

Checkpointing remat_policy_checkpointing(const std::string& policy) {
  return policy == "full" ? Checkpointing::Full : Checkpointing::Selective;
}

LayerTensors layer_tensors(const ModelShape& s) {
  const double D = s.d_model, d = s.head_dim, H = s.heads, kvh = s.kv_heads, F = s.ffn;
  LayerTensors t;
  t.input = t.norm = t.residual = t.o_proj = t.down = 2 * D;
  t.q = t.attn_out = 2 * H * d;
  t.k = t.v = 2 * kvh * d;
  t.lse = 4 * H;
  t.gate = t.up = t.act = t.product = 2 * F;
  // A plain MLP: the up projection's output (up) and the activation's, which
  // the down projection reads (product); no gate, no separate SiLU.
  if (!mlp_gated(s)) t.gate = t.act = 0;
  return t;
}

namespace {

constexpr const char* kCustomPolicy = "custom:";

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  size_t at = 0;
  while (true) {
    const size_t comma = list.find(',', at);
    out.push_back(list.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}

// PyTorch eager autograd: every op saves what its backward reads. Layer
// input, both norm outputs (the projections' inputs), Q/K/V after RoPE and
// the attention output with its LSE (flash attention), the residual, the
// MLP's gate and up (w1, w3 outputs), SiLU(gate) and the product.
// Without torch.compile, an eager RMSNorm (TorchTitan's norm_type rmsnorm:
// x.float() * rsqrt(mean(x^2))) keeps the fp32 copy of its input for the
// multiply's backward, 4D per norm; a fused RMSNorm kernel (--norm fused)
// or Inductor saves the bf16 input alone. (RoPE's fp32 complex product
// saves only the constant frequencies, its other operand.)
double eager_none(const LayerTensors& t, const ModelShape& s, bool upcast) {
  const double upcasts = upcast ? 2 * 4.0 * s.d_model : 0;
  return t.input + 2 * t.norm + t.q + t.k + t.v + t.attn_out + t.lse + t.residual + t.gate + t.up +
         t.act + t.product + upcasts;
}

// TorchTitan's per-op selective checkpointing (selective_ac_option 'op'):
// the policy saves the attention kernel's outputs and every other matmul's
// output (its mm counter saves odd calls: half of the seven projections on
// average), plus the checkpoint's input; everything else is recomputed.
double torchtitan_sac(const LayerTensors& t, bool attention) {
  const double mms = t.q + t.k + t.v + t.o_proj + t.gate + t.up + t.down;
  return t.input + (attention ? t.attn_out + t.lse : 0) + mms / 2;
}

// Transformer Engine modules as Megatron Core builds a Llama layer: each
// LayerNormLinear saves its input, its normalised output and an fp32
// rsigma; attention saves Q, K, V, its output and LSE; the output
// projection saves its input (the attention output, shared in bf16, an FP8
// copy under FP8); fc1 saves its input's norm, the fused SwiGLU saves fc1's
// output (gate and up) and fc2 saves the product. FP8: the two normalised
// outputs and fc2's input are saved as FP8 casts (1 B).
double te_none(const LayerTensors& t, const ModelShape& s, bool fp8) {
  const double D = s.d_model, H = s.heads, d = s.head_dim, F = s.ffn;
  double b = t.input + t.norm + 4 + t.q + t.k + t.v + t.attn_out + t.lse + t.residual + t.norm + 4 +
             t.gate + t.up + t.product;
  if (fp8) b += -2 * D + H * d - F;
  return b;
}

// The names a policy keeps (decoders.py get_remat_policy;
// maxtext_utils.get_save_and_offload_names): on the device, or offloaded to
// pinned host memory.
struct SavedNames {
  std::set<std::string> device, host;
  bool any(const std::string& n) const { return device.count(n) || host.count(n); }
};

SavedNames maxtext_saved(const std::string& p) {
  const std::set<std::string> qkv{"query_proj", "key_proj", "value_proj", "kv_proj", "qkv_proj"};
  const std::set<std::string> mlp{"mlpwi_0", "mlpwi_1", "mlpwi", "mlpwo"};
  SavedNames s;
  auto add = [](std::set<std::string>& to, const std::set<std::string>& names) {
    to.insert(names.begin(), names.end());
  };
  if (p.rfind(kCustomPolicy, 0) == 0) {
    for (auto& n : split_names(p.substr(std::string(kCustomPolicy).size()))) s.device.insert(n);
  } else if (p == "minimal" || p == "minimal_with_context") {
    add(s.device, qkv);
    add(s.device, mlp);
    s.device.insert("out_proj");
    if (p == "minimal_with_context") s.device.insert("context");
  } else if (p.rfind("save_dot_", 0) == 0) {
    add(s.device, qkv);
    s.device.insert("out_proj");
    if (p == "save_dot_with_context_except_mlp") s.device.insert("context");
    if (p == "save_dot_except_mlpwi") s.device.insert("mlpwo");
  } else if (p == "save_qkv_proj") {
    add(s.device, qkv);
  } else if (p == "save_out_proj") {
    s.device.insert("out_proj");
  } else if (p == "qkv_proj_offloaded") {
    s.host = {"query_proj", "value_proj", "key_proj", "kv_proj"};
  } else if (p == "minimal_offloaded") {
    add(s.host, qkv);
    add(s.host, mlp);
    s.host.insert("out_proj");
  }
  return s;  // full: nothing but the scan carry
}

// MaxText's named checkpoints (decoders.py): the bytes of the named tensors
// a policy keeps on the device; offloaded ones go to host memory. The scan
// carry (the layer input) is always kept.
double maxtext_policy(const LayerTensors& t, const std::string& p) {
  const auto& d = maxtext_saved(p).device;
  auto has = [&](const char* a, const char* b) { return d.count(a) || d.count(b); };
  double b = t.input;
  if (has("query_proj", "qkv_proj")) b += t.q;
  if (has("key_proj", "qkv_proj") || d.count("kv_proj")) b += t.k;
  if (has("value_proj", "qkv_proj") || d.count("kv_proj")) b += t.v;
  if (d.count("context")) b += t.attn_out;
  if (d.count("out_proj")) b += t.o_proj;
  if (has("mlpwi_0", "mlpwi")) b += t.gate;
  if (has("mlpwi_1", "mlpwi")) b += t.up;
  if (d.count("mlpwo")) b += t.down;
  return b;
}

// The policy a jax-xla request runs: --remat-policy, else the checkpointing
// flag's (full: nothing saveable; selective: dots saveable = minimal).
std::string jax_policy(const PlanRequest& r) {
  if (!r.remat_policy.empty()) return r.remat_policy;
  return r.checkpointing == Checkpointing::Full ? "full" : "minimal";
}

// fp32 attention keeps its saved Q, K, V and output at 4 B: the bytes the
// count saved of them again.
double fp32_attention_delta(const PlanRequest& r, double saved_qkvo) {
  return r.attention_dtype == DType::FP32 ? saved_qkvo : 0;
}

}  // namespace

double recompute_fraction(const PlanRequest& r, int stage_layers, int virtual_stages) {
  if (r.checkpointing != Checkpointing::Full || stage_layers <= 0) return 0;
  if (r.recompute_layers <= 0) return 1;
  return std::min(1.0, static_cast<double>(r.recompute_layers) * virtual_stages / stage_layers);
}

bool sac_saves_attention(const PlanRequest& r) {
  return r.kernel != "cudnn" && r.kernel != "te-cudnn";
}

double layer_forward_bytes_per_token(const PlanRequest& r) {
  const auto t = layer_tensors(r.shape);
  const auto& fw = framework_profile(r);
  const double qkvo = t.q + t.k + t.v + t.attn_out;
  if (fw.saver == FrameworkProfile::Saver::TransformerEngine)
    return te_none(t, r.shape, r.precision == Precision::FP8) + fp32_attention_delta(r, qkvo);
  const bool upcast =
      !r.compile && !r.fused_norm && fw.saver == FrameworkProfile::Saver::PytorchEager;
  return eager_none(t, r.shape, upcast) + fp32_attention_delta(r, qkvo);
}

double saved_bytes_per_token(const PlanRequest& r) {
  const auto t = layer_tensors(r.shape);
  const auto& fw = framework_profile(r);
  const bool fp8 = r.precision == Precision::FP8;
  switch (fw.saver) {
    case FrameworkProfile::Saver::JaxPolicy:
      if (r.remat_policy.empty() && r.checkpointing == Checkpointing::None)
        return layer_forward_bytes_per_token(r);
      return maxtext_policy(t, jax_policy(r));
    case FrameworkProfile::Saver::TransformerEngine:
      if (r.checkpointing == Checkpointing::Full) return t.input;
      if (r.checkpointing == Checkpointing::Selective)  // core attention recomputed
        return te_none(t, r.shape, fp8) - t.lse - (fp8 ? t.attn_out : 0) +
               fp32_attention_delta(r, t.q + t.k + t.v);
      return layer_forward_bytes_per_token(r);
    case FrameworkProfile::Saver::PytorchEager:
      break;
  }
  if (r.checkpointing == Checkpointing::Full) return t.input;
  if (r.checkpointing == Checkpointing::Selective) {
    const bool attn = sac_saves_attention(r);
    return torchtitan_sac(t, attn) +
           fp32_attention_delta(r, (attn ? t.attn_out : 0) + (t.q + t.k + t.v) / 2);
  }
  return layer_forward_bytes_per_token(r);
}

double residual_forward_bytes_per_token(const PlanRequest& r) {
  const auto t = layer_tensors(r.shape);
  const auto& fw = framework_profile(r);
  if (fw.saver == FrameworkProfile::Saver::TransformerEngine) {
    // LayerNormLinear's input, normalised output (an FP8 cast under FP8)
    // and fp32 rsigma, twice; the residual is the second one's input.
    const double norm = r.precision == Precision::FP8 ? t.norm / 2 : t.norm;
    return t.input + t.residual + 2 * norm + 2 * 4;
  }
  return t.input + 2 * t.norm + t.residual;
}

double residual_saved_bytes_per_token(const PlanRequest& r) {
  const auto& fw = framework_profile(r);
  if (fw.saver != FrameworkProfile::Saver::JaxPolicy && r.checkpointing == Checkpointing::Full)
    return layer_tensors(r.shape).input;
  // Megatron's selective recompute re-runs core attention alone: the
  // residual stream's tensors stay saved.
  return std::min(saved_bytes_per_token(r), residual_forward_bytes_per_token(r));
}

std::string saved_bytes_formula(const PlanRequest& r) {
  const auto& fw = framework_profile(r);
  if (fw.saver == FrameworkProfile::Saver::JaxPolicy &&
      !(r.remat_policy.empty() && r.checkpointing == Checkpointing::None))
    return fmt::format("remat_policy {}: the layer input + the named tensors it saves",
                       jax_policy(r));
  if (r.checkpointing == Checkpointing::Full) return "the layer input, 2D (full recompute)";
  if (fw.saver == FrameworkProfile::Saver::TransformerEngine)
    return r.checkpointing == Checkpointing::Selective
               ? "Transformer Engine's saved inputs, core attention recomputed"
               : "Transformer Engine's saved inputs: 8D + Q/K/V + O + LSE + 6F (FP8 casts 1 B)";
  return r.checkpointing == Checkpointing::Selective
             ? "TorchTitan per-op SAC: input + attention out/LSE + every other matmul's output"
             : "PyTorch eager: 8D + Q/K/V + O + LSE + 8F";
}

bool valid_custom_remat_policy(const std::string& policy) {
  if (policy.rfind(kCustomPolicy, 0) != 0) return false;
  const auto& known = remat_tensor_names();
  for (const auto& n : split_names(policy.substr(std::string(kCustomPolicy).size())))
    if (std::find(known.begin(), known.end(), n) == known.end()) return false;
  return true;
}

RematRecompute jax_remat_recompute(const PlanRequest& r) {
  if (r.remat_policy.empty() && r.checkpointing == Checkpointing::None) return {};
  const auto s = maxtext_saved(jax_policy(r));
  RematRecompute re;
  re.attention = !s.any("context");
  const bool q = s.any("query_proj") || s.any("qkv_proj");
  const bool kv =
      (s.any("key_proj") && s.any("value_proj")) || s.any("kv_proj") || s.any("qkv_proj");
  re.qkv = !(q && kv);
  re.out_proj = !s.any("out_proj");
  re.mlp_in = !(s.any("mlpwi") || (s.any("mlpwi_0") && (s.any("mlpwi_1") || !mlp_gated(r.shape))));
  return re;
}

}  // namespace ringsim
