#pragma once
// Saved activations per token per layer, as each framework keeps them for
// the backward pass (docs/plan.md, "Memory per device"): which tensors of a
// Llama layer stay alive, by framework, recompute policy and precision.
// Bytes before tensor parallelism (each term divides by tp under sequence
// parallelism).
#include <string>
#include <vector>

#include "models/plan/basics.hpp"

namespace ringsim {

// MaxText's remat_policy names (src/maxtext/configs/base.yml), the policies
// --remat-policy accepts under --framework jax-xla.
const std::vector<std::string>& remat_policy_names();
// The recompute class a policy costs in step time (full: the whole forward
// again; selective: the unsaved matmuls and pointwise ops; none).
Checkpointing remat_policy_checkpointing(const std::string& policy);

// What a jax-xla remat policy re-runs of a layer's forward in its backward.
// JAX rematerialises only what the backward reads and no policy saved
// (jax.checkpoint's partial evaluation drops the rest as dead code): the
// splash kernel's residuals are named "context" (MaxText's attention_op.py,
// residual_checkpoint_name), so saving them spares the attention forward;
// Q/K/V, the output projection (the MLP norm reads the residual it feeds)
// and the MLP's input projections are re-run unless saved or offloaded; the
// down projection's output only feeds the next layer's input, the scan's
// saved carry, so no policy re-runs it.
struct RematRecompute {
  bool attention = false, qkv = false, out_proj = false, mlp_in = false;
};
RematRecompute jax_remat_recompute(const PlanRequest& r);
// MaxText's remat_policy=custom with the named tensors kept on the device
// (base.yml: NAME: 'device'), as --remat-policy custom:NAME[,NAME...].
bool valid_custom_remat_policy(const std::string& policy);
const std::vector<std::string>& remat_tensor_names();

// One Llama layer's forward tensors per token, in bytes (bf16 unless said).
struct LayerTensors {
  double input = 0;            // the layer input (the residual stream), 2D
  double norm = 0;             // one RMSNorm output, 2D (two per layer)
  double residual = 0;         // the residual after attention, 2D
  double q = 0, k = 0, v = 0;  // projections after RoPE: 2Hd, 2 kvh d each
  double attn_out = 0;         // attention output (the context), 2Hd
  double lse = 0;              // flash attention's log-sum-exp, fp32 per head: 4H
  double o_proj = 0;           // the output projection's result, 2D
  double gate = 0, up = 0;     // w1, w3 outputs, 2F each
  double act = 0;              // SiLU(gate), 2F
  double product = 0;          // SiLU(gate) x up, 2F
  double down = 0;             // w2 output, 2D
};
LayerTensors layer_tensors(const ModelShape& s);

// Whether TorchTitan's per-op selective checkpointing saves the attention
// kernel's outputs: its save list (torchtitan parallelize_llama.py, December
// 2024 to November 2025) names SDPA's flash and memory-efficient kernels,
// not cuDNN's, which is then recomputed in backward (TorchTitan added cuDNN
// in December 2025, pull request 2095).
bool sac_saves_attention(const PlanRequest& r);

// The share of a stage's layers that recompute under full checkpointing:
// 1, or with --recompute-layers N, min(1, N x virtual stages / layers).
double recompute_fraction(const PlanRequest& r, int stage_layers, int virtual_stages);

// Bytes per token per layer kept for backward under the request's
// framework, checkpointing (or --remat-policy) and precision.
double saved_bytes_per_token(const PlanRequest& r);
// Bytes per token one layer's forward keeps with nothing recomputed: the
// transient a recompute rebuilds for that layer's backward.
double layer_forward_bytes_per_token(const PlanRequest& r);
// Of those two, the tensors as wide as the residual stream (the layer input,
// the norms' outputs and the residual, with Transformer Engine's fp32
// rsigma): outside the TP regions, so a TP group shards them only under
// sequence parallelism (Korthikanti et al. 2022, Table 2: sbh(10 + 24/t +
// 5as/ht) without it, sbh(34/t + 5as/ht) with it). Only Megatron turns it
// off (--sequence-parallel), so Transformer Engine's tensors are counted.
double residual_saved_bytes_per_token(const PlanRequest& r);
double residual_forward_bytes_per_token(const PlanRequest& r);
// The saved count as a formula, for --explain.
std::string saved_bytes_formula(const PlanRequest& r);

}  // namespace ringsim
