#include "models/plan/execution.hpp"

#include <algorithm>

#include "models/plan/basics.hpp"

namespace ringsim {

namespace {

Execution pytorch_eager() {
  Execution e;
  e.name = "PyTorch eager (TorchTitan's Llama)";
  // TorchTitan's Llama: wq, wk, wv and w1, w3 are separate nn.Linear.
  e.fused_qkv = e.fused_gate_up = false;
  // Eager RMSNorm (ATen's composite rms_norm): to(fp32) R2 W4, pow R4 W4,
  // mean R4, mul by rsqrt R4 W4, mul by weight R4 W4, type_as R4 W2 = 40 B
  // per element, against 4 fused.
  e.norm_extra = 40 - 4;
  // apply_rotary_emb: float() R2 W4, complex multiply R4 W4, type_as R4 W2
  // = 20 B per element of Q and K, against 4 fused.
  e.rope_extra = 20 - 4;
  // silu(w1 x) * w3 x: silu R2 W2, mul R4 W2 = 10 B per MLP element, against 6.
  e.swiglu_extra = 10 - 6;
  e.repeat_kv = true;       // TorchTitan's repeat_kv before SDPA
  e.transpose_copy = true;  // output.transpose(1, 2).contiguous()
  e.backward_traffic = 2;
  // Forward: 2 norms x 7, RoPE 6, repeat_kv 2, SDPA 1, copy 1, 7 linears,
  // SwiGLU 2, 2 residual adds, FSDP all-gather and copy-out 3 = 38; backward
  // about twice the pointwise ones, 2 GEMMs per linear, the FSDP
  // all-gather, reduce-scatter and their copies.
  e.kernels_fwd = 38;
  e.kernels_bwd = 80;
  e.dispatch_s = kEagerDispatch;
  e.gap_s = kKernelGap;
  e.selective = SelectiveRecompute::OpLevel;
  e.dp_comm = DataParallelComm::PerLayer;
  // TorchTitan's default mixed_precision_reduce = "float32": gradients are
  // reduce-scattered in fp32.
  e.grad_reduce_bytes = 4;
  e.reshard_after_forward = true;
  e.tp_overlap = false;
  // Async TP (--tp-overlap on) fuses the forward's all-gather + matmul and
  // matmul + reduce-scatter pairs; the backward's collectives stay exposed
  // ("Introducing Async Tensor Parallelism in PyTorch", PyTorch dev-discuss,
  // 2024: up to ~29% forward and ~8% end-to-end speedup on Llama 3 8B and 70B).
  e.tp_overlap_backward = false;
  e.source =
      "TorchTitan (pytorch/torchtitan, Llama model and FSDP2 defaults: separate q/k/v and w1/w3 "
      "linears, repeat_kv, fp32 gradient reduce-scatter, reshard after forward); HTA docs for "
      "launch cost";
  return e;
}

Execution pytorch_compiled() {
  Execution e = pytorch_eager();
  e.name = "PyTorch + torch.compile (TorchTitan's Llama)";
  // Inductor fuses each norm, RoPE and SwiGLU into one kernel: the fused
  // lower bound. The K/V expansion and the output copy stay (SDPA's inputs
  // and the next GEMM's operand are materialised).
  e.norm_extra = e.rope_extra = e.swiglu_extra = 0;
  e.kernels_fwd = 18;
  e.kernels_bwd = 40;
  e.dispatch_s = kCompiledDispatch;
  return e;
}

Execution megatron_te() {
  Execution e;
  e.name = "Megatron-Core + Transformer Engine";
  // linear_qkv and linear_fc1 (gate and up) are single GEMMs; TE fuses the
  // norm into LayerNormLinear, RoPE, bias-dropout-add and SwiGLU.
  e.fused_qkv = e.fused_gate_up = true;
  e.kernels_fwd = 12;
  e.kernels_bwd = 26;
  e.dispatch_s = kEagerDispatch;
  e.gap_s = kKernelGap;
  // --recompute-granularity selective recomputes the core attention
  // (Korthikanti et al. 2022, arXiv 2205.05198, sec. 5).
  e.selective = SelectiveRecompute::CoreAttention;
  // Distributed optimizer with --overlap-grad-reduce / --overlap-param-gather:
  // fp32 main grads reduce-scattered and bf16 params all-gathered once per step.
  e.dp_comm = DataParallelComm::PerStep;
  e.grad_reduce_bytes = 4;
  e.reshard_after_forward = false;
  // --tp-comm-overlap (TE userbuffers), on in NeMo's H100 recipes.
  e.tp_overlap = true;
  e.source =
      "Megatron-LM docs (distributed optimizer, --overlap-grad-reduce, --overlap-param-gather, "
      "--tp-comm-overlap, selective recompute of core attention); Transformer Engine fused "
      "LayerNormLinear, RoPE and SwiGLU";
  return e;
}

Execution jax_xla() {
  Execution e;
  e.name = "JAX / XLA";
  // XLA fuses the elementwise ops into their neighbours; one compiled
  // executable per step is launched once, so the host issues nothing per kernel.
  e.fused_qkv = false;
  e.fused_gate_up = false;
  e.kernels_fwd = 12;
  e.kernels_bwd = 26;
  e.dispatch_s = 0;
  e.gap_s = kKernelGap;
  e.selective = SelectiveRecompute::Pointwise;
  e.dp_comm = DataParallelComm::PerLayer;
  // jax.lax.dot_general returns its operands' dtype unless asked otherwise
  // (preferred_element_type), so a weight's gradient is the bf16 output of a
  // dot whose contraction runs over the data-parallel ranks' tokens: XLA's
  // SPMD partitioner reduce-scatters it there, in bf16, and the transpose of
  // the fp32-to-bf16 cast makes it fp32 on the shard only. The memory model
  // holds the same bytes (models/plan/memory.cpp).
  e.grad_reduce_bytes = 2;
  e.reshard_after_forward = true;
  // XLA's latency-hiding scheduler overlaps a collective with independent
  // compute only: a TP all-gather or reduce-scatter feeds (or is fed by) the
  // next matmul, so it stays exposed unless the collective matmul (windowed
  // einsum) decomposes it, which MaxText's TPU scripts do not ask for (no
  // collective-matmul or windowed-einsum XLA flag in configs/tpu/v5e and v5p).
  e.tp_overlap = false;
  e.source =
      "XLA operator fusion and latency-hiding scheduler; jax.checkpoint policies "
      "(dots_saveable for selective)";
  return e;
}

// Megatron FSDP (--use-megatron-fsdp): Megatron's layers, with the
// parameters gathered and the gradients reduce-scattered per layer, as FSDP.
Execution megatron_fsdp() {
  Execution e = megatron_te();
  e.name = "Megatron-LM with Megatron FSDP";
  e.dp_comm = DataParallelComm::PerLayer;
  e.reshard_after_forward = true;
  e.source =
      "Megatron-LM docs (Megatron FSDP, --data-parallel-sharding-strategy optim_grads_params; "
      "--tp-comm-overlap; selective recompute of core attention); Transformer Engine fused "
      "LayerNormLinear, RoPE and SwiGLU";
  return e;
}

}  // namespace

bool ring_kv_expanded(const PlanRequest& r) {
  return execution(r).repeat_kv && !r.tpu;
}

namespace {

const Execution& built_in(const PlanRequest& r) {
  static const Execution eager = pytorch_eager(), compiled = pytorch_compiled(),
                         mega = megatron_te(), mega_fsdp = megatron_fsdp(), jax = jax_xla();
  switch (r.framework) {
    case Framework::Megatron:
      return r.fsdp == 1 ? mega_fsdp : mega;
    case Framework::JaxXla:
      return jax;
    case Framework::PytorchFsdp:
      break;
  }
  return r.compile ? compiled : eager;
}

}  // namespace

Execution execution(const PlanRequest& r) {
  Execution e = built_in(r);
  // --norm fused (TorchTitan's fused_rmsnorm, LLM Foundry's low-precision
  // LayerNorm): one forward kernel per norm that reads and writes its tensor
  // once, and two backward (the input gradient, the weight gradient's
  // reduction), as the memory model already holds it (activations.cpp); the
  // eager composite's extra bytes, and its 7 forward and about 14 backward
  // kernels per norm, are not run.
  if (r.fused_norm && e.norm_extra > 0) {
    e.norm_extra = 0;
    e.kernels_fwd -= 2 * (7 - 1);
    e.kernels_bwd -= 2 * (14 - 2);
  }
  const auto& m = r.moves;
  if (m.dispatch_s) e.dispatch_s = *m.dispatch_s;
  if (m.gap_s) e.gap_s = *m.gap_s;
  if (m.kernels_fwd) e.kernels_fwd = *m.kernels_fwd;
  if (m.kernels_bwd) e.kernels_bwd = *m.kernels_bwd;
  return e;
}

double pointwise_fwd_bytes_per_token(const ModelShape& s, const Execution& e) {
  const double D = s.d_model, F = s.ffn, d = s.head_dim;
  const double q = static_cast<double>(s.heads) * d, kv = static_cast<double>(s.kv_heads) * d;
  double b = pointwise_bytes_per_token(s);
  // A plain MLP's activation is one eager kernel: no SwiGLU extras.
  b += 2 * e.norm_extra * D + e.rope_extra * (q + kv) + (mlp_gated(s) ? e.swiglu_extra * F : 0);
  // repeat_kv: read K and V (2 kv elements, 2 B) and write them per query head.
  if (e.repeat_kv && s.heads > s.kv_heads) b += 2 * (2 * kv + 2 * q);
  if (e.transpose_copy) b += 4 * q;
  return b;
}

double overlapped_compute(double compute_s, double comm_s, int sms, int ctas) {
  if (compute_s <= 0 || comm_s <= 0 || sms <= 0 || ctas <= 0 || ctas >= sms) return compute_s;
  const double rate = static_cast<double>(sms - ctas) / sms;
  if (comm_s >= compute_s / rate) return compute_s / rate;
  return compute_s + comm_s * (1 - rate);
}

}  // namespace ringsim
