#pragma once
// Precision of a training step (docs/plan.md, "Precision (FP8)"): which
// GEMMs run in FP8 and at what rate, what the FP8 casts cost in HBM traffic,
// and the memory FP8 adds or saves. FP8 here is Float8 linear layers with
// per-tensor scaling as TorchTitan (torchao Float8Linear) and Megatron-LM
// (Transformer Engine) train: the projections and the MLP run in FP8; the
// output head, attention, norms and the loss stay bf16 (or fp32).
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/workload.hpp"

namespace ringsim {

struct PlanRequest;  // models/plan/basics.hpp
enum class Checkpointing;

enum class Precision { BF16, FP8 };
const std::vector<std::string>& precision_names();  // bf16, fp8
std::string to_string(Precision p);
Precision parse_precision(const std::string& flag, const std::string& s);
// --attention-precision: bf16 or fp32 (as DType); fp8 is refused with the reason.
DType parse_attention_precision(const std::string& flag, const std::string& s);

// How per-tensor FP8 scales are found (Megatron-LM's --fp8-recipe, Transformer
// Engine's recipes). Delayed: each tensor's scale comes from its amax history
// and the cast records the new amax as it goes, one read of the input.
// Tensorwise (TE's Float8CurrentScaling): the tensor's own amax first, in a
// kernel of its own, then the cast (TE's Float8CurrentScalingQuantizer:
// nvte_compute_amax, nvte_compute_scale_from_amax, nvte_quantize_v2), a second
// read of every input it casts.
enum class Fp8Recipe { Delayed, Tensorwise };
const std::vector<std::string>& fp8_recipe_names();  // delayed, tensorwise
std::string to_string(Fp8Recipe r);
Fp8Recipe parse_fp8_recipe(const std::string& flag, const std::string& s);

// Stated constants of the FP8 model.
struct Fp8Constants {
  // Casting one element of a linear's input, weight or output gradient to
  // FP8: read bf16 (2 B) + write fp8 (1 B). Dynamic per-tensor scaling needs
  // the tensor's amax first; TorchTitan compiles the amax reduction into the
  // cast kernel (docs/float8.md: "--training.compile (required for
  // competitive performance): use torch.compile to fuse the float8
  // scaling/casting kernels"), so one read, not two, is charged.
  static constexpr double kCastBytesPerElement = 3;
  // --fp8-recipe tensorwise: the amax kernel reads the bf16 input once more.
  static constexpr double kAmaxBytesPerElement = 2;
  // Float8 linears per Llama layer: wq, wk, wv, wo, w1, w2, w3 (TorchTitan's
  // Llama); each has three scaled tensors (input, weight, output gradient).
  static constexpr int kLinearsPerLayer = 7;
  static constexpr int kScaledTensorsPerLinear = 3;
};

// Elements per token per layer that FP8 casts move (per tensor-parallel rank
// multiply by 1/tp): the forward casts every GEMM's input once (wq, wk, wv
// take D each, or D once where Q/K/V are one fused GEMM as Megatron runs
// them; wo Hd; w1 and w3 D each, or D once fused; w2 F); the backward casts
// every output gradient (wq Hd, wk and wv kvh d each, wo D, w1 and w3 F each,
// w2 D) and, in torchao (pytorch-fsdp), casts the inputs again (Float8Linear
// saves the high-precision input and re-casts it for the weight gradient).
double fp8_cast_elements_fwd(const PlanRequest& r);
double fp8_cast_elements_bwd(const PlanRequest& r);
// Parameters of one layer's FP8 linears (all but the two RMSNorm gains).
double fp8_linear_params(const ModelShape& s);

// FSDP all-gather bytes per layer parameter, relative to bf16 (2 B): with
// TorchTitan's enable_fsdp_float8_all_gather the FP8 linear weights travel
// as FP8 (1 B); norms stay bf16. 1 when the rule does not apply.
double fsdp_allgather_fraction(const PlanRequest& r);

// Bytes of FP8 scaling state per layer: 7 linears x 3 scaled tensors x (an
// fp32 scale, or under delayed scaling scale + scale_inv + the amax history).
double fp8_scale_bytes_per_layer(const PlanRequest& r);

// Whether the request's FP8 casts run Transformer Engine's current scaling
// (--fp8-recipe tensorwise, megatron only: a copy of the request for another
// framework, as "best other framework" makes, keeps that framework's own).
bool fp8_current_scaling(const PlanRequest& r);
// HBM bytes per element an FP8 cast moves under the request's recipe: 3
// (read bf16, write fp8), + 2 for tensorwise current scaling's amax pass.
double fp8_cast_bytes_per_element(const PlanRequest& r);
// What those bytes are, for --explain.
std::string fp8_cast_text(const PlanRequest& r);

// Seconds of one layer's FP8 casts on one device for `tokens` tokens (before
// tp), forward or backward, at HBM bandwidth: fp8_cast_bytes_per_element over
// the activations and, forward, the weights (the FSDP shard under FP8
// all-gather, `shard_group` ranks; else the layer / tp). 0 in bf16.
double fp8_cast_seconds(const PlanRequest& r, const Hardware& hw, double tokens, std::int64_t tp,
                        std::int64_t shard_group, bool backward);

}  // namespace ringsim
