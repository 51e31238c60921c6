#include "models/plan/memory.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/analytic/memory.hpp"
#include "models/plan/activations.hpp"
#include "models/plan/execution.hpp"
#include "models/plan/framework.hpp"
#include "models/plan/moe.hpp"
#include "models/plan/precision.hpp"
#include "models/plan/runtime_memory.hpp"

namespace ringsim {

const PlanMemoryItem& PlanMemory::largest() const {
  static const PlanMemoryItem none{"none", 0, "", "", "tensors"};
  if (items.empty()) return none;
  return *std::max_element(items.begin(), items.end(),
                           [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
}

std::vector<PlanMemoryItem> PlanMemory::by_size() const {
  auto out = items;
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  return out;
}

namespace {

// What every term reads: the request, the stage's share of the model, and
// the tokens one device holds per microbatch.
struct Ctx {
  const PlanRequest& r;
  const Hardware& hw;
  const FrameworkProfile& fw;
  const StageMemoryView* stage;
  std::int64_t cp, tp;
  double L, t, G, N, in_flight, c, ct;
  // Tokens the residual stream's tensors hold per device: ct under sequence
  // parallelism, c without (every TP rank keeps them whole).
  double cr;
  bool edge, head, fp8, pipelined;
  // The routed experts' parameters a device does not hold under expert
  // parallelism: each GPU keeps experts / (ep x etp) (moe.hpp).
  double elsewhere_per_layer() const { return experts_elsewhere(r, tp); }
  double held_params() const { return N - L * elsewhere_per_layer(); }
};

void add(PlanMemory& m, std::string name, double bytes, const char* phase, std::string formula,
         const char* pool = "tensors") {
  m.items.push_back({std::move(name), bytes, phase, std::move(formula), pool});
}

std::string dtype_name(double bytes) {
  return bytes >= 4 ? "fp32" : "bf16";
}

// FSDP / ZeRO-3 (pytorch-fsdp, jax-xla): every state sharded over the stage's
// devices; the gathered units live beside them.
void add_zero3_state(const Ctx& x, PlanMemory& m) {
  const auto& s = x.r.shape;
  const double gb = grad_bytes(x.r);
  add(m, fmt::format("params_{}_shard", dtype_name(x.fw.param_bytes)), x.fw.param_bytes * x.N / x.G,
      "persistent", fmt::format("{:.0f} B x params / devices (sharded)", x.fw.param_bytes));
  add(m, fmt::format("grads_{}_shard", dtype_name(gb)), gb * x.N / x.G, "persistent",
      fmt::format("{:.0f} B x params / devices (reduce-scattered into shards)", gb));
  const bool master = x.fw.optimizer_bytes >= 12;  // Megatron FSDP: fp32 master beside m, v
  add(m, master ? "optimizer_fp32_master_m_v" : "optimizer_m_v_fp32",
      x.fw.optimizer_bytes * x.N / x.G, "persistent",
      master ? "12 B x params / devices (fp32 master, Adam m and v, sharded)"
             : "8 B x params / devices (Adam m and v, fp32)");
  // FP8 all-gather (TorchTitan enable_fsdp_float8_all_gather): the linear
  // weights arrive as FP8 and are used as such (no bf16 copy).
  // Under expert parallelism a layer gathers its local experts only.
  const double lp = static_cast<double>(layer_params(s)) - x.elsewhere_per_layer();
  const double layer = lp / x.t * 2 * fsdp_allgather_fraction(x.r);
  const double root = (2 * static_cast<double>(embedding_params(s)) + s.d_model) / x.t * 2;
  if (x.pipelined && x.fw.fsdp_gathered_with_pp) {
    // TorchTitan under PP: the stage stays gathered across microbatches and
    // accumulates unsharded fp32 gradients until the last one.
    const double edge_p = x.held_params() - x.L * lp;
    add(m, "fsdp_gathered_params", x.L * layer + edge_p / x.t * 2, "persistent",
        "the stage's parameters / tp, gathered across microbatches (no reshard under PP), "
        "linear weights at the all-gather's dtype");
    add(m, "fsdp_accumulated_grads_fp32", 4 * x.held_params() / x.t, "persistent",
        "4 B x the stage's parameters / tp: unsharded gradients accumulated in the reduce "
        "dtype until the last microbatch");
    return;
  }
  const bool held = x.edge && x.fw.fsdp_root_unit;
  add(m, "fsdp_gathered_params", (held ? root : 0) + 2 * layer, "persistent",
      held ? "embedding + output head + norm / tp (the root unit, kept gathered) + 2 layers "
             "(current + prefetched) / tp, bf16 (linears FP8 under FP8 all-gather)"
           : "2 layers (current + prefetched) / tp, bf16");
  // Without a root unit the output head is gathered for the loss alone.
  if (x.head && !x.fw.fsdp_root_unit)
    add(m, "fsdp_gathered_head", static_cast<double>(embedding_params(s)) / x.t * 2, "loss",
        "the output head / tp, bf16, gathered for the loss and its backward (XLA frees it "
        "after its last use; no root unit)");
}

// Megatron's distributed optimizer: params and the main-gradient buffer
// replicated over the d = cp x dp data-parallel ranks, the fp32 optimizer
// state sharded over them.
void add_megatron_state(const Ctx& x, PlanMemory& m) {
  const auto& s = x.r.shape;
  const double d = x.G / x.t, gb = grad_bytes(x.r);
  const double lin = x.fp8 ? x.L * (fp8_linear_params(s) - x.elsewhere_per_layer()) : 0;
  // Expert parallelism: a device holds its EP rank's experts (experts / ep).
  const double N = x.held_params();
  const char* ep = is_moe(s) && x.r.ep > 1 ? ", routed experts / ep" : "";
  if (fp8_weights(x.r)) {
    add(m, "params_fp8_bf16", (N - lin) * 2 / x.t + lin / x.t, "persistent",
        fmt::format("linear weights 1 B (FP8, --fp8-weights) + the rest 2 B, x params / tp{}", ep));
    add(m, "fp8_weight_transposes", lin / x.t, "persistent",
        "layers x linear params / tp x 1 B (Transformer Engine's FP8 transpose)");
  } else {
    add(m, "params_bf16", 2 * N / x.t, "persistent",
        fmt::format("2 B x params / tp{} (not sharded over data parallel; Megatron distributed "
                    "optimizer)",
                    ep));
    if (x.fp8)
      add(m, "fp8_weight_copies", 2 * lin / x.t, "persistent",
          "layers x linear params / tp x 2 B (FP8 weight + transpose cached by Transformer "
          "Engine between microbatches)");
  }
  add(m, fmt::format("grads_{}", dtype_name(gb)), gb * N / x.t, "persistent",
      fmt::format("{:.0f} B x params / tp{} (main-gradient buffer, not sharded)", gb, ep));
  add(m, "optimizer_fp32_master_m_v", x.fw.optimizer_bytes * x.N / x.t / d, "persistent",
      fmt::format("12 B x params / tp / d, d = cp x dp = {:.0f} (distributed optimizer)", d));
}

// Saved activations of the stage's layers: under --recompute-layers only
// that many recompute (the others keep everything), and --offload-layers
// moves that many layers' activations to host memory, one layer's worth
// staying on the device while it is copied.
void add_activations(const Ctx& x, PlanMemory& m) {
  const double act = saved_bytes_per_token(x.r);
  const bool full = x.r.checkpointing == Checkpointing::Full && x.r.remat_policy.empty();
  const int v = x.stage && x.stage->stages > 1 ? static_cast<int>(x.r.pp_virtual) : 1;
  const double fr = full ? recompute_fraction(x.r, static_cast<int>(x.L), v) : 1;
  const double kept = layer_forward_bytes_per_token(x.r);
  const double per_layer = fr * act + (1 - fr) * kept;  // mean over the stage's layers
  const double offloaded = std::min(x.L, static_cast<double>(x.r.offload_layers));
  const double on_device = x.L - offloaded + (offloaded > 0 ? 1 : 0);
  // Without sequence parallelism the residual stream's share is whole on
  // every TP rank.
  const double residual =
      fr * residual_saved_bytes_per_token(x.r) + (1 - fr) * residual_forward_bytes_per_token(x.r);
  const double per_device =
      x.r.sequence_parallel ? per_layer * x.ct : (per_layer - residual) * x.ct + residual * x.cr;
  const std::string partial =
      fr < 1 ? fmt::format(", {} of the stage's layers recompute, the rest keep {:.0f} B/token",
                           fr * x.L, kept)
             : "";
  const std::string off =
      offloaded > 0 ? fmt::format(", {:.0f} layers offloaded to host (one in flight)", offloaded)
                    : "";
  add(m, full && fr >= 1 ? "activations_layer_inputs" : "activations_saved",
      on_device * per_device * x.in_flight, "persistent",
      fmt::format("layers x {:.0f} B/token x tokens / tp{} ({}{}{}){}", per_layer,
                  x.r.sequence_parallel
                      ? std::string()
                      : fmt::format(", {:.0f} B/token of it whole on every TP rank (no sequence "
                                    "parallel)",
                                    residual),
                  saved_bytes_formula(x.r), partial, off,
                  x.stage ? fmt::format(" x {:.4g} microbatches in flight", x.in_flight) : ""));
}

// Bytes per logit at the loss's peak, as each implementation allocates:
// PyTorch eager cross-entropy on fp32-upcast logits holds the saved fp32
// log-softmax, the NLL gradient and the log-softmax gradient (12 B); under
// TP, TorchTitan's loss_parallel runs DTensor's decomposed log-softmax
// (torch/distributed/tensor/parallel/loss.py), whose fused backward holds
// the saved output, a zero gradient, exp(x), their sum and the product
// (16 B); Megatron's vocab-parallel cross-entropy upcasts once and works in
// place (an fp32 copy 4 + the bf16 logits or gradient 2 = 6 B).
double loss_bytes_per_logit(const Ctx& x) {
  if (x.fw.block_tokens > 0) return PlanConstants::kLossBytesPerLogit;
  if (x.r.loss == LossImpl::Compiled) return PlanConstants::kCompiledLossBytesPerLogit;
  if (x.r.loss == LossImpl::Fused) return PlanConstants::kFusedLossBytesPerLogit;
  if (x.r.framework == Framework::Megatron) return 6;
  if (x.r.loss == LossImpl::Eager && x.tp > 1) return 16;
  return PlanConstants::kLossBytesPerLogit;
}

// Tokens whose logits live at once, and the bytes per logit at the peak.
void add_loss(const Ctx& x, PlanMemory& m) {
  if (!x.head) return;  // pipeline: only the last stage computes the loss
  const double block = static_cast<double>(x.fw.block_tokens);  // jax-xla: blockwise loss
  const auto loss = x.r.loss;
  const double tokens = block > 0 ? std::min(x.c, block)
                        : loss == LossImpl::Chunked
                            ? std::min<double>(x.c, PlanConstants::kLossChunkTokens)
                            : x.c;
  const double per = loss_bytes_per_logit(x);
  const double logits = tokens * x.r.shape.vocab / x.t;
  const bool megatron = x.r.framework == Framework::Megatron;
  add(m, "logits_and_loss_fp32", per * logits, "loss",
      block > 0 ? fmt::format("12 B x {}-token block x vocab / tp (blockwise loss, jax-xla)",
                              x.fw.block_tokens)
      : loss == LossImpl::Compiled
          ? "4 B x tokens x vocab / tp (compiled cross-entropy: bf16 logits + their gradient)"
      : loss == LossImpl::Fused
          ? "4 B x tokens x vocab / tp (fused cross-entropy kernel: bf16 logits + their gradient)"
      : megatron ? "6 B x tokens x vocab / tp (vocab-parallel cross-entropy: fp32 copy softmaxed "
                   "in place + bf16 logits)"
      : loss == LossImpl::Chunked ? "12 B x 4096-token chunk x vocab / tp (chunked loss)"
      : x.tp > 1 ? "16 B x tokens x vocab / tp (loss_parallel's decomposed log-softmax backward)"
                 : "12 B x tokens x vocab / tp (fp32 cross-entropy on upcast logits)");
  // The bf16 logits are freed before the backward's larger fp32 buffers
  // exist; the caching allocator cannot reuse their smaller block, so it
  // stays reserved (max_memory_reserved counts it, allocated does not).
  if (!megatron && block == 0 && loss == LossImpl::Eager)
    add(m, "logits_block_cached", 2 * logits, "loss",
        "2 B x tokens x vocab / tp: the freed bf16 logits' block, too small for the fp32 ones",
        "allocator");
}

}  // namespace

namespace {

// One layer's backward: its recomputed activations, the residual gradient,
// attention's or the MLP's buffers, and FSDP's unit gradients.
void add_backward(const Ctx& x, PlanMemory& m, Layout layout) {
  const auto& s = x.r.shape;
  const double D = s.d_model, F = s.ffn;
  const double act = saved_bytes_per_token(x.r), none = layer_forward_bytes_per_token(x.r);
  const double recomputed = std::max(0.0, none - act);
  const double block = static_cast<double>(x.fw.block_tokens);
  // Blockwise FFN (jax-xla): the recomputed FFN intermediates (gate, up,
  // SiLU, product) exist one block of tokens at a time.
  const double ffn_part =
      block > 0 && recomputed > 0 ? std::min(recomputed, (mlp_gated(s) ? 8 : 4) * F) : 0;
  const double cb = block > 0 ? std::min(x.c, block) / x.t : x.ct;  // FFN tokens live at once
  // Without sequence parallelism the recomputed residual-stream tensors are
  // whole on every TP rank: the rest of the tokens on top of their shard.
  const double whole = x.r.sequence_parallel
                           ? 0
                           : std::max(0.0, residual_forward_bytes_per_token(x.r) -
                                               residual_saved_bytes_per_token(x.r)) *
                                 (x.cr - x.ct);
  if (recomputed > 0)
    add(m, "recomputed_layer_activations", (recomputed - ffn_part) * x.ct + ffn_part * cb + whole,
        "layer_backward",
        (ffn_part > 0
             ? fmt::format(
                   "{:.0f} B/token x tokens / tp + FFN {:.0f} B/token x {}-token block / tp",
                   recomputed - ffn_part, ffn_part, x.fw.block_tokens)
             : fmt::format("{:.0f} B/token x tokens / tp (one layer, recomputed for its backward)",
                           recomputed)) +
            (whole > 0 ? ", the residual stream's share whole on every TP rank (no sequence "
                         "parallel)"
                       : ""));
  add(m, "residual_grad", 2 * D * x.cr, "layer_backward",
      x.r.sequence_parallel ? "2D B/token x tokens / tp"
                            : "2D B/token x tokens (no sequence parallel: whole on every TP rank)");
  if (is_moe(s))
    add(m, "moe_dispatch_buffers", 2 * x.ct * s.experts_per_token * 2 * D, "layer_backward",
        "2 x tokens / tp x top-k x D x 2 B: the permuted tokens sent and those received");
  if (fully_sharded(x.r) && !(x.pipelined && x.fw.fsdp_gathered_with_pp)) {
    const double lp = static_cast<double>(layer_params(s)) / x.t;
    if (x.fw.saver == FrameworkProfile::Saver::JaxPolicy) {
      // A weight's gradient is the bf16 output of its dot, reduce-scattered
      // before the cast to the fp32 parameter's dtype: the bytes the step
      // time's reduce-scatter carries (execution.cpp).
      const double rb = execution(x.r).grad_reduce_bytes;
      add(m, "fsdp_unsharded_grads", rb * lp, "layer_backward",
          fmt::format("one layer's gradients / tp at the reduce-scatter's {:.0f} B (the dots' "
                      "output dtype, cast to fp32 on the shard)",
                      rb));
    } else {
      const double staging = grad_bytes(x.r) >= 4 ? 4 : 0;
      const double head = x.head && x.fw.saver == FrameworkProfile::Saver::PytorchEager
                              ? 2 * static_cast<double>(embedding_params(s)) / x.t
                              : 0;
      add(m, "fsdp_unsharded_grads", (2 + staging) * lp + head, "layer_backward",
          fmt::format("one layer's bf16 gradients{} / tp{}",
                      staging > 0 ? " + their fp32 reduce-scatter input" : "",
                      head > 0 ? " + the output head's bf16 gradient (held until the root unit's "
                                 "reduce-scatter)"
                               : ""));
    }
  }
  int ulysses = 0;
  if (layout == Layout::Hybrid && x.cp > 1)
    ulysses = auto_ulysses_degree(x.cp, s.kv_heads / static_cast<int>(x.tp),
                                  group_hardware(x.hw, x.tp).gpus_per_node);
  auto w = attention_workload(x.r, layout, x.cp, x.tp, ulysses);
  w.batch = static_cast<std::int64_t>(x.c / static_cast<double>(x.r.context / x.cp));
  // A framework that repeats K/V before the attention call holds them
  // expanded to every query head, as its ring passes them (execution.hpp).
  if (x.cp > 1 && ring_kv_expanded(x.r)) w.shape.kv_heads = w.shape.heads;
  const double attn = static_cast<double>(attention_memory(w).total());
  // Gated: the gate's, up's and product's gradients; plain: up's and the activation's.
  const double mlp_grads = (mlp_gated(s) ? 6 : 4) * F * cb;
  // FP8 casts live in the MLP's backward: the two output gradients (F each)
  // and, where the bf16 input was saved (torchao), its FP8 recast (D), plus
  // the layer's FP8 weights transposed for the input-gradient GEMMs.
  const bool te = x.fw.fp8_saves_cast_inputs;
  const double fp8_casts =
      x.fp8 ? ((te ? 0 : D) + 2 * F) * cb +
                  (te ? 0 : (fp8_linear_params(s) - x.elsewhere_per_layer()) / x.t)
            : 0;
  // Attention's and the MLP's backward do not run at once: the larger counts.
  if (attn >= mlp_grads + fp8_casts) {
    add(m, "attention_buffers", attn, "layer_backward",
        "models/analytic/memory.hpp attention_memory (fwd+bwd, one layer)");
    return;
  }
  add(m, "mlp_grads", mlp_grads, "layer_backward",
      block > 0 ? fmt::format("6F B/token x {}-token block / tp (blockwise FFN, jax-xla)",
                              x.fw.block_tokens)
                : "6F B/token x tokens / tp (gate, up, product grads)");
  if (x.fp8)
    add(m, "fp8_cast_buffers", fp8_casts, "layer_backward",
        te ? "2F B/token x tokens / tp (FP8 output grads of w1, w3)"
           : "(D + 2F) B/token x tokens / tp (FP8 input recast, output grads) + the layer's "
             "FP8 weights transposed / tp");
}

}  // namespace

namespace {

// The runtime beside the tensors, on a GPU under a PyTorch framework: the
// BLAS workspace (inside the allocator), the allocator's reserve, and what
// lives outside it (docs/plan.md, "Memory per device").
void add_runtime(const Ctx& x, PlanMemory& m, double tensors) {
  if (!x.fw.runtime_terms || x.hw.tpu) return;
  const auto pp = x.stage ? x.stage->stages : 1;
  const auto shard = static_cast<std::int64_t>(x.G / x.t);
  const bool torch = x.fw.saver != FrameworkProfile::Saver::JaxPolicy;  // XLA owns its buffers
  if (torch && x.hw.blas_workspace_bytes > 0)
    add(m, "blas_workspace", x.hw.blas_workspace_bytes, "overhead",
        "cuBLAS workspace of the compute stream (PyTorch's default for the device)");
  if (x.fw.allocator_reserve > 0)
    add(m, "allocator_reserve", x.fw.allocator_reserve * tensors, "overhead",
        fmt::format("{:.0f}% of the tensors' peak (the caching allocator's blocks beyond it; "
                    "{})",
                    100 * x.fw.allocator_reserve,
                    x.r.moves.allocator_reserve ? "moved by --set" : "assumption"),
        "allocator");
  if (x.hw.hbm_driver_reserved > 0)
    add(m, "driver_reserved", x.hw.hbm_driver_reserved, "overhead",
        "the device's total less what CUDA may allocate (nvidia-smi's total - cudaMemGetInfo's)",
        "runtime");
  add(m, "cuda_context", x.hw.context_bytes, "overhead",
      "the CUDA/HIP context with lazy module loading (catalog)", "runtime");
  const int comms = communicators(shard, x.tp, x.cp, pp);
  add(m, "nccl_buffers", comms * NcclConstants::per_communicator(), "overhead",
      fmt::format("{} communicator(s) x {} channels x {} connections x (4 MiB SIMPLE + 4.7 MiB "
                  "LL128 + 0.5 MiB LL)",
                  comms, NcclConstants::kChannels, NcclConstants::kConnectionsPerChannel),
      "runtime");
}

// Phase sums of one pool; the peak is persistent + the larger transient.
struct PoolSums {
  double persistent = 0, loss = 0, backward = 0, overhead = 0;
};
PoolSums sums(const PlanMemory& m, const char* pool) {
  PoolSums p;
  for (const auto& i : m.items) {
    if (i.pool != pool) continue;
    if (i.phase == std::string("persistent")) p.persistent += i.bytes;
    if (i.phase == std::string("loss")) p.loss += i.bytes;
    if (i.phase == std::string("layer_backward")) p.backward += i.bytes;
    if (i.phase == std::string("overhead")) p.overhead += i.bytes;
  }
  return p;
}

// allocated: the tensors' peak; reserved: + the allocator's blocks (the
// transient ones at the same phase); total: + the runtime.
void total_up(PlanMemory& m) {
  const auto t = sums(m, "tensors"), a = sums(m, "allocator"), rt = sums(m, "runtime");
  m.persistent = t.persistent + a.persistent;
  m.loss_phase = t.loss + a.loss;
  m.backward_phase = t.backward + a.backward;
  m.peak_phase = m.loss_phase >= m.backward_phase ? "loss" : "layer_backward";
  m.allocated = t.persistent + std::max(t.loss, t.backward) + t.overhead;
  m.reserved = m.persistent + std::max(m.loss_phase, m.backward_phase) + t.overhead + a.overhead;
  m.overhead = t.overhead + a.overhead + rt.overhead;
  m.total = m.reserved + rt.overhead;
}

}  // namespace

PlanMemory training_memory(const PlanRequest& r, const Hardware& hw, Layout layout, std::int64_t cp,
                           std::int64_t tp, std::int64_t micro_batch,
                           const StageMemoryView* stage) {
  const auto& s = r.shape;
  const double c = static_cast<double>(r.context / cp) * static_cast<double>(micro_batch);
  const double t = static_cast<double>(tp);
  // The framework's rules, with the allocator's reserve as --set moved it.
  FrameworkProfile fw = framework_profile(r);
  if (r.moves.allocator_reserve) fw.allocator_reserve = *r.moves.allocator_reserve;
  Ctx x{r, hw, fw, stage, cp, tp,
        stage ? static_cast<double>(stage->layers) : static_cast<double>(s.layers), t,
        // The state shards inside one slice: slices are data-parallel replicas.
        // HSDP (--dp-replicate): so are the replica groups.
        static_cast<double>(stage ? stage->devices : r.gpus) /
            static_cast<double>(r.slices * std::max<std::int64_t>(1, r.dp_replicate)),
        stage ? stage->params : static_cast<double>(total_params(s)), stage ? stage->in_flight : 1,
        c,
        c / t,  // the TP share of every tensor split by heads or MLP width
        r.sequence_parallel ? c / t : c, !stage || stage->embedding || stage->head,
        !stage || stage->head, r.precision == Precision::FP8, stage && stage->stages > 1};
  PlanMemory m;
  if (stage) m.stage = stage->stage;
  if (fully_sharded(r))
    add_zero3_state(x, m);
  else
    add_megatron_state(x, m);
  if (x.fp8)
    add(m, "fp8_scales", x.L * fp8_scale_bytes_per_layer(r), "persistent",
        x.fw.fp8_amax_history > 0
            ? fmt::format("layers x 7 linears x 3 tensors x (scale, scale_inv, {} amax) x 4 B",
                          x.fw.fp8_amax_history)
            : "layers x 7 linears x 3 tensors x one fp32 scale (dynamic scaling)");
  add_activations(x, m);
  add_loss(x, m);
  add_backward(x, m, layout);
  total_up(m);
  add_runtime(x, m, m.allocated);
  total_up(m);
  return m;
}

}  // namespace ringsim
