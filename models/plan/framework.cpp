#include "models/plan/framework.hpp"

#include <algorithm>

#include "models/core/parse.hpp"
#include "models/plan/basics.hpp"

namespace ringsim {

const std::vector<std::string>& framework_names() {
  static const std::vector<std::string> n{"pytorch-fsdp", "megatron", "jax-xla"};
  return n;
}
std::string to_string(Framework f) {
  return framework_names()[static_cast<int>(f)];
}
Framework parse_framework(const std::string& flag, const std::string& s) {
  return parse_named<Framework>(flag, s, framework_names());
}

const std::vector<Layout>& framework_layouts(Framework f) {
  static const std::vector<Layout> pytorch{Layout::Ring, Layout::Zigzag, Layout::Allgather},
      megatron{Layout::Zigzag, Layout::Allgather, Layout::Ulysses, Layout::Hybrid},
      jax{Layout::Ring, Layout::Zigzag, Layout::Allgather, Layout::Ulysses};
  switch (f) {
    case Framework::Megatron:
      return megatron;
    case Framework::JaxXla:
      return jax;
    default:
      return pytorch;
  }
}

const char* framework_layouts_source(Framework f) {
  switch (f) {
    case Framework::Megatron:
      return "Megatron-LM --cp-comm-type: p2p (TransformerEngine's ring over 2 x CP chunks: "
             "zigzag), all_gather, a2a (Ulysses), a2a+p2p (hybrid)";
    case Framework::JaxXla:
      return "MaxText context_parallel_strategy: all_gather, ring (load-balanced: zigzag; "
             "context_parallel_load_balance off: ring); Ulysses (pull request 4687)";
    default:
      return "PyTorch torch.distributed.tensor.experimental.context_parallel: the pass-KV ring "
             "(load balancing off: ring; the head-tail load balancer: zigzag) and the all-gather "
             "rotate method (set_rotate_method(\"allgather\"))";
  }
}

bool framework_implements(Framework f, Layout l) {
  const auto& v = framework_layouts(f);
  return std::find(v.begin(), v.end(), l) != v.end();
}

std::vector<Layout> framework_layouts(const PlanRequest& r) {
  return r.moves.layouts ? *r.moves.layouts : framework_layouts(r.framework);
}

bool framework_implements(const PlanRequest& r, Layout l) {
  const auto v = framework_layouts(r);
  return std::find(v.begin(), v.end(), l) != v.end();
}

namespace {

FrameworkProfile pytorch_fsdp() {
  FrameworkProfile p;
  p.framework = Framework::PytorchFsdp;
  p.name = "pytorch-fsdp";
  p.sharding = StateSharding::Zero3;
  p.sharding_source =
      "ZeRO-3 (Rajbhandari et al. 2020, arXiv 1910.02054, sec. 3.1) as TorchTitan's FSDP2 "
      "holds it: fp32 params 4 + fp32 grads 4 + Adam m, v 8 = 16 B/param sharded over cp x dp";
  // FSDP2 as TorchTitan configures it (mixed_precision_param bfloat16,
  // mixed_precision_reduce float32): the sharded parameters stay fp32 (the
  // master copy), their gradients are reduce-scattered in fp32 into fp32
  // shards, AdamW keeps m and v in fp32: 4 + 4 + 8 = 16 B per parameter.
  p.param_bytes = 4;
  p.grad_bytes = 4;
  p.optimizer_bytes = 8;
  p.grad_source =
      "TorchTitan (mixed_precision_reduce = float32): FSDP2 reduce-scatters fp32 gradients into "
      "fp32 shards of the fp32 parameters";
  p.runtime_terms = true;
  p.allocator_reserve = PlanConstants::kFragmentation;
  p.allocator_source =
      "assumption: the caching allocator reserves 5% above the tensors' peak (no published "
      "fraction; stated, not fitted)";
  p.fsdp_gathered_with_pp = true;
  p.fsdp_pp_source =
      "TorchTitan torchtitan/distributed/fsdp.py: fsdp_reshard_after_forward 'default' = not "
      "pp_enabled ('For PP, by default do not reshard after forward to avoid per-microbatch "
      "all-gathers'); torch.distributed.pipelining skips the gradient reduce-scatter until the "
      "last microbatch (set_requires_gradient_sync(False)), and FSDP2 accumulates the unsharded "
      "gradients in the reduce dtype (fp32)";
  p.saver = FrameworkProfile::Saver::PytorchEager;
  p.saver_source =
      "PyTorch eager autograd (TorchTitan's Llama); selective = TorchTitan's per-op SAC policy "
      "(torchtitan activation checkpointing, selective_ac_option 'op': sdpa outputs and every "
      "other matmul's output saved)";
  p.usable_hbm_fraction_gpu = 1;
  p.usable_hbm_source = "the whole HBM (--hbm to change it)";
  p.remat_source = "PyTorch activation checkpointing (full: per layer; selective: op-level SAC)";
  // torchao Float8Linear (TorchTitan docs/float8.md): tensorwise dynamic
  // scaling (no amax history), FP8 FSDP all-gather of the linear weights
  // (--float8.enable_fsdp_float8_all_gather), the fp8 weights recast in
  // backward rather than saved (--float8.force_recompute_fp8_weight_in_bwd);
  // matmul_with_hp_or_float8_args saves the high-precision input and weight.
  p.fp8_saves_cast_inputs = false;
  p.fp8_allgather = true;
  p.fp8_amax_history = 0;
  p.fp8_source =
      "TorchTitan docs/float8.md + torchao float8: tensorwise dynamic scaling, FP8 FSDP "
      "all-gather, bf16 inputs saved and recast in backward, output head kept bf16";
  return p;
}

FrameworkProfile megatron() {
  FrameworkProfile p = pytorch_fsdp();
  p.framework = Framework::Megatron;
  p.name = "megatron";
  // Megatron Core user guide, "Distributed Optimizer": bf16 params + fp32
  // grads cost 6 + 12/d bytes per parameter, d the data-parallel size
  // (here cp x dp: CP ranks hold the same weights); params and grads are not
  // distributed, only the optimizer state ([no] distribute model gradients,
  // [no] distribute model parameters). Tensor parallelism shards all of it.
  p.sharding = StateSharding::DistributedOptimizer;
  p.sharding_source =
      "Megatron Core user guide, 'Distributed Optimizer' table: bf16 params 2 + grads (bf16 2, "
      "or fp32 4: --grad-dtype) + 12/d B/param, d = data-parallel size x context-parallel size "
      "(the optimizer shards over the data-parallel group with context parallelism); params and "
      "grads not sharded";
  p.param_bytes = 2;
  p.grad_bytes = 2;
  p.optimizer_bytes = 12;
  p.grad_source =
      "bf16 main gradients, as NeMo 2.0's Llama recipes run in performance mode "
      "(nemo/collections/llm/recipes/llama3_*.py: recipe.trainer.plugins.grad_reduce_in_fp32 = "
      "False) and Megatron Core's DistributedDataParallelConfig defaults (grad_reduce_in_fp32 "
      "False); --grad-dtype fp32 for Megatron-LM's own bf16 default "
      "(accumulate_allreduce_grads_in_fp32) and the recipes' non-performance mode";
  p.fsdp_gathered_with_pp = false;
  p.saver = FrameworkProfile::Saver::TransformerEngine;
  p.saver_source =
      "Transformer Engine layers (LayerNormLinear, DotProductAttention, Linear) as Megatron Core "
      "builds a Llama layer: each saves its own inputs; selective recomputes the core attention "
      "(--recompute-modules core_attn)";
  p.remat_source = "Megatron-LM --recompute-granularity (full: per layer; selective)";
  // Transformer Engine (TE) Linear / LayerNormLinear / LayerNormMLP save the
  // FP8 cast of their input for the weight-gradient GEMM; Megatron-LM's
  // --fp8-amax-history-len defaults to 1 (TE's own DelayedScaling default is
  // 1024). Megatron does not shard weights over data parallel: no FSDP
  // all-gather.
  p.fp8_saves_cast_inputs = true;
  p.fp8_allgather = false;
  p.fp8_amax_history = 1;
  p.fp8_source =
      "Transformer Engine (DelayedScaling; Megatron-LM --fp8-amax-history-len default 1): "
      "FP8-cast linear inputs saved for backward, output head kept bf16";
  p.fp8_weights_supported = true;
  p.fp8_weights_default = true;
  p.fp8_weights_source =
      "Megatron-LM --fp8-param-gather ('Keep the compute param in fp8 ... and perform the param "
      "all-gather in fp8'), set by Megatron-Bridge's FP8 recipes (fp8_param_gather = True); "
      "Transformer Engine keeps the FP8 transpose beside it";
  return p;
}

FrameworkProfile jax_xla() {
  FrameworkProfile p = pytorch_fsdp();
  p.framework = Framework::JaxXla;
  p.name = "jax-xla";
  p.sharding_source =
      "FSDP (ZeRO-3, 16 B/param) as Ring Attention (Liu et al. 2023, arXiv 2310.01889) trains, "
      "sharded over cp x dp";
  // JAX docs, "GPU memory allocation": "JAX will preallocate 75% of the
  // total GPU memory when the first JAX operation is run"
  // (XLA_PYTHON_CLIENT_MEM_FRACTION); the CUDA context lives outside that
  // pool, so no fixed term is charged inside it. TPUs: the whole HBM.
  p.runtime_terms = true;
  // assumption: XLA assigns buffers at compile time (buffer assignment), so
  // no allocator reserve is charged; no source quantifies it.
  p.allocator_reserve = 0;
  p.allocator_source =
      "assumption: none (XLA assigns buffers at compile time; no published fraction)";
  p.fsdp_gathered_with_pp = false;
  p.fsdp_root_unit = false;
  p.fsdp_root_source =
      "XLA SPMD: an all-gather's result is a buffer like any other, freed after its last use "
      "(buffer assignment); the embedding is gathered for its lookup and the output head for "
      "the loss and its backward, neither during the layers' backward";
  // MaxText (weight_dtype float32): fp32 parameters, fp32 gradients, Adam's
  // m and v in fp32, all sharded (FSDP): 4 + 4 + 8 = 16 B per parameter.
  p.param_bytes = 4;
  p.grad_bytes = 4;
  p.optimizer_bytes = 8;
  p.grad_source = "MaxText weight_dtype float32: fp32 gradients, sharded as the parameters";
  p.saver = FrameworkProfile::Saver::JaxPolicy;
  p.saver_source =
      "MaxText's remat_policy (src/maxtext/layers/decoders.py): the named tensors each policy "
      "saves (--remat-policy)";
  p.usable_hbm_fraction_gpu = 1;
  p.usable_hbm_source =
      "JAX docs 'GPU memory allocation': the default policy is '0.75+', preallocate 75% of "
      "the GPU's memory and let ordinary buffers grow towards 100% "
      "(XLA_PYTHON_CLIENT_MEM_FRACTION sets the fraction); TPUs: the bytes_limit";
  // Blockwise FFN and loss: the Ring Attention / BPT JAX code scans the FFN
  // (scan_mlp) and the loss over chunks of the sequence; BPT's README
  // (Liu & Abbeel 2023, arXiv 2305.19370) trains with scan_mlp_chunk_size=2048.
  // assumption: the loss uses the same chunk.
  p.block_tokens = 2048;
  p.block_source =
      "Ring Attention / BPT JAX code (lhao499 BPT README: --llama.scan_mlp_chunk_size=2048); "
      "assumption: the loss scans the same chunk";
  p.remat_source =
      "jax.checkpoint policies: full = nothing_saveable, selective = dots_saveable, none = "
      "everything_saveable";
  // FP8 on GPUs (TPUs up to v5p have no FP8 matrix unit: catalog fp8 = 0):
  // Flax's Fp8DotGeneralOp (MaxText quantization "fp8") quantizes each dot's
  // operands with delayed scaling over an amax history of 1024, and XLA's GPU
  // GEMM rewriter runs the dot as a cuBLASLt FP8 GEMM; autodiff saves the
  // bf16 operands its remat policy names, and the FSDP gather stays bf16.
  p.fp8_saves_cast_inputs = false;
  p.fp8_allgather = false;
  p.fp8_amax_history = 1024;
  p.fp8_source =
      "flax/linen/fp8_ops.py (Fp8DotGeneralOp: delayed scaling, amax_history_length 1024; "
      "MaxText quantization 'fp8'); XLA GPU gemm_rewriter (FP8 dots as cuBLASLt FP8 GEMMs); "
      "bf16 operands saved by the remat policy, bf16 FSDP all-gather (assumption: no FP8 "
      "gather); unvalidated: no published JAX FP8 run on the scoreboard";
  return p;
}

}  // namespace

const FrameworkProfile& framework_profile(Framework f) {
  static const FrameworkProfile profiles[] = {pytorch_fsdp(), megatron(), jax_xla()};
  return profiles[static_cast<int>(f)];
}

const FrameworkProfile& framework_profile(const PlanRequest& r) {
  return framework_profile(r.framework);
}

double grad_bytes(const PlanRequest& r) {
  return r.grad_bytes > 0 ? r.grad_bytes : framework_profile(r).grad_bytes;
}

bool fp8_weights(const PlanRequest& r) {
  if (r.precision != Precision::FP8) return false;
  return r.fp8_weights < 0 ? framework_profile(r).fp8_weights_default : r.fp8_weights == 1;
}

bool fully_sharded(const PlanRequest& r) {
  if (framework_profile(r).sharding == StateSharding::Zero3) return true;
  return r.fsdp == 1;
}

double usable_hbm_bytes(const PlanRequest& r, const Hardware& hw) {
  const double hbm = r.hbm_bytes > 0 ? r.hbm_bytes : hw.hbm_bytes;
  return r.tpu ? hbm : hbm * framework_profile(r).usable_hbm_fraction_gpu;
}

const char* remat_policy_name(int checkpointing) {
  switch (static_cast<Checkpointing>(checkpointing)) {
    case Checkpointing::Full:
      return "nothing_saveable";
    case Checkpointing::Selective:
      return "dots_saveable";
    case Checkpointing::None:
      break;
  }
  return "everything_saveable";
}

}  // namespace ringsim
