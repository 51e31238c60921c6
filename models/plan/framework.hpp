#pragma once
// Framework profiles (docs/plan.md, "Framework profiles"): the memory rules
// a training framework brings, as data, one struct per framework, each rule
// with its source in framework.cpp. pytorch-fsdp is the planner's original
// rule set, unchanged.
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/workload.hpp"

namespace ringsim {

struct PlanRequest;  // models/plan/basics.hpp

enum class Framework { PytorchFsdp, Megatron, JaxXla };
const std::vector<std::string>& framework_names();  // pytorch-fsdp, megatron, jax-xla
std::string to_string(Framework f);
Framework parse_framework(const std::string& flag, const std::string& s);
// The context-parallel layouts a framework implements (docs/plan.md,
// "Framework x layout"), and where each is documented; plan ranks only these
// unless --framework any.
const std::vector<Layout>& framework_layouts(Framework f);
const char* framework_layouts_source(Framework f);
bool framework_implements(Framework f, Layout l);
// The same for a request: its framework's, or those --set moved
// (frameworks.NAME.layouts).
std::vector<Layout> framework_layouts(const PlanRequest& r);
bool framework_implements(const PlanRequest& r, Layout l);

enum class StateSharding {
  Zero3,                // params, grads, optimizer sharded over every rank of a TP slice (FSDP)
  DistributedOptimizer  // Megatron: only the fp32 optimizer state sharded over data parallel
};

struct FrameworkProfile {
  Framework framework = Framework::PytorchFsdp;
  const char* name = "";
  StateSharding sharding = StateSharding::Zero3;
  const char* sharding_source = "";
  // Persistent bytes per parameter (before sharding): params, grads (their
  // dtype: --grad-dtype overrides), optimizer state (fp32 master, m, v).
  double param_bytes = 2, grad_bytes = 2, optimizer_bytes = 12;
  const char* grad_source = "";
  // The runtime outside the framework's allocator (CUDA context, NCCL
  // buffers, the driver's reserve: models/plan/runtime_memory.hpp) is
  // charged on a GPU; XLA's pool (jax-xla) leaves it outside its fraction.
  bool runtime_terms = true;
  double allocator_reserve = 0;  // fraction of the tensors' peak the caching allocator holds
  const char* allocator_source = "";
  // FSDP with pipeline parallelism (TorchTitan's fsdp_reshard_after_forward
  // "default"): a stage keeps its parameters gathered across microbatches
  // and accumulates unsharded gradients in the reduce dtype until the last.
  bool fsdp_gathered_with_pp = false;
  const char* fsdp_pp_source = "";
  // PyTorch FSDP wraps the embedding, output head and final norm in the root
  // unit, gathered for the whole step; XLA gathers each weight where it is
  // used and frees it after its last use, so the head is live at the loss only.
  bool fsdp_root_unit = true;
  const char* fsdp_root_source = "";
  // Which saved-activation count applies (models/plan/activations.hpp).
  enum class Saver { PytorchEager, TransformerEngine, JaxPolicy } saver = Saver::PytorchEager;
  const char* saver_source = "";
  // Fraction of a GPU's HBM the program may use (TPUs: all of it).
  double usable_hbm_fraction_gpu = 1;
  const char* usable_hbm_source = "";
  // Blockwise FFN and loss (Ring Attention's JAX code): tokens per chunk; 0: none.
  std::int64_t block_tokens = 0;
  const char* block_source = "";
  const char* remat_source = "";  // how --activation-checkpointing maps onto the framework
  // FP8 (precision.hpp): whether the linears save their FP8-cast inputs for
  // backward (Transformer Engine) or the bf16 ones (torchao), whether FSDP
  // all-gathers FP8 weights, and the delayed-scaling amax history (0: dynamic).
  bool fp8_saves_cast_inputs = false;
  bool fp8_allgather = false;
  int fp8_amax_history = 0;
  const char* fp8_source = "";
  // FP8 weights (--fp8-weights): the linears' weights stored in FP8 with
  // their transpose, no bf16 copy (Megatron's --fp8-param-gather); the
  // framework's default, and whether it can at all.
  bool fp8_weights_default = false, fp8_weights_supported = false;
  const char* fp8_weights_source = "";
};

const FrameworkProfile& framework_profile(Framework f);
const FrameworkProfile& framework_profile(const PlanRequest& r);

// HBM the configuration may fill: --hbm or the device's, times the
// framework's usable fraction on a GPU (JAX preallocates 75%).
double usable_hbm_bytes(const PlanRequest& r, const Hardware& hw);

// jax.checkpoint policy the checkpointing flag maps to under jax-xla.
const char* remat_policy_name(int checkpointing);

// The request's rules where it overrides the framework's: gradient bytes per
// parameter (its dtype) and whether the linears' weights are FP8.
double grad_bytes(const PlanRequest& r);
bool fp8_weights(const PlanRequest& r);
// Whether every state is sharded ZeRO-3 style: pytorch-fsdp and jax-xla
// always, megatron with --fsdp on (Megatron FSDP).
bool fully_sharded(const PlanRequest& r);

}  // namespace ringsim
