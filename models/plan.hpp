#pragma once
// Capacity planning for training: does model M at context S fit on G devices,
// with which context-parallel degree, layout and block, how long is a step,
// how many tokens/s per device and what MFU. Pure library code: the search,
// the training memory model and the step-time model. Formulas and their
// sources are at each function and in docs/plan.md.
//
// Parallelism: tensor parallel (tp, innermost, inside a node) x context
// parallel (cp) x data parallel (dp), tp * cp * dp = devices. Parameters,
// gradients and optimizer states are sharded ZeRO-3 / FSDP over all
// cp * dp ranks of a tensor-parallel slice (CP ranks hold the same weights,
// as TorchTitan's flattened dp_shard x cp mesh does).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/workload.hpp"

namespace ringsim {

class ComputeModel;  // models/profile.hpp

enum class Checkpointing { None, Selective, Full };
enum class LossImpl { Eager, Chunked };
const std::vector<std::string>& checkpointing_names();
const std::vector<std::string>& loss_names();
std::string to_string(Checkpointing c);
std::string to_string(LossImpl l);
Checkpointing parse_checkpointing(const std::string& flag, const std::string& s);
LossImpl parse_loss(const std::string& flag, const std::string& s);

// Stated constants of the memory model (docs/plan.md gives the reasons).
struct PlanConstants {
  // Mixed-precision AdamW, ZeRO (Rajbhandari et al. 2020, arXiv 1910.02054,
  // sec. 3.1): bf16 params 2 + bf16 grads 2 + fp32 master, m, v 12 = 16 B/param.
  static constexpr double kParamBytes = 2, kGradBytes = 2, kOptimizerBytes = 12;
  // Cross-entropy on logits upcast to fp32 (PyTorch eager, as TorchTitan's
  // loss does): peak 12 B per (token, vocab entry) in the loss backward
  // (saved fp32 log-softmax 4 + its incoming grad 4 + the logits grad 4).
  static constexpr double kLossBytesPerLogit = 12;
  static constexpr std::int64_t kLossChunkTokens = 4096;  // --loss chunked
  // CUDA context + cuBLAS workspaces + NCCL communicator buffers.
  static constexpr double kFixedOverheadBytes = 1.5 * 1024 * 1024 * 1024;
  // Caching-allocator fragmentation, as a fraction of the modelled tensors.
  static constexpr double kFragmentation = 0.05;
  // AdamW update traffic per parameter shard: read master, m, v (12) + grad
  // (2), write master, m, v (12) + bf16 param (2).
  static constexpr double kOptimizerTrafficBytes = 28;
};

struct PlanRequest {
  ModelShape shape;          // shape.layers is the depth trained
  std::int64_t context = 0;  // tokens per sequence
  std::int64_t gpus = 0;
  std::int64_t global_batch_tokens = 0;  // 0: one sequence per data-parallel replica
  Checkpointing checkpointing = Checkpointing::Full;
  LossImpl loss = LossImpl::Eager;
  bool causal = true;
  DType dtype = DType::BF16;             // activations, params and compute
  std::vector<std::int64_t> cp_degrees;  // empty: powers of two dividing gpus (<= kMaxAutoCp)
  std::vector<Layout> layouts;           // empty: all six
  std::vector<int> tp_degrees{1};
  double hbm_bytes = 0;  // 0: the hardware's
};

constexpr std::int64_t kMaxAutoCp = 1024;  // analytic cost grows as cp^2

// Parameter counts of a Llama-style decoder (GQA attention, SwiGLU MLP, two
// RMSNorms per layer, untied input embedding and output head).
std::uint64_t layer_params(const ModelShape& s);
std::uint64_t embedding_params(const ModelShape& s);  // vocab x d_model, each of embedding and head
std::uint64_t total_params(const ModelShape& s);

// Bytes per token per layer kept for backward (bf16, flash attention, no
// dropout; Korthikanti et al. 2022 arXiv 2205.05198 sec. 4.1 method applied to
// a Llama layer): 8D + 2d(H+2kvh) + 2Hd + 4H + 8F without checkpointing.
double activation_bytes_per_token(const ModelShape& s, Checkpointing c);

struct PlanMemoryItem {
  std::string name;
  double bytes = 0;
  std::string phase;  // persistent | loss | layer_backward | overhead
  std::string formula;
};

struct PlanMemory {
  std::vector<PlanMemoryItem> items;
  double persistent = 0, loss_phase = 0, backward_phase = 0, overhead = 0;
  double total = 0;  // persistent + max(loss, backward) + overhead
  std::string peak_phase;
  const PlanMemoryItem& largest() const;
};

struct PlanTime {
  std::string engine = "analytic";  // who produced the attention times
  // Seconds per step (all micro-steps, all layers) unless noted.
  double attention_s = 0;            // fwd + bwd, = analyze(fwdbwd, layers) x micro-batch
  double attention_recompute_s = 0;  // full checkpointing: one more forward
  double other_compute_s = 0;        // projections + MLP (+ recompute) by roofline
  double pointwise_s = 0;            // norms, RoPE, residuals, SwiGLU by HBM roofline
  double head_s = 0;                 // output projection + loss
  double tp_comm_s = 0;              // sequence-parallel all-gathers/reduce-scatters (exposed)
  double fsdp_comm_s = 0;            // FSDP all-gathers + reduce-scatters (link time)
  double cp_link_s = 0;              // ring transfers + CP collectives (link time)
  double fsdp_exposed_s = 0;         // FSDP time not hidden behind compute
  double micro_step_s = 0;           // one micro-step
  double optimizer_s = 0;            // AdamW update by HBM roofline
  double step_time_s = 0;            // grad_accum x micro_step + optimizer
};

struct PlanConfig {
  Layout layout = Layout::Ring;
  std::int64_t cp = 1, tp = 1, dp = 1;
  std::int64_t block = 0;        // tokens per device per sequence = context / cp
  std::int64_t micro_batch = 1;  // sequences per CP group per micro-step
  std::int64_t grad_accum = 1;   // micro-steps per step
  int ulysses_degree = 0;        // hybrid only
  bool feasible = false;
  std::string reason;         // why not (or empty)
  double overflow_bytes = 0;  // memory total - HBM (> 0 when memory-infeasible)
  bool evaluated = false;     // memory/time computed (false: rejected by a shape rule)
  PlanMemory memory;
  PlanTime time;
  double tokens_per_step = 0;
  double tokens_per_s_per_gpu = 0;
  double model_flops_per_step = 0;  // causal-aware PaLM convention (see model_flops_per_token)
  double mfu = 0, mfu_palm = 0;
  std::string label() const;  // "zigzag cp 32" / "none" / "... tp 2"
};

// Model FLOPs per token, PaLM (Chowdhery et al. 2022, arXiv 2204.02311, app.
// B): 6N + 12 L H d S with N the non-embedding parameters (the output head
// counts, the embedding lookup does not). `causal` halves the attention term
// (a causal mask computes half the score matrix), which is what `mfu` uses;
// `mfu_palm` keeps PaLM's full 12 L H d S.
double model_flops_per_token(const ModelShape& s, std::int64_t context, bool causal);

// Attention times that replace the analytic ones (a SimGrid re-check):
// seconds per layer for one sequence, forward and forward+backward.
struct AttentionOverride {
  double fwd_layer_s = 0, fwdbwd_layer_s = 0;
  std::string engine;
};

// The attention workload one device runs for this config (one layer's shape
// under tensor parallelism, `layers` = the model's, pass fwd+bwd, batch 1).
Workload attention_workload(const PlanRequest& r, const PlanConfig& c);
// The hardware as the CP and FSDP groups see it (tp ranks per node are taken
// by tensor parallelism).
Hardware group_hardware(const Hardware& hw, std::int64_t tp);

// Evaluates one config; never throws for an infeasible one (reason is set).
PlanConfig evaluate(const PlanRequest& r, const Hardware& hw, const ComputeModel& cm, Layout layout,
                    std::int64_t cp, std::int64_t tp, std::int64_t micro_batch,
                    const std::optional<AttentionOverride>& attention = std::nullopt,
                    bool memory_only = false);

// Memory of one config (the request's context); shape rules are not checked.
PlanMemory training_memory(const PlanRequest& r, const Hardware& hw, Layout layout, std::int64_t cp,
                           std::int64_t tp, std::int64_t micro_batch);

// All configs, ranked: feasible by tokens/s per device (best first), then the
// infeasible ones, closest to fitting first. Throws InputError for a request
// that no config can express (e.g. --cp not dividing --gpus).
std::vector<PlanConfig> search(const PlanRequest& r, const Hardware& hw, const ComputeModel& cm);

struct MaxContextEntry {
  Layout layout;
  std::int64_t cp, tp;
  std::int64_t max_context = 0;  // 0: not even the smallest context fits
  std::int64_t granularity = 0;  // lcm(1024, 2 cp): the search step
  std::string limited_by;        // largest memory term one step above (or the rule that stops it)
  std::string label;
};

struct MaxContext {
  std::int64_t tokens = 0;                 // longest context any config fits (0: none)
  std::int64_t granularity = 0;            // the coarsest step of any config
  std::vector<MaxContextEntry> by_config;  // sorted, longest first
};

// Longest context (a multiple of lcm(1024, 2 cp)) that fits in HBM, per config
// and overall, up to `limit` tokens. Memory is non-decreasing in the context,
// so each config is a binary search on memory alone.
MaxContext max_context(const PlanRequest& r, const Hardware& hw, std::int64_t limit);

}  // namespace ringsim
