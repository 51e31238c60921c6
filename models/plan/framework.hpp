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

enum class StateSharding {
  Zero3,                // params, grads, optimizer sharded over every rank of a TP slice (FSDP)
  DistributedOptimizer  // Megatron: only the fp32 optimizer state sharded over data parallel
};

struct FrameworkProfile {
  Framework framework = Framework::PytorchFsdp;
  const char* name = "";
  StateSharding sharding = StateSharding::Zero3;
  const char* sharding_source = "";
  // Persistent bytes per parameter (before sharding): bf16 params, grads
  // (bf16 or the fp32 main grads), optimizer state (fp32 master, m, v).
  double param_bytes = 2, grad_bytes = 2, optimizer_bytes = 12;
  double fixed_overhead_bytes = 0;  // CUDA context, library workspaces, communicator buffers
  const char* fixed_source = "";
  double fragmentation = 0;  // fraction of the tensors' peak the allocator loses
  const char* fragmentation_source = "";
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
  bool fp8_supported = true;
  bool fp8_saves_cast_inputs = false;
  bool fp8_allgather = false;
  int fp8_amax_history = 0;
  const char* fp8_source = "";
};

const FrameworkProfile& framework_profile(Framework f);
const FrameworkProfile& framework_profile(const PlanRequest& r);

// HBM the configuration may fill: --hbm or the device's, times the
// framework's usable fraction on a GPU (JAX preallocates 75%).
double usable_hbm_bytes(const PlanRequest& r, const Hardware& hw);

// jax.checkpoint policy the checkpointing flag maps to under jax-xla.
const char* remat_policy_name(int checkpointing);

}  // namespace ringsim
