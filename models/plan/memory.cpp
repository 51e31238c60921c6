#include "models/plan/memory.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/analytic/memory.hpp"

namespace ringsim {

const PlanMemoryItem& PlanMemory::largest() const {
  static const PlanMemoryItem none{"none", 0, "", ""};
  if (items.empty()) return none;
  return *std::max_element(items.begin(), items.end(),
                           [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
}

PlanMemory training_memory(const PlanRequest& r, const Hardware& hw, Layout layout, std::int64_t cp,
                           std::int64_t tp, std::int64_t micro_batch) {
  const auto& s = r.shape;
  const double L = s.layers, D = s.d_model, F = s.ffn, V = s.vocab;
  const double t = static_cast<double>(tp), G = static_cast<double>(r.gpus);
  const double N = static_cast<double>(total_params(s));
  const double c = static_cast<double>(r.context / cp) * static_cast<double>(micro_batch);
  const double ct = c / t;  // sequence parallel: norms and residuals shard by tp too
  const double unit = static_cast<double>(std::max(layer_params(s), embedding_params(s))) / t;
  PlanMemory m;
  auto add = [&](std::string name, double bytes, const char* phase, std::string formula) {
    m.items.push_back({std::move(name), bytes, phase, std::move(formula)});
  };
  add("params_bf16", PlanConstants::kParamBytes * N / G, "persistent",
      "2 B x params / devices (ZeRO-3)");
  add("grads_bf16", PlanConstants::kGradBytes * N / G, "persistent",
      "2 B x params / devices (ZeRO-3)");
  add("optimizer_fp32_master_m_v", PlanConstants::kOptimizerBytes * N / G, "persistent",
      "12 B x params / devices (fp32 master, Adam m, v)");
  add("fsdp_gathered_params", 2 * 2 * unit, "persistent",
      "2 units (current + prefetched) x largest unit / tp x 2 B");
  add("fsdp_unsharded_grads", 2 * unit, "persistent",
      "1 unit x largest unit / tp x 2 B, before reduce-scatter");
  const double act = activation_bytes_per_token(s, r.checkpointing);
  add(r.checkpointing == Checkpointing::Full ? "activations_layer_inputs" : "activations_saved",
      L * act * ct, "persistent",
      fmt::format("layers x {:.0f} B/token x tokens / tp ({} checkpointing)", act,
                  to_string(r.checkpointing)));
  const double loss_tokens =
      r.loss == LossImpl::Eager ? c : std::min<double>(c, PlanConstants::kLossChunkTokens);
  add("logits_and_loss_fp32", PlanConstants::kLossBytesPerLogit * loss_tokens * V / t, "loss",
      r.loss == LossImpl::Eager ? "12 B x tokens x vocab / tp (fp32 cross-entropy on upcast logits)"
                                : "12 B x 4096-token chunk x vocab / tp (chunked loss)");
  const double none = activation_bytes_per_token(s, Checkpointing::None);
  const double recomputed = none - act;  // 0 without checkpointing
  if (recomputed > 0)
    add("recomputed_layer_activations", recomputed * ct, "layer_backward",
        fmt::format("{:.0f} B/token x tokens / tp (one layer, recomputed for its backward)",
                    recomputed));
  add("residual_grad", 2 * D * ct, "layer_backward", "2D B/token x tokens / tp");
  int ulysses = 0;
  if (layout == Layout::Hybrid && cp > 1)
    ulysses = auto_ulysses_degree(cp, s.kv_heads / static_cast<int>(tp),
                                  group_hardware(hw, tp).gpus_per_node);
  auto w = attention_workload(r, layout, cp, tp, ulysses);
  w.batch = micro_batch;
  const double attn = static_cast<double>(attention_memory(w).total());
  const double mlp_grads = 6 * F * ct;
  // Attention's and the MLP's backward do not run at once: the larger counts.
  if (attn >= mlp_grads)
    add("attention_buffers", attn, "layer_backward",
        "models/analytic/memory.hpp attention_memory (fwd+bwd, one layer)");
  else
    add("mlp_grads", mlp_grads, "layer_backward",
        "6F B/token x tokens / tp (gate, up, product grads)");

  for (const auto& i : m.items) {
    if (i.phase == std::string("persistent")) m.persistent += i.bytes;
    if (i.phase == std::string("loss")) m.loss_phase += i.bytes;
    if (i.phase == std::string("layer_backward")) m.backward_phase += i.bytes;
  }
  const double tensors = m.persistent + std::max(m.loss_phase, m.backward_phase);
  m.peak_phase = m.loss_phase >= m.backward_phase ? "loss" : "layer_backward";
  add("framework_fixed", PlanConstants::kFixedOverheadBytes, "overhead",
      "1.5 GiB: CUDA context, cuBLAS workspaces, NCCL buffers");
  add("allocator_fragmentation", PlanConstants::kFragmentation * tensors, "overhead",
      "5% of the tensors' peak (caching allocator)");
  m.overhead = PlanConstants::kFixedOverheadBytes + PlanConstants::kFragmentation * tensors;
  m.total = tensors + m.overhead;
  return m;
}

}  // namespace ringsim
