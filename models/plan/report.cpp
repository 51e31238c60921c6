#include "models/plan/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "models/core/cancel.hpp"
#include "models/core/parse.hpp"
#include "models/plan/pipeline.hpp"

namespace ringsim {

namespace {

// Memory in binary GiB, like every other command (models/core/parse.hpp).
std::string gb(double b) {
  return human_gib(b);
}

std::string layout_label(const PlanConfig& c) {
  return c.cp == 1 ? "none" : to_string(c.layout);
}

}  // namespace

nlohmann::json config_json(const PlanConfig& c, int rank, double hbm) {
  nlohmann::json j;
  j["rank"] = rank;
  j["feasible"] = c.feasible;
  j["reason"] = c.feasible ? nlohmann::json(nullptr) : nlohmann::json(c.reason());
  if (!c.feasible) {
    nlohmann::json why = {{"kind", c.why.kind_name()}};
    if (c.why.kind == Infeasibility::Kind::Memory)
      why.update({{"needed_bytes", std::llround(c.why.needed_bytes)},
                  {"hbm_bytes", c.why.hbm_bytes},
                  {"term", c.why.term},
                  {"term_bytes", std::llround(c.why.term_bytes)},
                  {"term_phase", c.why.term_phase}});
    else
      why["rule"] = c.why.rule;
    why["hint"] = c.why.hint.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.why.hint);
    j["infeasible"] = why;
  }
  j["label"] = c.label();
  j["layout"] = layout_label(c);
  j["cp"] = c.cp;
  j["tp"] = c.tp;
  // 0: not defined for a row a shape rule refused (evaluate).
  const auto defined = [](std::int64_t v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(); };
  j["dp"] = defined(c.dp);
  j["block"] = defined(c.block);
  if (c.layout == Layout::Hybrid && c.cp > 1) j["ulysses_degree"] = c.ulysses_degree;
  j["micro_batch"] = c.micro_batch;
  j["grad_accum_steps"] = defined(c.grad_accum);
  j["pp"] = c.pp;
  j["pp_virtual"] = c.pp_virtual;
  j["ep"] = c.ep;
  j["microbatches"] = defined(c.grad_accum);  // the schedule's m: micro-steps per replica per step
  j["hbm_bytes"] = hbm;
  if (!c.evaluated) {
    j["memory_bytes_per_device"] = nullptr;
    j["step_time_s"] = nullptr;
    j["tokens_per_s_per_gpu"] = nullptr;
    j["mfu"] = nullptr;
    return j;
  }
  j["memory_bytes_per_device"] = std::llround(c.memory.total);
  j["memory_verdict"] = c.memory_verdict;
  // The same peak as PyTorch counts it: the tensors (max_memory_allocated)
  // and with the caching allocator's reserve (max_memory_reserved).
  j["memory_allocated_bytes"] = std::llround(c.memory.allocated);
  j["memory_reserved_bytes"] = std::llround(c.memory.reserved);
  if (c.pp > 1) {
    j["stage_layers"] = c.stage_layers;
    j["pp_layout"] = c.pp_layout;
    j["memory_worst_stage"] = c.memory.stage;
  }
  j["memory_peak_phase"] = c.memory.peak_phase;
  nlohmann::json mem = nlohmann::json::object();
  for (const auto& i : c.memory.items)
    mem[i.name] = {{"bytes", std::llround(i.bytes)}, {"phase", i.phase}, {"pool", i.pool}};
  j["memory_breakdown"] = mem;
  if (!c.feasible) {
    j["step_time_s"] = nullptr;
    j["tokens_per_s_per_gpu"] = nullptr;
    j["mfu"] = nullptr;
    return j;
  }
  const auto& t = c.time;
  j["engine"] = t.engine;
  j["step_time_s"] = t.step_time_s;
  j["tokens_per_step"] = c.tokens_per_step;
  j["tokens_per_s_per_gpu"] = c.tokens_per_s_per_gpu;
  j["mfu"] = c.mfu;
  j["mfu_palm"] = c.mfu_palm;
  j["time_breakdown"] = {
      {"attention_s", t.attention_s},         {"attention_recompute_s", t.attention_recompute_s},
      {"other_compute_s", t.other_compute_s}, {"pointwise_s", t.pointwise_s},
      {"head_and_loss_s", t.head_s},          {"tp_comm_s", t.tp_comm_s},
      {"fsdp_comm_s", t.fsdp_comm_s},         {"cp_link_s", t.cp_link_s},
      {"link_exposed_s", t.fsdp_exposed_s},   {"optimizer_s", t.optimizer_s},
      {"micro_step_s", t.micro_step_s}};
  j["time_breakdown"]["fp8_cast_s"] = t.fp8_cast_s;
  // Mixture of experts (moe.hpp): the experts' GEMMs (inside other_compute_s)
  // and the dispatch and combine all-to-alls (in the step: exposed, or
  // beside the other micro-batch's compute under --ep-overlap).
  j["time_breakdown"]["expert_compute_s"] = t.expert_compute_s;
  j["time_breakdown"]["ep_alltoall_s"] = t.ep_alltoall_s;
  j["time_breakdown"]["etp_comm_s"] = t.etp_comm_s;  // of ep_alltoall_s (expert TP above 1)
  j["time_breakdown"]["attention_chunked_layers"] = t.chunked_layers;
  if (t.ep_alltoall_bytes > 0 || t.expert_compute_s > 0)
    j["moe"] = {{"ep", c.ep},
                {"etp", c.etp > 0 ? c.etp : c.tp},
                {"imbalance", t.moe_imbalance},
                {"alltoall_bytes_per_gpu", t.ep_alltoall_bytes},
                {"dispatcher", t.ep_flex ? "flex" : "alltoall"},
                {"overlap", t.ep_overlapped}};
  // Frameworks as they execute (docs/plan.md), and the calibration.
  j["time_breakdown"]["launch_s"] = t.launch_s;
  j["time_breakdown"]["host_bound_s"] = t.host_bound_s;
  j["time_breakdown"]["tp_exposed_s"] = t.tp_exposed_s;
  j["time_breakdown"]["interference_s"] = t.interference_s;
  j["time_breakdown"]["fsdp_edges_s"] = t.edges_s;
  j["time_breakdown"]["dp_step_comm_s"] = t.dp_step_comm_s;
  j["time_breakdown"]["dp_step_exposed_s"] = t.dp_step_exposed_s;
  j["time_breakdown"]["dcn_s"] = t.dcn_s;
  j["time_breakdown"]["dcn_exposed_s"] = t.dcn_exposed_s;
  j["time_breakdown"]["hsdp_s"] = t.hsdp_s;
  j["time_breakdown"]["hsdp_exposed_s"] = t.hsdp_exposed_s;
  j["dp_replicate"] = c.dp_replicate;
  j["step_time_first_principles_s"] = t.step_time_first_principles_s;
  j["calibration_factor"] = t.calibration;
  j["time_breakdown"]["pp_bubble_s"] = t.pp_bubble_s;
  j["time_breakdown"]["pp_p2p_s"] = t.pp_p2p_s;
  j["time_breakdown"]["pp_bubble_fraction"] = t.pp_bubble_fraction;
  j["cp_collective_model"] = t.cp_model;
  j["ring_bytes_per_step"] = t.ring_bytes_per_step;
  j["cp_collectives"] = nlohmann::json::array();
  for (const auto& x : t.cp_collectives)
    j["cp_collectives"].push_back({{"op", x.op},
                                   {"pass", x.pass},
                                   {"what", x.what},
                                   {"seconds", x.seconds},
                                   {"per_layer", x.count},
                                   {"overlapped", x.overlapped}});
  if (c.pp > 1)
    j["pipeline"] = {{"schedule", schedule_json_name(c.pp_schedule)},
                     {"bubble_s", t.pp_bubble_s},
                     {"bubble_slots", t.pp_bubble_slots},
                     {"bubble_formula", bubble_formula(c.pp_schedule)},
                     {"slowest_stage", t.pp_slowest_stage},
                     {"message_bytes", std::llround(t.pp_message_bytes)},
                     {"message_s", t.pp_message_s},
                     {"link", t.pp_link}};
  return j;
}

std::string seconds(double s) {
  return s >= 1 ? fmt::format("{:.2f} s", s) : fmt::format("{:.1f} ms", s * 1e3);
}

namespace {
// One line per CP collective of a layer (one sequence): its time, how often a
// layer runs it, and whether it overlaps the attention's compute.
std::string cp_collective_text(const PlanTime& t) {
  std::string out;
  for (const auto& c : t.cp_collectives)
    out += fmt::format(
        "      {:<30}{:>10}  {}, x {} per layer; {}\n", fmt::format("{} {}", c.op, c.pass),
        c.seconds >= 1e-3 ? seconds(c.seconds) : fmt::format("{:.1f} us", c.seconds * 1e6), c.what,
        c.count,
        c.overlapped ? "async, overlaps the next step's compute"
                     : "on the attention's critical path");
  return out;
}
}  // namespace

namespace {

// Lines said only when precision or framework differ from the defaults (bf16,
// pytorch-fsdp): which rules of precision.hpp and framework.hpp apply.
std::string precision_framework_text(const PlanRequest& r, const Hardware& hw) {
  std::string out;
  if (r.precision == Precision::FP8 || r.attention_dtype != DType::BF16)
    out += fmt::format(
        "  precision  projections + MLP {}{}, output head bf16, attention {}\n",
        to_string(r.precision),
        r.precision == Precision::FP8
            ? fmt::format(" ({:.0f} TFLOP/s FP8 peak x {:.3g} FP8 GEMM efficiency, per-tensor "
                          "{}scaling, casts by HBM)",
                          r.fp8_flops / 1e12, r.fp8_gemm_efficiency,
                          fp8_current_scaling(r)
                              ? "current (tensorwise: an amax pass before every cast) "
                              : "")
            : "",
        to_string(r.attention_dtype));
  const auto& fw = framework_profile(r);
  if (r.framework == Framework::Megatron)
    out += fmt::format(
        "  framework  megatron: {}; {} grads, FP8 weights {}; Transformer Engine's saved "
        "activations; vocab-parallel cross-entropy\n",
        fully_sharded(r) ? "Megatron FSDP, every state sharded over cp x dp"
                         : "distributed optimizer, params and grads sharded by tp only",
        grad_bytes(r) >= 4 ? "fp32" : "bf16", fp8_weights(r) ? "on" : "off");
  else if (r.framework == Framework::JaxXla)
    out += fmt::format(
        "  framework  jax-xla: FSDP 16 B/param over cp x dp; usable HBM {} ({}); blockwise FFN "
        "and loss, {} tokens; remat {}\n",
        gb(usable_hbm_bytes(r, hw)),
        r.tpu ? "TPU: the bytes_limit"
              : fmt::format("XLA's pool may grow to {:.0f}%", 100 * fw.usable_hbm_fraction_gpu),
        fw.block_tokens,
        r.remat_policy.empty() ? remat_policy_name(static_cast<int>(r.checkpointing))
                               : r.remat_policy.c_str());
  return out;
}

}  // namespace

namespace {

// The optimizer state as the framework holds it, bytes per parameter.
std::string state_text(const PlanRequest& r) {
  const double gb = grad_bytes(r);
  if (r.framework == Framework::Megatron)
    return fully_sharded(r)
               ? fmt::format("AdamW 2 + {:.0f} + 12 B/param sharded over cp x dp (Megatron FSDP)",
                             gb)
               : fmt::format(
                     "AdamW 2 + {:.0f} + 12/d B/param (Megatron distributed optimizer, d = cp x "
                     "dp)",
                     gb);
  return fmt::format(
      "AdamW {:.0f} B/param (params 4, grads {:.0f}, m and v 8) sharded FSDP over "
      "cp x dp",
      12 + gb, gb);
}

}  // namespace

std::string header(const PlanRequest& r, const Hardware& hw, double hbm,
                   const std::string& cm_name) {
  std::string out;
  const auto& s = r.shape;
  out += fmt::format(
      "ringsim plan: {} ({:.2f}B params, {} layers, {} heads / {} KV heads) on {} x {} ({} HBM "
      "each)\n",
      s.name, static_cast<double>(total_params(s)) / 1e9, s.layers, s.heads, s.kv_heads, r.gpus,
      hw.gpu_name, gb(hbm));
  out += fmt::format("  hardware   {}\n", hw.describe());
  out += fmt::format(
      "  training   bf16 mixed precision, {}, {} activation checkpointing, {} loss, {} mask\n",
      state_text(r), to_string(r.checkpointing),
      r.framework == Framework::JaxXla ? std::string("blockwise") : to_string(r.loss),
      r.causal ? "causal" : "full");
  out += precision_framework_text(r, hw);
  // Pipeline: which microbatch count m the schedule runs (docs/plan.md).
  const bool pipelined =
      r.pp_degrees.empty() ||
      std::any_of(r.pp_degrees.begin(), r.pp_degrees.end(), [](auto p) { return p > 1; });
  const std::string pp_fixed = r.pp_degrees.size() == 1 && r.pp_degrees.front() > 1
                                   ? fmt::format("{}", r.pp_degrees.front())
                                   : "pp";
  std::string batch;
  if (r.global_batch_tokens > 0) {
    batch = fmt::format("{} tokens per step ({} sequences)", r.global_batch_tokens,
                        r.global_batch_tokens / r.context);
    if (r.microbatches > 0)
      batch += fmt::format(", {} microbatches per replica (--microbatches)", r.microbatches);
    else if (pipelined && pp_fixed != "pp")
      batch += ", one sequence per microbatch (m = sequences per replica)";
    else if (pipelined)
      batch +=
          ", micro-batch searched without a pipeline; with pp > 1 one sequence per "
          "microbatch (m = sequences per replica)";
    else
      batch += ", micro-batch searched";
    if (!r.batch_source.empty()) batch += "; " + r.batch_source;
  } else if (r.microbatches > 0) {
    batch =
        fmt::format("{} microbatches of one sequence per data-parallel replica (--microbatches)",
                    r.microbatches);
  } else if (pipelined) {
    batch = fmt::format(
        "{} microbatches of one sequence per data-parallel replica (m = pp, the default with pp > "
        "1; --microbatches or --global-batch-tokens to change){}",
        pp_fixed, r.pp_degrees.size() == 1 ? "" : "; one sequence without a pipeline");
  } else {
    batch = "one sequence per data-parallel replica (micro-batch 1)";
  }
  out += fmt::format("  batch      {}\n", batch);
  out += fmt::format(
      "  engine     analytic ({}) for attention; matmuls at the GEMM rate, pointwise at HBM\n",
      cm_name);
  return out;
}

namespace {

// The feasible rows, best first, as many as --top. Every column is as wide as
// its widest cell, so huge batches and micro-batch counts never run together.
std::string feasible_rows(const std::vector<PlanConfig>& cs, int top, int feasible) {
  std::vector<const PlanConfig*> rows;
  for (const auto& c : cs)
    if (c.feasible && static_cast<int>(rows.size()) < top) rows.push_back(&c);
  const auto mbga = [](const PlanConfig& c) {
    return fmt::format("{}x{}", c.micro_batch, c.grad_accum);
  };
  // Labels with a pipeline ("allgather cp 16 tp 8 pp 16") outgrow 24 columns.
  size_t lw = 24, wdp = 4, wbatch = 7, wblock = 9, wmb = 9;
  for (const auto* c : rows) {
    lw = std::max(lw, c->label().size() + 2);
    wdp = std::max(wdp, fmt::format("{}", c->dp).size() + 1);
    wbatch = std::max(wbatch, human_tokens(c->tokens_per_step).size() + 1);
    wblock = std::max(wblock, fmt::format("{}", c->block).size() + 1);
    wmb = std::max(wmb, mbga(*c).size() + 1);
  }
  std::string out = fmt::format("\n{:>4}  {:<{}}{:>{}}{:>{}}{:>{}}{:>{}}{:>11}{:>11}{:>11}{:>7}\n",
                                "rank", "config", lw, "dp", wdp, "batch", wbatch, "block", wblock,
                                "mb x ga", wmb, "memory", "step", "tok/s/GPU", "MFU");
  bool any_tight = false;
  int shown = 0;
  for (const auto* c : rows) {
    const bool tight = c->memory_verdict == "tight";
    any_tight = any_tight || tight;
    // batch: tokens per optimizer step, the same on every row unless the
    // flags made it per replica (--global-batch-tokens replica, --microbatches).
    out += fmt::format("{:>4}  {:<{}}{:>{}}{:>{}}{:>{}}{:>{}}{:>11}{:>11}{:>11.0f}{:>6.1f}%\n",
                       fmt::format("{}{}", c->tied ? "=" : "", ++shown), c->label(), lw, c->dp, wdp,
                       human_tokens(c->tokens_per_step), wbatch, c->block, wblock, mbga(*c), wmb,
                       gb(c->memory.total) + (tight ? "*" : ""), seconds(c->time.step_time_s),
                       c->tokens_per_s_per_gpu, 100 * c->mfu);
  }
  if (feasible > shown)
    out += fmt::format("  ... {} more feasible (--top N, or --json for all)\n", feasible - shown);
  if (any_tight)
    out += fmt::format(
        "  * tight: over the HBM by less than the memory model's {:.0f}% band (its measured "
        "error, docs/validation.md): it may fit; --explain itemises it\n",
        100 * PlanConstants::kMemoryBand);
  return out;
}

// The infeasible rows as (label, reason): layouts with the same cp/tp/pp and
// the same reason share one line ("ring/zigzag cp 16 tp 8 pp 4"), found by a
// map so that tens of thousands of rows (65,536 GPUs) cost their count; the
// loop stops on Ctrl-C (cli/stop_scope.hpp). Each hint is kept once.
std::vector<std::pair<std::string, std::string>> infeasible_rows(const std::vector<PlanConfig>& cs,
                                                                 std::vector<std::string>& hints) {
  std::vector<std::pair<std::string, std::string>> rows;
  std::unordered_map<std::string, size_t> mergeable;  // reason + degrees -> row
  for (const auto& c : cs) {
    if (c.feasible) continue;
    throw_if_cancelled();
    const std::string reason = c.why.text();
    if (!c.why.hint.empty() && std::find(hints.begin(), hints.end(), c.why.hint) == hints.end())
      hints.push_back(c.why.hint);
    const auto label = c.label();
    if (c.cp <= 1 || c.layout == Layout::Hybrid) {
      rows.emplace_back(label, reason);
      continue;
    }
    const auto key = reason + '\x1f' + label.substr(label.find(' '));
    const auto [it, fresh] = mergeable.try_emplace(key, rows.size());
    if (fresh) {
      rows.emplace_back(label, reason);
      continue;
    }
    auto& first = rows[it->second].first;
    const auto sp = first.find(' ');
    const auto name = to_string(c.layout);
    if (("/" + first.substr(0, sp) + "/").find("/" + name + "/") == std::string::npos)
      first.insert(sp, "/" + name);
  }
  return rows;
}

}  // namespace

std::string table(const std::vector<PlanConfig>& cs, int top) {
  int feasible = 0;
  for (const auto& c : cs) feasible += c.feasible;
  std::string out = feasible == 0 ? "\nno configuration fits.\n" : feasible_rows(cs, top, feasible);
  if (feasible == static_cast<int>(cs.size())) return out;
  std::vector<std::string> hints;
  const auto rows = infeasible_rows(cs, hints);
  // The closest misses first (the search's order); with TP and PP searched
  // there can be a hundred lines, so as many as --top (at least 12), the
  // rest counted.
  const size_t shown_rows = std::min(rows.size(), static_cast<size_t>(std::max(12, top)));
  size_t width = 24;
  for (size_t i = 0; i < shown_rows; ++i) width = std::max(width, rows[i].first.size() + 2);
  out += "\ninfeasible:\n";
  for (size_t i = 0; i < shown_rows; ++i)
    out += fmt::format("  {:<{}}{}\n", rows[i].first, width, rows[i].second);
  if (rows.size() > shown_rows)
    out += fmt::format("  ... {} more infeasible (--json for all)\n", rows.size() - shown_rows);
  for (const auto& h : hints) out += fmt::format("  (where it applies: {})\n", h);
  return out;
}

std::string memory_itemised(const PlanMemory& m) {
  const auto items = m.by_size();
  std::string out = "    largest:";
  for (size_t i = 0; i < items.size() && i < 3; ++i)
    out += fmt::format("{} {} ({})", i ? "," : "", items[i].name, gb(items[i].bytes));
  out += "\n";
  for (const auto& i : items)
    out += fmt::format("    {:<32}{:>10}  {:<15}{:<10}{}\n", i.name, gb(i.bytes), i.phase, i.pool,
                       i.formula);
  out += fmt::format(
      "    {:<32}{:>10}  persistent {} + max(loss {}, layer_backward {}) + overhead {}; "
      "peak at the {}\n",
      "total", gb(m.total), gb(m.persistent), gb(m.loss_phase), gb(m.backward_phase),
      gb(m.overhead), m.peak_phase);
  out += fmt::format(
      "    {:<32}{:>10}  the tensors' peak (torch.cuda.max_memory_allocated); with the "
      "allocator's reserve {} (max_memory_reserved)\n",
      "allocated", gb(m.allocated), gb(m.reserved));
  return out;
}

namespace {

// The pipeline line's schedule, in words.
std::string schedule_text(const PlanConfig& c) {
  switch (c.pp_schedule) {
    case PipelineSchedule::Interleaved:
      return fmt::format(" x {} virtual (interleaved 1F1B)", c.pp_virtual);
    case PipelineSchedule::ZbH1:
      return " (ZB-H1: backward split into input and weight gradients)";
    case PipelineSchedule::ZbV:
      return " (ZB-V: two model chunks per device in a V)";
    case PipelineSchedule::DualPipe:
      return " (DualPipe: stages i and p-1-i on each device, microbatches from both ends)";
    case PipelineSchedule::OneFOneB:
      break;
  }
  return " (1F1B)";
}

// Which schedule the search chose for this shape, and what the others gave.
std::string schedule_choice(const PlanConfig& c) {
  if (c.pp <= 1 || c.schedules_tried.size() < 2) return {};
  std::string out = fmt::format("  schedule   {} of", schedule_json_name(c.pp_schedule));
  for (size_t i = 0; i < c.schedules_tried.size(); ++i) {
    const auto& x = c.schedules_tried[i];
    out += i ? "; " : " ";
    out += x.feasible ? fmt::format("{} {:.0f} tokens/s/GPU (bubble {})", to_string(x.schedule),
                                    x.tokens_per_s_per_gpu, seconds(x.bubble_s))
                      : fmt::format("{} refused ({})", to_string(x.schedule), x.why);
  }
  return out + ": the fastest that fits\n";
}

}  // namespace

std::string explain(const PlanConfig& c, double hbm) {
  std::string out = fmt::format(
      "\nexplain: {} (dp {}, block {} tokens, micro-batch {} x {} accumulation steps)\n", c.label(),
      c.dp, c.block, c.micro_batch, c.grad_accum);
  if (!c.evaluated) return out + "  " + c.reason() + "\n";
  if (c.pp > 1)
    out += fmt::format(
        "  pipeline   {} stages{}, {} microbatches, layers per stage {} ({} split; + embedding on "
        "stage 0, output head + loss on stage {}); neighbours {} ranks apart\n",
        c.pp, schedule_text(c), c.grad_accum, layers_text(c.stage_layers), c.pp_layout,
        c.pp_schedule == PipelineSchedule::ZbV ? std::string("0 (the V's end)")
        : c.pp_schedule == PipelineSchedule::DualPipe
            ? fmt::format("{} (both ends hold both)", c.pp - 1)
            : fmt::format("{}", c.pp - 1),
        c.tp * c.cp);
  out += schedule_choice(c);
  out += c.pp > 1
             ? fmt::format("  memory per device of the worst stage, stage {} (GiB = 2^30 bytes)\n",
                           c.memory.stage)
             : std::string("  memory per device (GiB = 2^30 bytes)\n");
  out += memory_itemised(c.memory);
  out += fmt::format("    {:<32}{:>10}  {}\n", "HBM", gb(hbm),
                     !c.feasible ? c.reason()
                     : c.memory_verdict == "tight"
                         ? fmt::format("tight: over by {}, within the memory "
                                       "model's {:.0f}% band",
                                       gb(c.memory.total - hbm), 100 * PlanConstants::kMemoryBand)
                         : "fits");
  if (!c.feasible) return out;
  const auto& t = c.time;
  out += fmt::format("  time per step (engine: {}){}\n", t.engine,
                     c.pp > 1 ? fmt::format("; compute and link terms of the slowest stage, "
                                            "stage {}, x {} microbatches",
                                            t.pp_slowest_stage, c.grad_accum)
                              : std::string());
  auto row = [&](const char* k, double v, const char* why) {
    out += fmt::format("    {:<32}{:>10}  {}\n", k, seconds(v), why);
  };
  const auto attention_why =
      t.chunked_layers > 0
          ? fmt::format(
                "analyze(fwdbwd) x micro-batches: {} layers over the whole sequence, {} "
                "causal inside chunks of {} tokens",
                t.global_layers, t.chunked_layers, t.attention_chunk)
          : std::string("analyze(fwdbwd) x layers x micro-batches");
  row("attention fwd+bwd", t.attention_s, attention_why.c_str());
  row("attention recompute", t.attention_recompute_s,
      "the forward again, as the remat policy says");
  row("projections + MLP", t.other_compute_s,
      "matmuls by shape at the GEMM rate, a tile's fill at short K (incl. recompute)");
  if (t.expert_compute_s > 0) {
    row("  of which experts", t.expert_compute_s,
        fmt::format("router, routed and shared experts' GEMMs, token permutes at HBM; the "
                    "slowest EP rank's load x{:.3f} the mean (sampled routing, --routing-seed)",
                    t.moe_imbalance)
            .c_str());
    const bool a2a = t.ep_alltoall_bytes > 0;  // EP 1 with expert TP: its gathers alone
    const auto a2a_name = fmt::format("{} ({})", a2a ? "EP all-to-all" : "expert TP gathers",
                                      t.ep_overlapped ? "overlapped" : "exposed");
    const auto a2a_why =
        a2a ? fmt::format("dispatch + combine, forward and backward, {} B per GPU each ({}){}",
                          static_cast<std::int64_t>(t.ep_alltoall_bytes),
                          t.ep_flex ? "flex: once per remote node, then NVLink" : "alltoall",
                          t.ep_overlapped ? "; beside the other micro-batch's compute" : "")
            : std::string(
                  "no EP all-to-all (EP 1): the routed tokens gathered over the ETP group "
                  "and scattered back, forward and backward");
    row(a2a_name.c_str(), t.ep_alltoall_s, a2a_why.c_str());
    if (a2a && t.etp_comm_s > 0)
      row("  of which expert TP", t.etp_comm_s,
          "the routed tokens gathered over the ETP group after the dispatch and scattered "
          "before the combine");
  }
  row("pointwise ops", t.pointwise_s, "norms, RoPE, residuals, SwiGLU by HBM bandwidth");
  if (t.fp8_cast_s > 0)
    row("FP8 casts", t.fp8_cast_s,
        ("linear inputs, weights, output grads: " + t.fp8_cast_how).c_str());
  row("output head + loss", t.head_s, "2/4 x tokens x d_model x vocab FLOPs + fp32 loss traffic");
  row("kernel launch gaps", t.launch_s,
      "device gap per kernel (docs/plan.md, 'Frameworks as they execute')");
  row("host-bound (CPU) time", t.host_bound_s, "host dispatch beyond the device's work, per layer");
  row("tensor-parallel comm", t.tp_comm_s,
      "sequence-parallel all-gather/reduce-scatter (link time)");
  row("  of which exposed", t.tp_exposed_s,
      fmt::format("not hidden behind the GEMMs (--tp-overlap); {}", t.tp_where).c_str());
  row("overlap interference", t.interference_s, "compute slowed while collectives hold SMs");
  row("FSDP comm (link time)", t.fsdp_comm_s, "all-gather fwd, all-gather + reduce-scatter bwd");
  row("CP comm (link time)", t.cp_link_s,
      t.cp_model == "xla-ici"
          ? "XLA's collectives on the ICI torus (docs/plan.md, 'CP collectives'), itemised:"
          : "ring transfers / all-to-alls / gathers, itemised:");
  out += cp_collective_text(t);
  row("exposed link time", t.fsdp_exposed_s, "link time not hidden behind compute");
  if (t.dp_step_comm_s > 0) {
    row("  of which DP per step", t.dp_step_exposed_s,
        "the once-per-step reduce-scatter + all-gather not hidden");
    if (t.edges_s > 0)
      row("    of which FSDP edges", t.edges_s,
          "first all-gather and last reduce-scatter per step");
  } else {
    row("  of which FSDP edges", t.edges_s,
        "first all-gather and last reduce-scatter per micro-step");
  }
  if (t.hsdp_s > 0) {
    row("HSDP all-reduce (replicas)", t.hsdp_s,
        fmt::format("each shard's gradients across the {} replica groups, once per step",
                    c.dp_replicate)
            .c_str());
    row("  of which exposed", t.hsdp_exposed_s, "beyond the last micro-step's backward");
  }
  if (t.dcn_s > 0) {
    row("DCN all-reduce (slices)", t.dcn_s,
        "each chip's gradient shard, ring over the slices, once per step");
    row("  of which exposed", t.dcn_exposed_s, "beyond the last micro-step's backward");
  }
  if (c.pp > 1) {
    out += fmt::format(
        "    {:<32}{:>10}  {} = {:.4g} x the slowest stage's microbatch (stage {}, {}); "
        "{:.1f}% of the pipeline's time\n",
        "pipeline bubble", seconds(t.pp_bubble_s), bubble_slots_formula(c.pp_schedule),
        t.pp_bubble_slots, t.pp_slowest_stage, seconds(t.micro_step_s), 100 * t.pp_bubble_fraction);
    out += fmt::format(
        "    {:<32}{:>10}  {} messages of {} on {} ({} each), not "
        "overlapped\n",
        "pipeline P2P", seconds(t.pp_p2p_s),
        c.pp_schedule == PipelineSchedule::OneFOneB ||
                c.pp_schedule == PipelineSchedule::Interleaved
            ? std::string("(m + (p-1)/V) x 2V")
            : fmt::format("(m + bubble) x {}", 2 * schedule_chunks(c.pp_schedule, c.pp_virtual)),
        human_bytes(t.pp_message_bytes), t.pp_link, seconds(t.pp_message_s));
  }
  row("optimizer", t.optimizer_s,
      c.pp > 1 ? "AdamW, 28 B per sharded parameter of the largest stage by HBM bandwidth"
               : "AdamW, 28 B per sharded parameter by HBM bandwidth");
  if (t.calibration != 1) {
    row("step, first principles", t.step_time_first_principles_s, "--calibration none");
    out += fmt::format("    {:<32}{:>10}  framework-level factor (docs/validation.md)\n",
                       "calibration", fmt::format("x{:.3f}", t.calibration));
  }
  row("step", t.step_time_s, "");
  out += fmt::format(
      "    {:<32}{:>10.0f}\n    {:<32}{:>9.1f}%  (PaLM convention, causal-halved attention; "
      "full-square PaLM: {:.1f}%)\n",
      "tokens/s per GPU", c.tokens_per_s_per_gpu, "MFU", 100 * c.mfu, 100 * c.mfu_palm);
  return out;
}

}  // namespace ringsim
