#pragma once
// The planner's vocabulary: what is asked (PlanRequest), the stated constants
// of the training memory model, parameter and FLOP counts of a Llama-style
// decoder, and why a configuration does not fit (Infeasibility). Formulas and
// their sources are at each function and in docs/plan.md.
//
// Parallelism: tensor parallel (tp, innermost, inside a node) x context
// parallel (cp) x data parallel (dp), tp * cp * dp = devices. Parameters,
// gradients and optimizer states are sharded ZeRO-3 / FSDP over all
// cp * dp ranks of a tensor-parallel slice (CP ranks hold the same weights,
// as TorchTitan's flattened dp_shard x cp mesh does).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/analytic/analytic.hpp"
#include "models/core/workload.hpp"
#include "models/plan/calibration.hpp"
#include "models/plan/framework.hpp"
#include "models/plan/moves.hpp"
#include "models/plan/precision.hpp"

namespace ringsim {

enum class Checkpointing { None, Selective, Full };
enum class LossImpl { Eager, Chunked, Compiled, Fused };
// How the layers split over pipeline stages (--pp-layout; models/plan/
// pipeline.hpp stage_split, docs/plan.md "Pipeline parallelism").
enum class PipelineLayout { Auto, Balanced, Even, EmbeddingLoss };
const std::vector<std::string>& pipeline_layout_names();  // auto balanced even embedding-loss
std::string to_string(PipelineLayout l);
PipelineLayout parse_pipeline_layout(const std::string& flag, const std::string& s);
// Pipeline schedules (--pp-schedule; models/plan/schedule.hpp, docs/plan.md
// "Pipeline schedules").
enum class PipelineSchedule { OneFOneB, Interleaved, ZbH1, ZbV, DualPipe };
const std::vector<std::string>& pipeline_schedule_names();  // 1f1b interleaved zb-h1 zb-v dualpipe
std::string to_string(PipelineSchedule s);
PipelineSchedule parse_pipeline_schedule(const std::string& flag, const std::string& s);
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
  // The same loss under torch.compile (--loss compiled): Inductor fuses the
  // upcast, log-softmax and NLL into one kernel that saves the bf16 logits
  // (2) and a per-token log-sum-exp, and writes the bf16 logits gradient (2)
  // in one backward kernel: 4 B per logit at the backward's peak.
  static constexpr double kCompiledLossBytesPerLogit = 4;
  // A hand-written fused cross-entropy kernel (--loss fused: flash-attn's
  // CrossEntropyLoss, flash_attn/losses/cross_entropy.py, the default
  // loss_fn 'fused_crossentropy' of LLM Foundry's MPT) reads the bf16 logits
  // and keeps a per-token log-sum-exp; its backward writes the bf16 logits
  // gradient (inplace_backward off, the default): 2 + 2 B per logit.
  static constexpr double kFusedLossBytesPerLogit = 4;
  static constexpr std::int64_t kLossChunkTokens = 4096;  // --loss chunked
  // CUDA context + cuBLAS workspaces + NCCL communicator buffers.
  static constexpr double kFixedOverheadBytes = 1.5 * 1024 * 1024 * 1024;
  // Caching-allocator fragmentation, as a fraction of the modelled tensors.
  static constexpr double kFragmentation = 0.05;
  // The memory model's band: the scoreboard's measured-peak cases hold it
  // within 10% (ringsim validate, peak_memory_gib; docs/validation.md). A
  // config whose estimate is over the HBM by less than that cannot be told
  // from one that fits: it is "tight", kept and marked, never refused.
  static constexpr double kMemoryBand = 0.10;
  // Over the HBM by at most the band, of the HBM: the band is the model's
  // error relative to a measured peak, so a true peak that fits allows an
  // estimate of hbm x 1.1 (not hbm / 0.9).
  static bool tight(double total, double hbm) {
    return total > hbm && total <= hbm * (1 + kMemoryBand);
  }
  // AdamW update traffic per parameter shard: read master, m, v (12) + grad
  // (2), write master, m, v (12) + bf16 param (2).
  static constexpr double kOptimizerTrafficBytes = 28;
};

// plan's default batch where neither the flag nor the model card gives one:
// 4M tokens, Llama 2's pre-training batch (Llama 2 paper, Section 2.2).
inline constexpr std::int64_t kDefaultBatchTokens = std::int64_t{1} << 22;

struct PlanRequest {
  ModelShape shape;          // shape.layers is the depth trained
  std::int64_t context = 0;  // tokens per sequence
  std::int64_t gpus = 0;
  // Multi-slice TPU jobs (--slices): gpus split into this many ICI slices,
  // data-parallel across them over the data-centre network (MaxText's
  // dcn_data_parallelism); FSDP and every other axis stay inside a slice.
  std::int64_t slices = 1;
  double dcn_bandwidth_per_chip = 0, dcn_latency = 0;
  std::int64_t global_batch_tokens = 0;  // 0: one sequence per data-parallel replica
  std::string batch_source;  // where the batch comes from, for the header ("" = the flag)
  bool any_layout = false;   // --framework any: every layout, not only the framework's
  Checkpointing checkpointing = Checkpointing::Full;
  LossImpl loss = LossImpl::Eager;
  bool causal = true;
  DType dtype = DType::BF16;             // activations, params and compute
  std::vector<std::int64_t> cp_degrees;  // empty: powers of two dividing gpus (<= kMaxAutoCp)
  std::vector<Layout> layouts;           // empty: all six
  std::vector<int> tp_degrees{1};
  double hbm_bytes = 0;  // 0: the hardware's
  // Precision (precision.hpp): the linears in bf16 or FP8, attention in bf16
  // or fp32 (--attention-precision). The FP8 rate comes from the catalog.
  Precision precision = Precision::BF16;
  // --fp8-recipe (megatron): how per-tensor scales are found; delayed is
  // Megatron-LM's default, tensorwise adds current scaling's amax pass.
  Fp8Recipe fp8_recipe = Fp8Recipe::Delayed;
  DType attention_dtype = DType::BF16;
  double fp8_flops = 0;            // the device's dense FP8 peak (catalog peak_flops.fp8); 0: none
  double fp8_gemm_efficiency = 0;  // fraction of it a large FP8 GEMM reaches
  // Framework memory rules (framework.hpp); `tpu`: the device is a TPU (the
  // JAX/XLA GPU preallocation fraction does not apply).
  Framework framework = Framework::PytorchFsdp;
  bool tpu = false;
  // Pipeline parallelism (models/plan/pipeline.hpp): stages searched (empty:
  // powers of two, `--pp auto`), virtual stages per device (1: plain 1F1B),
  // microbatches per data-parallel replica per step (0: the default).
  std::vector<std::int64_t> pp_degrees{1};
  int pp_virtual = 1;
  std::int64_t microbatches = 0;
  // Schedules searched (--pp-schedule; empty: auto, what the framework
  // implements, models/plan/schedule.hpp framework_schedules).
  std::vector<PipelineSchedule> pp_schedules;
  // HSDP (--dp-replicate): the data-parallel ranks split into this many
  // replica groups, the state sharded inside each (FSDP2's
  // data_parallel_replicate_degree); 1: sharded over all of them. 0: searched.
  std::int64_t dp_replicate = 1;
  // The layers' split over the stages, and Megatron's uneven edge stages
  // (--pp-first-stage-layers / --pp-last-stage-layers; 0: the layout's own).
  PipelineLayout pp_layout = PipelineLayout::Auto;
  int pp_first_layers = 0, pp_last_layers = 0;
  // Execution (models/plan/execution.hpp): torch.compile under pytorch-fsdp,
  // TP collectives overlapped with the GEMMs (-1: the framework's default),
  // sequences per micro-step fixed (0: searched).
  bool compile = false;
  int tp_overlap = -1;
  // Megatron's --sequence-parallel (--sequence-parallel on|off): the TP
  // group shards the residual stream's ops and activations over the
  // sequence (all-gathers + reduce-scatters); off, every rank runs and keeps
  // them whole and the group all-reduces (Megatron-LM before Korthikanti et
  // al. 2022, or Megatron-DeepSpeed without the flag).
  bool sequence_parallel = true;
  // Dropout of the attention probabilities (--attention-dropout): GPT-3
  // style configs and Megatron-LM's default 0.1; Llama-style models 0.
  double attention_dropout = 0;
  // Megatron's distributed optimizer: its once-per-step reduce-scatter and
  // all-gather overlapped with the last and first microbatch (--dp-overlap).
  bool dp_overlap = true;
  // Mixture of experts (docs/plan.md, "Mixture of experts"): the expert-
  // parallel degree (--ep; the search sets it per row when 0), the capacity
  // factor (0: dropless, Megatron-Core's default) and the seed of the
  // sampled routing that sets the slowest rank's load.
  std::int64_t ep = 1;
  std::vector<std::int64_t> ep_degrees;  // --ep given: searched over these; empty: auto
  double capacity_factor = 0;
  std::uint64_t routing_seed = 1;
  // Expert tensor parallelism (--etp): the experts' width splits over etp
  // GPUs; 0 = tp (Megatron-Core's default). The EP x ETP groups fold over
  // the tp x cp x dp ranks (MoE parallel folding).
  std::int64_t etp = 0;
  // The token dispatcher (--ep-dispatcher): false, Megatron-Core's alltoall
  // (one NCCL all-to-all of every routed copy); true, flex (DeepEP /
  // HybridEP: a token crosses to each remote node holding one of its
  // experts once, then fans out over NVLink). --ep-overlap: the dispatch and
  // combine of one micro-batch run beside another's compute (Megatron-Core's
  // overlap_moe_expert_parallel_comm; DeepSeek-V3's DualPipe).
  bool ep_flex = false;
  bool ep_overlap = false;
  std::int64_t micro_batch = 0;
  // The framework-level calibration applied to the step (models/plan/
  // calibration.hpp): 1 and empty under --calibration none.
  double calibration = 1;
  std::string calibration_key;
  // --calibration FILE (written by `ringsim calibrate --runs`): the user's
  // factors, which replace the project's for the groups they cover.
  std::shared_ptr<const Calibration> user_calibration;
  std::string calibration_file;
  // Whether the applied factor came from that file.
  bool calibration_from_file = false;
  // The framework's assumptions moved by --set frameworks.NAME.FIELD.
  FrameworkMoves moves;
  // Memory rules a run may set apart from its framework's defaults
  // (framework.hpp): the gradients' dtype in bytes (0: the framework's),
  // FP8 weights (-1: the framework's; Megatron's --fp8-param-gather), and a
  // named jax.checkpoint policy (jax-xla: MaxText's remat_policy; empty: the
  // one --activation-checkpointing maps to; models/plan/activations.hpp).
  int grad_bytes = 0;
  int fp8_weights = -1;
  // --fsdp on|off (-1: the framework's): Megatron with --use-megatron-fsdp
  // shards params, gradients and optimizer state over cp x dp (ZeRO-3).
  int fsdp = -1;
  // Megatron's partial recompute and activation offloading: with full
  // checkpointing, only --recompute-layers N layers per stage and model
  // chunk recompute (recompute_method block; 0: all), and the activations of
  // --offload-layers M layers per stage go to host memory
  // (cpu_offloading_num_layers; 0: none).
  int recompute_layers = 0, offload_layers = 0;
  // pytorch-fsdp: a fused RMSNorm kernel (--norm fused, TorchTitan's
  // fused_rmsnorm) instead of the eager one that keeps an fp32 copy.
  bool fused_norm = false;
  std::string remat_policy;
  // The attention kernel's catalog name (models/kernel/implementation.hpp):
  // what TorchTitan's per-op checkpointing policy saves depends on it.
  std::string kernel;
  // --memory-check off: time configurations the memory model says do not fit
  // (validating runs that did fit; docs/validation.md). Their rows keep the
  // memory total, over the HBM.
  bool memory_check = true;
};

// Like-for-like rows: one global batch for every row, the model card's or
// kDefaultBatchTokens, in whole sequences (at least one), with the words that
// say where it came from (r.batch_source). What `plan` does without
// --global-batch-tokens, and every in-process caller that stands for plan.
void set_default_batch(PlanRequest& r);

// `--tp auto`: powers of two within a node that divide the KV heads and the
// GPU count (what `plan` searches unless --tp fixes one).
std::vector<int> auto_tp_degrees(const PlanRequest& r, const Hardware& hw);

constexpr std::int64_t kMaxAutoCp = 1024;  // analytic cost grows as cp^2

// Parameter counts of a Llama-style decoder (GQA attention, SwiGLU MLP, two
// RMSNorms per layer, untied input embedding and output head); layer_params is
// models/analytic/analytic.hpp's (the simulator's job mode gathers them too).
std::uint64_t embedding_params(const ModelShape& s);  // vocab x d_model, each of embedding and head
std::uint64_t total_params(const ModelShape& s);
// The routed experts' parameters per layer, the mean over every layer (0 for
// a dense model): what expert parallelism shards.
std::uint64_t expert_layer_params(const ModelShape& s);
// The parameters a token passes through (a MoE model's top-k and shared
// experts; every parameter of a dense one).
std::uint64_t active_params(const ModelShape& s);

// Bytes per token per layer kept for backward (bf16, flash attention, no
// dropout; Korthikanti et al. 2022 arXiv 2205.05198 sec. 4.1 method applied to
// a Llama layer): 8D + 2d(H+2kvh) + 2Hd + 4H + 8F without checkpointing.
double activation_bytes_per_token(const ModelShape& s, Checkpointing c);

// Model FLOPs per token, PaLM (Chowdhery et al. 2022, arXiv 2204.02311, app.
// B): 6N + 12 L H d S with N the non-embedding parameters (the output head
// counts, the embedding lookup does not). `causal` halves the attention term
// (a causal mask computes half the score matrix), which is what `mfu` uses;
// `mfu_palm` keeps PaLM's full 12 L H d S.
// Under chunked attention (ModelShape::attention_chunk) the chunked layers'
// term counts the chunk, not the context.
double model_flops_per_token(const ModelShape& s, std::int64_t context, bool causal);

// Whether the model's chunked-attention layers attend to less than the whole
// sequence of `context` tokens (false without chunked attention, or when one
// chunk covers the sequence: those layers are then global ones), and the
// chunks they attend within (the last one shorter when the chunk does not
// divide the context; empty when they do not apply).
bool chunked_attention_applies(const ModelShape& s, std::int64_t context);
std::vector<std::int64_t> attention_chunks(const ModelShape& s, std::int64_t context);

// Sequences per optimizer step: the global batch; else --microbatches
// sequences per replica; else, with pp > 1 stages, pp per replica (M = pp);
// else one per replica.
std::int64_t sequences_per_step(const PlanRequest& r, std::int64_t dp, std::int64_t pp = 1);

// group_hardware(hw, tp), the hardware as the CP and FSDP groups see it, is
// models/core/workload.hpp's (shared with `ringsim run --tp`).

// The attention workload one device runs (one layer's shape under tensor
// parallelism, `layers` = the model's, pass fwd+bwd, batch 1).
Workload attention_workload(const PlanRequest& r, Layout layout, std::int64_t cp, std::int64_t tp,
                            int ulysses_degree);

// Why a configuration is not feasible, as data: the kind, the rule or the
// memory term, and a hint the caller may show once (never folded into the
// text, so a table can group rows by their reason and say the hint apart).
struct Infeasibility {
  enum class Kind { Fits, Rule, Memory, NoTime };
  Kind kind = Kind::Fits;
  std::string rule;  // Rule: the shape, batch or layout rule broken; NoTime: why no step time
  // Memory: the total against the HBM, and the largest term.
  double needed_bytes = 0, hbm_bytes = 0;
  std::string term, term_phase;  // term_phase: persistent | loss | layer_backward | overhead
  double term_bytes = 0;
  std::string hint;         // e.g. a flag that would make it fit; "" if none
  std::int64_t stage = -1;  // Memory under pipeline parallelism: the worst stage (-1: no pipeline)

  bool fits() const { return kind == Kind::Fits; }
  std::string text() const;       // one line, without the hint
  std::string line() const;       // text and, if any, "; " + hint
  const char* kind_name() const;  // fits | rule | memory | no_time
};

}  // namespace ringsim
