#pragma once
// How a framework executes one transformer layer (docs/plan.md, "Frameworks
// as they execute"): which GEMMs it fuses, how many bytes its memory-bound
// ops move and in how many kernels, what each kernel costs the host to issue
// and the device to start, what "selective" activation checkpointing
// recomputes, and how its data-parallel state is communicated. One struct per
// execution mode, each number with its source in execution.cpp; the planner's
// step time (step_time.cpp) and `infer` read them.
#include <cstdint>
#include <string>

#include "models/core/workload.hpp"

namespace ringsim {

struct PlanRequest;  // models/plan/basics.hpp

// Host issue cost of one eager PyTorch kernel: Meta's Holistic Trace
// Analysis docs (cuda_kernel_launch_stats): "Usually, the launch time on the
// CPU side is between 5-20 microseconds"; 10 us, inside that range, is an
// assumption. Device-side cost between dependent kernels: CUDA.jl's CUDA
// graphs docs measure 80 kernels in 70 us as a graph, about 0.9 us each, the
// device's floor once the host is out of the way.
inline constexpr double kEagerDispatch = 10e-6;
inline constexpr double kCompiledDispatch =
    5e-6;  // HTA's lower bound: Inductor's wrapper, fewer layers
inline constexpr double kKernelGap = 0.9e-6;

// What "selective" activation checkpointing recomputes in the backward pass.
enum class SelectiveRecompute {
  OpLevel,        // TorchTitan's op SAC: every other matmul and every pointwise op
  CoreAttention,  // Megatron-LM: the attention kernel (Korthikanti et al. 2022)
  Pointwise       // jax.checkpoint dots_saveable: everything but the matmuls
};

// How data-parallel state moves.
enum class DataParallelComm {
  PerLayer,  // ZeRO-3 / FSDP: all-gather each layer's weights, reduce-scatter its grads
  PerStep    // Megatron's distributed optimizer: grads reduce-scattered, params
             // all-gathered once per step, overlapped with the first/last microbatch
};

struct Execution {
  const char* name = "";
  // GEMM fusion: Q, K, V as one GEMM; the MLP's gate and up as one.
  bool fused_qkv = false, fused_gate_up = false;
  // Memory-bound bytes per token per layer beyond the fused lower bound
  // (pointwise_bytes_per_token), forward, as multiples of the shape's
  // dimensions: the unfused ops of eager execution and the GQA K/V copies.
  double norm_extra = 0;        // per d_model element, each of the two norms
  double rope_extra = 0;        // per element of Q and K
  double swiglu_extra = 0;      // per MLP element
  bool repeat_kv = false;       // GQA K/V expanded to every query head before attention
  bool transpose_copy = false;  // attention output made contiguous (H d elements, R2 W2)
  double backward_traffic = 2;  // backward memory-bound bytes over forward
  // Kernels one layer issues, forward and backward (GEMMs, attention,
  // memory-bound ops, data-parallel collectives and their copies).
  int kernels_fwd = 0, kernels_bwd = 0;
  // Host time to issue one kernel (the step is host-bound when a layer's
  // kernels take less than this many times their count) and device time
  // between two dependent kernels.
  double dispatch_s = 0, gap_s = 0;
  SelectiveRecompute selective = SelectiveRecompute::OpLevel;
  DataParallelComm dp_comm = DataParallelComm::PerLayer;
  double grad_reduce_bytes = 2;       // bytes per gradient element in the reduce-scatter
  bool reshard_after_forward = true;  // per-layer FSDP: all-gather again in backward
  bool tp_overlap = false;            // TP collectives overlap the GEMMs by default
  bool tp_overlap_backward = true;    // ... in the backward pass too (else forward only)
  const char* source = "";
};

// The execution of the request's framework (and --compile for pytorch-fsdp),
// with any field --set moved (r.moves).
Execution execution(const PlanRequest& r);
// Whether a CP ring under `r`'s framework passes K/V expanded to the query
// heads: TorchTitan's repeat_kv before SDPA (a CUDA path: on a TPU the
// kernel's own rule stands); Megatron's TransformerEngine CP and MaxText pass
// the KV groups. The time (plan.cpp, evaluate) and the memory (memory.cpp)
// both ask here.
bool ring_kv_expanded(const PlanRequest& r);

// Memory-bound bytes one layer's forward moves per token (before tp), the
// fused lower bound plus the execution's extras.
double pointwise_fwd_bytes_per_token(const ModelShape& s, const Execution& e);

// The calls a TP group's GPU makes per layer and pass at the same point of
// the graph: communication library kernels count in kernels_fwd/kernels_bwd.
// NCCL's collective CTAs while they overlap compute (NVIDIA/nccl issues 892
// and 1453: 16 collective channels on 8-GPU H800 and H100 nodes; one channel
// = one CTA on one SM).
inline constexpr int kCollectiveCtas = 16;

// Compute slowed while an overlapped collective of `comm_s` seconds holds
// `ctas` of `sms` SMs: compute `compute_s` at full speed takes
// compute_s + min(comm_s, compute_s') x ctas / sms (the work left runs at
// (sms - ctas) / sms while the collective lasts).
double overlapped_compute(double compute_s, double comm_s, int sms, int ctas);

}  // namespace ringsim
