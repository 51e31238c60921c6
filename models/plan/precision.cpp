#include "models/plan/precision.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/plan/basics.hpp"
#include "models/plan/execution.hpp"
#include "models/plan/framework.hpp"

namespace ringsim {

const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> n{"bf16", "fp8"};
  return n;
}
std::string to_string(Precision p) {
  return precision_names()[static_cast<int>(p)];
}
Precision parse_precision(const std::string& flag, const std::string& s) {
  return parse_choice(flag, s, precision_names()) == "fp8" ? Precision::FP8 : Precision::BF16;
}

DType parse_attention_precision(const std::string& flag, const std::string& s) {
  if (s == "fp8")
    throw InputError(flag +
                     ": fp8 attention is not modelled (no kernel in the catalog has an FP8 curve); "
                     "choose bf16 or fp32");
  return parse_choice(flag, s, {"bf16", "fp32"}) == "fp32" ? DType::FP32 : DType::BF16;
}

const std::vector<std::string>& fp8_recipe_names() {
  static const std::vector<std::string> n{"delayed", "tensorwise"};
  return n;
}
std::string to_string(Fp8Recipe r) {
  return fp8_recipe_names()[static_cast<int>(r)];
}
Fp8Recipe parse_fp8_recipe(const std::string& flag, const std::string& s) {
  return parse_choice(flag, s, fp8_recipe_names()) == "tensorwise" ? Fp8Recipe::Tensorwise
                                                                   : Fp8Recipe::Delayed;
}

double fp8_cast_elements_fwd(const PlanRequest& r) {
  const auto& s = r.shape;
  const double D = s.d_model, d = s.head_dim, H = s.heads, F = s.ffn;
  // One cast per GEMM input, as the framework runs the linears
  // (execution.hpp): wq, wk, wv D each, or D once into the fused QKV GEMM;
  // w1, w3 (gated; plain: the up projection) D each, or D once into the fused
  // gate/up GEMM; wo H d; w2 F.
  const auto e = execution(r);
  const double qkv = e.fused_qkv ? 1 : 3;
  const double up = e.fused_gate_up ? 1 : mlp_up_matrices(s);
  return (qkv + up) * D + H * d + F;
}

double fp8_cast_elements_bwd(const PlanRequest& r) {
  const auto& s = r.shape;
  const double D = s.d_model, d = s.head_dim, H = s.heads, kvh = s.kv_heads, F = s.ffn;
  // Output gradients: wq H d, wk and wv kvh d each, wo D, w1 and w3 (plain: up) F each, w2 D.
  const double grads = H * d + 2 * kvh * d + 2 * D + mlp_up_matrices(s) * F;
  // torchao saves the bf16 input and casts it again for the weight gradient;
  // Transformer Engine saved the FP8 cast and reuses it.
  return grads + (framework_profile(r).fp8_saves_cast_inputs ? 0 : fp8_cast_elements_fwd(r));
}

double fp8_linear_params(const ModelShape& s) {
  return static_cast<double>(layer_params(s)) - 2.0 * s.d_model;
}

double fsdp_allgather_fraction(const PlanRequest& r) {
  if (r.precision != Precision::FP8) return 1;
  if (!framework_profile(r).fp8_allgather && !fp8_weights(r)) return 1;
  const double all = static_cast<double>(layer_params(r.shape));
  const double lin = fp8_linear_params(r.shape);
  return (lin * 1 + (all - lin) * 2) / (2 * all);
}

}  // namespace ringsim

namespace ringsim {

double fp8_scale_bytes_per_layer(const PlanRequest& r) {
  if (r.precision != Precision::FP8) return 0;
  // Per scaled tensor: an fp32 scale (dynamic scaling); delayed scaling also
  // keeps scale_inv and the amax history.
  const int history = framework_profile(r).fp8_amax_history;
  const double per_tensor = 4.0 * (history > 0 ? 2 + history : 1);
  return Fp8Constants::kLinearsPerLayer * Fp8Constants::kScaledTensorsPerLinear * per_tensor;
}

}  // namespace ringsim

namespace ringsim {

bool fp8_current_scaling(const PlanRequest& r) {
  return r.precision == Precision::FP8 && r.framework == Framework::Megatron &&
         r.fp8_recipe == Fp8Recipe::Tensorwise;
}

double fp8_cast_bytes_per_element(const PlanRequest& r) {
  return Fp8Constants::kCastBytesPerElement +
         (fp8_current_scaling(r) ? Fp8Constants::kAmaxBytesPerElement : 0);
}

std::string fp8_cast_text(const PlanRequest& r) {
  return fmt::format("{:g} B/element by HBM{}", fp8_cast_bytes_per_element(r),
                     fp8_current_scaling(r) ? " (tensorwise: the amax pass, then the cast)" : "");
}

double fp8_cast_seconds(const PlanRequest& r, const Hardware& hw, double tokens, std::int64_t tp,
                        std::int64_t shard_group, bool backward) {
  if (r.precision != Precision::FP8) return 0;
  const double t = static_cast<double>(tp);
  const double elems =
      (backward ? fp8_cast_elements_bwd(r) : fp8_cast_elements_fwd(r)) * tokens / t;
  // Weights: torchao casts its FSDP shard before the FP8 all-gather (1 /
  // shard group of the layer); Transformer Engine casts the whole layer once
  // and caches it (charged in every forward: an upper bound with
  // accumulation). Backward reuses them (the transposes come with the cast).
  const auto& fw = framework_profile(r);
  const double weights =
      backward ? 0
               : fp8_linear_params(r.shape) / t /
                     (fw.fp8_allgather ? static_cast<double>(std::max<std::int64_t>(1, shard_group))
                                       : 1.0);
  return fp8_cast_bytes_per_element(r) * (elems + weights) / hw.hbm_bandwidth;
}

}  // namespace ringsim
