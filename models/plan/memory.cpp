#include "models/plan/memory.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/analytic/memory.hpp"
#include "models/plan/framework.hpp"
#include "models/plan/precision.hpp"

namespace ringsim {

const PlanMemoryItem& PlanMemory::largest() const {
  static const PlanMemoryItem none{"none", 0, "", ""};
  if (items.empty()) return none;
  return *std::max_element(items.begin(), items.end(),
                           [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
}

PlanMemory training_memory(const PlanRequest& r, const Hardware& hw, Layout layout, std::int64_t cp,
                           std::int64_t tp, std::int64_t micro_batch,
                           const StageMemoryView* stage) {
  const auto& s = r.shape;
  const double D = s.d_model, F = s.ffn, V = s.vocab;
  // Pipeline parallelism: one stage's layers and parameters over its devices.
  const double L = stage ? stage->layers : s.layers;
  const double t = static_cast<double>(tp);
  const double G = static_cast<double>(stage ? stage->devices : r.gpus);
  const double N = stage ? stage->params : static_cast<double>(total_params(s));
  const bool edge = !stage || stage->embedding || stage->head;
  const double in_flight = stage ? stage->in_flight : 1;
  const double c = static_cast<double>(r.context / cp) * static_cast<double>(micro_batch);
  const double ct = c / t;  // sequence parallel: norms and residuals shard by tp too
  const double unit =
      static_cast<double>(std::max(layer_params(s), edge ? embedding_params(s) : 0)) / t;
  PlanMemory m;
  if (stage) m.stage = stage->stage;
  auto add = [&](std::string name, double bytes, const char* phase, std::string formula) {
    m.items.push_back({std::move(name), bytes, phase, std::move(formula)});
  };
  const auto& fw = framework_profile(r);
  const bool fp8 = r.precision == Precision::FP8;
  if (fw.sharding == StateSharding::Zero3) {
    add("params_bf16", fw.param_bytes * N / G, "persistent", "2 B x params / devices (ZeRO-3)");
    add("grads_bf16", fw.grad_bytes * N / G, "persistent", "2 B x params / devices (ZeRO-3)");
    add("optimizer_fp32_master_m_v", fw.optimizer_bytes * N / G, "persistent",
        "12 B x params / devices (fp32 master, Adam m, v)");
    // FP8 all-gather (TorchTitan enable_fsdp_float8_all_gather): a layer's
    // linear weights arrive as FP8 and are used as such (no bf16 copy).
    const double layer_unit =
        static_cast<double>(layer_params(s)) / t * 2 * fsdp_allgather_fraction(r);
    const double edge_unit = edge ? 2 * static_cast<double>(embedding_params(s)) / t : 0;
    const double unit_bytes = std::max(layer_unit, edge_unit);
    add("fsdp_gathered_params", 2 * (fp8 ? unit_bytes : 2 * unit), "persistent",
        fp8 && layer_unit <= edge_unit
            ? "2 units (current + prefetched) x largest unit / tp x 2 B (the bf16 embedding/head)"
        : fp8 ? "2 units x one layer / tp, linear weights gathered in FP8 (1 B), norms bf16"
              : "2 units (current + prefetched) x largest unit / tp x 2 B");
    add("fsdp_unsharded_grads", 2 * unit, "persistent",
        "1 unit x largest unit / tp x 2 B, before reduce-scatter");
  } else {
    // Megatron's distributed optimizer: params and grads replicated over the
    // d = cp x dp data-parallel ranks (sharded by tp only), the fp32 optimizer
    // state sharded over them: 2 + 4 + 12/d bytes per parameter / tp.
    const double d = G / t;
    add("params_bf16", fw.param_bytes * N / t, "persistent",
        "2 B x params / tp (not sharded over data parallel; Megatron distributed optimizer)");
    add("grads_fp32", fw.grad_bytes * N / t, "persistent",
        "4 B x params / tp (fp32 main grads, not sharded)");
    add("optimizer_fp32_master_m_v", fw.optimizer_bytes * N / t / d, "persistent",
        fmt::format("12 B x params / tp / d, d = cp x dp = {:.0f} (distributed optimizer)", d));
  }
  if (fp8) {
    add("fp8_scales", L * fp8_scale_bytes_per_layer(r), "persistent",
        fw.fp8_amax_history > 0
            ? fmt::format("layers x 7 linears x 3 tensors x (scale, scale_inv, {} amax) x 4 B",
                          fw.fp8_amax_history)
            : "layers x 7 linears x 3 tensors x one fp32 scale (dynamic scaling)");
    if (fw.fp8_saves_cast_inputs)
      add("fp8_weight_copies", L * 2 * fp8_linear_params(s) / t, "persistent",
          "layers x linear params / tp x 2 B (FP8 weight + transpose cached by Transformer "
          "Engine between microbatches)");
  }
  const double act = activation_bytes_per_token(s, r.checkpointing) +
                     saved_bytes_delta_per_token(r, r.checkpointing);
  add(r.checkpointing == Checkpointing::Full ? "activations_layer_inputs" : "activations_saved",
      L * act * ct * in_flight, "persistent",
      fmt::format("layers x {:.0f} B/token x tokens / tp ({} checkpointing){}", act,
                  to_string(r.checkpointing),
                  stage ? fmt::format(" x {:.4g} microbatches in flight", in_flight) : ""));
  const double block = static_cast<double>(fw.block_tokens);  // jax-xla: blockwise FFN and loss
  const double loss_tokens = block > 0 ? std::min(c, block)
                             : r.loss == LossImpl::Eager
                                 ? c
                                 : std::min<double>(c, PlanConstants::kLossChunkTokens);
  if (!stage || stage->head)  // pipeline: only the last stage computes the loss
    add("logits_and_loss_fp32", PlanConstants::kLossBytesPerLogit * loss_tokens * V / t, "loss",
        block > 0 ? fmt::format("12 B x {}-token block x vocab / tp (blockwise loss, jax-xla)",
                                fw.block_tokens)
        : r.loss == LossImpl::Eager
            ? "12 B x tokens x vocab / tp (fp32 cross-entropy on upcast logits)"
            : "12 B x 4096-token chunk x vocab / tp (chunked loss)");
  const double none = activation_bytes_per_token(s, Checkpointing::None) +
                      saved_bytes_delta_per_token(r, Checkpointing::None);
  const double recomputed = none - act;  // 0 without checkpointing
  // Blockwise FFN (jax-xla): the recomputed FFN intermediates (gate, up,
  // SiLU, product: 8F under full, SiLU and product 4F under selective) exist
  // one block of tokens at a time.
  const double ffn_part = block > 0 ? (r.checkpointing == Checkpointing::Full        ? 8 * F
                                       : r.checkpointing == Checkpointing::Selective ? 4 * F
                                                                                     : 0)
                                    : 0;
  const double cb = block > 0 ? std::min(c, block) / t : ct;  // FFN tokens live at once
  if (recomputed > 0)
    add("recomputed_layer_activations", (recomputed - ffn_part) * ct + ffn_part * cb,
        "layer_backward",
        ffn_part > 0
            ? fmt::format("{:.0f} B/token x tokens / tp + FFN {:.0f} B/token x {}-token block / tp",
                          recomputed - ffn_part, ffn_part, fw.block_tokens)
            : fmt::format("{:.0f} B/token x tokens / tp (one layer, recomputed for its backward)",
                          recomputed));
  add("residual_grad", 2 * D * ct, "layer_backward", "2D B/token x tokens / tp");
  int ulysses = 0;
  if (layout == Layout::Hybrid && cp > 1)
    ulysses = auto_ulysses_degree(cp, s.kv_heads / static_cast<int>(tp),
                                  group_hardware(hw, tp).gpus_per_node);
  auto w = attention_workload(r, layout, cp, tp, ulysses);
  w.batch = micro_batch;
  const double attn = static_cast<double>(attention_memory(w).total());
  const double mlp_grads = 6 * F * cb;
  // FP8 casts live in the MLP's backward: the two output gradients (F each)
  // and, where the bf16 input was saved (torchao), its FP8 recast (D), plus
  // the layer's FP8 weights transposed for the input-gradient GEMMs.
  const double fp8_casts = fp8 ? ((fw.fp8_saves_cast_inputs ? 0 : D) + 2 * F) * cb +
                                     (fw.fp8_saves_cast_inputs ? 0 : fp8_linear_params(s) / t)
                               : 0;
  // Attention's and the MLP's backward do not run at once: the larger counts.
  if (attn >= mlp_grads + fp8_casts) {
    add("attention_buffers", attn, "layer_backward",
        "models/analytic/memory.hpp attention_memory (fwd+bwd, one layer)");
  } else {
    add("mlp_grads", mlp_grads, "layer_backward",
        block > 0 ? fmt::format("6F B/token x {}-token block / tp (blockwise FFN, jax-xla)",
                                fw.block_tokens)
                  : "6F B/token x tokens / tp (gate, up, product grads)");
    if (fp8)
      add("fp8_cast_buffers", fp8_casts, "layer_backward",
          fw.fp8_saves_cast_inputs
              ? "2F B/token x tokens / tp (FP8 output grads of w1, w3)"
              : "(D + 2F) B/token x tokens / tp (FP8 input recast, output grads) + the layer's "
                "FP8 weights transposed / tp");
  }

  for (const auto& i : m.items) {
    if (i.phase == std::string("persistent")) m.persistent += i.bytes;
    if (i.phase == std::string("loss")) m.loss_phase += i.bytes;
    if (i.phase == std::string("layer_backward")) m.backward_phase += i.bytes;
  }
  const double tensors = m.persistent + std::max(m.loss_phase, m.backward_phase);
  m.peak_phase = m.loss_phase >= m.backward_phase ? "loss" : "layer_backward";
  // Framework rules (framework.cpp): jax-xla charges neither term (its
  // usable HBM is XLA's preallocated fraction instead, usable_hbm_bytes).
  if (fw.fixed_overhead_bytes > 0)
    add("framework_fixed", fw.fixed_overhead_bytes, "overhead",
        "1.5 GiB: CUDA context, cuBLAS workspaces, NCCL buffers");
  if (fw.fragmentation > 0)
    add("allocator_fragmentation", fw.fragmentation * tensors, "overhead",
        "5% of the tensors' peak (caching allocator)");
  m.overhead = fw.fixed_overhead_bytes + fw.fragmentation * tensors;
  m.total = tensors + m.overhead;
  return m;
}

}  // namespace ringsim
