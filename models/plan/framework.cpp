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
  const auto v = parse_choice(flag, s, framework_names());
  const auto& n = framework_names();
  return static_cast<Framework>(std::find(n.begin(), n.end(), v) - n.begin());
}

namespace {

FrameworkProfile pytorch_fsdp() {
  FrameworkProfile p;
  p.framework = Framework::PytorchFsdp;
  p.name = "pytorch-fsdp";
  p.sharding = StateSharding::Zero3;
  p.sharding_source =
      "ZeRO-3 (Rajbhandari et al. 2020, arXiv 1910.02054, sec. 3.1): 2 + 2 + 12 = 16 B/param "
      "sharded over cp x dp; TorchTitan's FSDP2 also totals 16 B/param";
  p.param_bytes = PlanConstants::kParamBytes;
  p.grad_bytes = PlanConstants::kGradBytes;
  p.optimizer_bytes = PlanConstants::kOptimizerBytes;
  p.fixed_overhead_bytes = PlanConstants::kFixedOverheadBytes;
  p.fixed_source = "assumption: 1.5 GiB for the CUDA context, cuBLAS workspaces, NCCL buffers";
  p.fragmentation = PlanConstants::kFragmentation;
  p.fragmentation_source = "assumption: 5% of the tensors' peak lost to the caching allocator";
  p.usable_hbm_fraction_gpu = 1;
  p.usable_hbm_source = "the whole HBM (--hbm to change it)";
  p.remat_source = "PyTorch activation checkpointing (full: per layer; selective: op-level SAC)";
  // torchao Float8Linear (TorchTitan docs/float8.md): tensorwise dynamic
  // scaling (no amax history), FP8 FSDP all-gather of the linear weights
  // (--float8.enable_fsdp_float8_all_gather), the fp8 weights recast in
  // backward rather than saved (--float8.force_recompute_fp8_weight_in_bwd);
  // matmul_with_hp_or_float8_args saves the high-precision input and weight.
  p.fp8_supported = true;
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
      "Megatron Core user guide, 'Distributed Optimizer' table: bf16 param + fp32 grads = "
      "6 + 12/d B/param, d = data-parallel size (cp x dp); params and grads not sharded";
  p.param_bytes = 2;
  p.grad_bytes = 4;
  p.optimizer_bytes = 12;
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
  p.fixed_overhead_bytes = 0;
  p.fixed_source = "none inside XLA's pool (the CUDA context is outside the preallocated 75%)";
  // assumption: XLA assigns buffers at compile time (buffer assignment), so
  // no allocator fragmentation is charged; no source quantifies it.
  p.fragmentation = 0;
  p.fragmentation_source =
      "assumption: none (XLA assigns buffers at compile time; no published fraction)";
  p.usable_hbm_fraction_gpu = 0.75;
  p.usable_hbm_source =
      "JAX docs 'GPU memory allocation': preallocates 75% of total GPU memory "
      "(XLA_PYTHON_CLIENT_MEM_FRACTION); TPUs: all HBM";
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
  p.fp8_supported = false;
  p.fp8_source = "not modelled for JAX/XLA";
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
