// `ringsim plan`: capacity planning before cluster training. Searches context-
// parallel degree x layout (x tensor parallel, x micro-batch) with the rest of
// the devices as FSDP data parallel, and ranks the configs that fit in HBM.
// The search runs the analytic model in this process; `--recheck N` re-runs
// the attention of the top N configs with the SimGrid engine in child
// processes (proc/recheck.hpp; SimGrid allows one engine per process).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "cli/command.hpp"
#include "cli/plan_inference.hpp"
#include "cli/stop_scope.hpp"
#include "models/analytic/xla_collectives.hpp"
#include "models/core/errors.hpp"
#include "models/core/flag_types.hpp"
#include "models/core/parse.hpp"
#include "models/core/schema.hpp"
#include "models/plan/activations.hpp"
#include "models/plan/assumption_list.hpp"
#include "models/plan/calibration.hpp"
#include "models/plan/cost.hpp"
#include "models/plan/documents.hpp"
#include "models/plan/error_band.hpp"
#include "models/plan/moe.hpp"
#include "models/plan/plan.hpp"
#include "models/plan/report.hpp"
#include "models/plan/schedule.hpp"
#include "models/plan/uncertainty.hpp"
#include "proc/recheck.hpp"
#include "proc/resolve.hpp"
#include "proc/run_spec.hpp"
#include "sim/faults.hpp"
#include "sim/progress.hpp"

namespace ringsim::cli {
namespace {

constexpr std::int64_t kDefaultContextLimit = std::int64_t{1} << 30;

struct PlanFlags {
  proc::WorkloadFlags w;
  proc::HardwareFlags hw;
  std::string context, gpus, global_batch_tokens, checkpointing = "full", optimizer = "adamw";
  std::string slices;
  // TP and PP are searched unless fixed (--tp 1 --pp 1: context parallelism alone).
  std::string cp, layout, tp = "auto", loss = "eager", hbm, layers, vocab, top = "10",
                          recheck = "0";
  bool max_context = false, explain = false, json = false, causal = true, fail_if_none = false;
  std::string pp = "auto", pp_virtual = "1", microbatches;  // pipeline (models/plan/pipeline.hpp)
  std::string pp_schedule = "auto";                         // models/plan/schedule.hpp
  std::string dp_replicate = "1";                           // HSDP replica groups
  std::string pp_layout = "auto", pp_first_layers, pp_last_layers;
  // Precision and framework profile (models/plan/precision.hpp, framework.hpp)
  std::string precision = "bf16", attention_precision = "bf16", framework = "pytorch-fsdp";
  // --inference (cli/plan_inference.hpp)
  bool inference = false;
  std::string ttft_target, cached, batch, decode_tokens, price, variant;
  std::string train_tokens;  // training cost (models/plan/cost.hpp); price serves both
  // Layouts under packed documents (models/plan/documents.hpp)
  std::string documents, samples = "16", seed = "0";
  // What-ifs for the re-check (proc/recheck.hpp, PlanFaults): run's fault flags.
  std::vector<std::string> stragglers, degrades;
  std::string jitter;
  // Execution and calibration (models/plan/execution.hpp, calibration.hpp)
  std::string compile = "off", tp_overlap, dp_overlap, micro_batch, calibration = "default",
              memory_check = "on", sequence_parallel, attention_dropout;
  // Memory rules apart from the framework's defaults (models/plan/framework.hpp)
  std::string grad_dtype, fp8_weights, fp8_recipe, remat_policy, fsdp, recompute_layers,
      offload_layers;
  std::string norm;
  // Mixture of experts (models/plan/moe.hpp)
  std::string ep, etp, capacity_factor, routing_seed, ep_dispatcher, ep_overlap;
  // Every flag on the command line, as typed ("--no-causal"), in the order
  // plan registers them.
  std::vector<std::string> given;
  bool gave(std::string_view flag) const {
    return std::find(given.begin(), given.end(), flag) != given.end();
  }
};

// The flags of plan that only mean something for a training step: with
// --inference each one given is refused, not ignored (the inference planner
// takes the model, hardware, --context, --gpus, --tp, --cp, --layout,
// --layers, --top and the --inference flags).
constexpr const char* kTrainingOnly[] = {"--vocab",
                                         "--slices",
                                         "--hbm",
                                         "--global-batch-tokens",
                                         "--activation-checkpointing",
                                         "--grad-dtype",
                                         "--fp8-weights",
                                         "--fp8-recipe",
                                         "--fsdp",
                                         "--norm",
                                         "--recompute-layers",
                                         "--offload-layers",
                                         "--remat-policy",
                                         "--optimizer",
                                         "--attention-precision",
                                         "--framework",
                                         "--loss",
                                         "--ep",
                                         "--etp",
                                         "--capacity-factor",
                                         "--ep-dispatcher",
                                         "--ep-overlap",
                                         "--routing-seed",
                                         "--pp",
                                         "--pp-virtual",
                                         "--pp-schedule",
                                         "--dp-replicate",
                                         "--pp-layout",
                                         "--pp-first-stage-layers",
                                         "--pp-last-stage-layers",
                                         "--microbatches",
                                         "--compile",
                                         "--tp-overlap",
                                         "--sequence-parallel",
                                         "--attention-dropout",
                                         "--dp-overlap",
                                         "--micro-batch",
                                         "--memory-check",
                                         "--calibration",
                                         "--causal",
                                         "--no-causal",
                                         "--max-context",
                                         "--explain",
                                         "--recheck",
                                         "--documents",
                                         "--samples",
                                         "--seed",
                                         "--straggler",
                                         "--degrade",
                                         "--jitter",
                                         "--train-tokens"};

int run_inference(const PlanFlags& f) {
  for (const auto& given : f.given)
    if (std::find(std::begin(kTrainingOnly), std::end(kTrainingOnly), given) !=
        std::end(kTrainingOnly))
      throw InputError(fmt::format("{}: plans training; not with --inference", given));
  InferencePlanFlags g;
  g.w = f.w;
  g.hw = f.hw;
  g.context = f.context;
  g.cached = f.cached;
  g.gpus = f.gpus;
  g.tp = f.gave("--tp") ? f.tp : "";
  g.cp = f.cp;
  g.layout = f.layout;
  g.layers = f.layers;
  g.top = f.top;
  g.ttft_target = f.ttft_target;
  g.batch = f.batch;
  g.decode_tokens = f.decode_tokens;
  g.price = f.price;
  g.variant = f.variant;
  g.precision = f.precision;
  g.json = f.json;
  g.fail_if_none = f.fail_if_none;
  // A search at millions of tokens takes a second a split under chunked
  // attention: a bar on a terminal, and Ctrl-C or SIGTERM ends it at the next
  // split with exit 130.
  const StopScope stop;
  const ProgressScope bar(sim::progress_wanted(false), "ringsim plan --inference: splits");
  return plan_inference(g);
}

// --compile, --tp-overlap, --micro-batch and --calibration onto the request.
std::string layouts_text(const PlanRequest& r) {
  std::vector<std::string> v;
  for (auto l : framework_layouts(r)) v.push_back(to_string(l));
  return join(v, ", ");
}

// The band of this framework on this device family at this context
// (models/plan/error_band.hpp); first principles have their own.
ErrorBand plan_error_band(const PlanRequest& r, const Device& device, bool calibration_none) {
  auto k = band_class(to_string(r.framework), device.family, training_regime(r.context));
  if (calibration_none) k += " (calibration none)";
  return choose_band(k, r.user_calibration.get(), r.calibration_file);
}

// The best row under each other framework, same request and hardware (its
// own calibration, layouts and rules): what switching would give. Like is
// compared with like: a framework with a fitted factor on this device
// family is preferred when the plan's own has one (a first-principles row
// beside a calibrated one reads faster by the missing overhead), and a row
// without one says so (`calibrated` false).
struct OtherFramework {
  std::string framework, label, group;
  double tokens_per_s_per_gpu = 0, mfu = 0;
  bool calibrated = false;
  ErrorBand band;
};
std::optional<OtherFramework> best_other_framework(const PlanRequest& r, const Hardware& hw,
                                                   const Implementation& cm, const Device& device,
                                                   bool calibration_none) {
  std::optional<OtherFramework> best;
  const bool own_calibrated = !calibration_none && has_factor(r);
  // Better: same calibration state as the plan's own first, then faster.
  auto better = [&](const OtherFramework& a, const OtherFramework& b) {
    const bool la = a.calibrated == own_calibrated, lb = b.calibrated == own_calibrated;
    if (la != lb) return la;
    return a.tokens_per_s_per_gpu > b.tokens_per_s_per_gpu;
  };
  for (const auto& name : framework_names()) {
    const auto fw = parse_framework("--framework", name);
    if (fw == r.framework && !r.any_layout) continue;
    PlanRequest o = r;
    o.framework = fw;
    o.any_layout = false;
    o.moves = {};  // --set moved the plan's framework, not this one
    o.compile = o.compile && fw == Framework::PytorchFsdp;
    // Megatron's flag; the others shard their norms their own way.
    o.sequence_parallel = o.sequence_parallel || fw != Framework::Megatron;
    std::erase_if(o.layouts, [&](Layout l) { return !framework_implements(fw, l); });
    if (!r.layouts.empty() && o.layouts.empty()) continue;
    // Its own factor, chosen as for the plan's framework (the user's file first).
    set_calibration(o, device.family, calibration_none);
    try {
      for (const auto& c : search(o, hw, cm)) {
        if (!c.feasible) continue;
        OtherFramework of{name,
                          c.label(),
                          o.calibration_key,
                          c.tokens_per_s_per_gpu,
                          c.mfu,
                          !calibration_none && has_factor(o),
                          plan_error_band(o, device, calibration_none)};
        if (!best || better(of, *best)) best = of;
        break;
      }
    } catch (const InputError&) {
      // A request this framework refuses (a flag of another's) has no row.
    }
  }
  return best;
}

std::string framework_text(const PlanRequest& r, const std::string& kernel,
                           const std::optional<OtherFramework>& other) {
  std::string out = fmt::format(
      "  framework  {}{}: ranks {} (docs/plan.md, 'Framework x layout'); kernel {}",
      r.any_layout ? "any, with the rules of " : "", to_string(r.framework),
      r.any_layout ? std::string("every layout") : "the layouts it implements, " + layouts_text(r),
      kernel);
  if (other)
    out += fmt::format(
        "; best other framework: {} {} at {:.0f} tok/s/GPU, MFU {:.1f}%{}, error band {} "
        "(--framework {})",
        other->framework, other->label, other->tokens_per_s_per_gpu, 100 * other->mfu,
        other->calibrated || r.calibration_key.empty() || r.calibration == 1
            ? ""
            : fmt::format(", first principles (no {} factor)", other->group),
        other->band.validated() ? "+-" + band_percent(other->band.high)
                                : std::string("unvalidated"),
        other->framework);
  return out + "\n";
}

// Rows whose band overlaps the best row's: the scoreboard cannot tell them
// apart. Compared on time per token per GPU (the ranking's inverse), which
// rows of different batches share.
void mark_ties(std::vector<PlanConfig>& cs, const ErrorBand& band) {
  const PlanConfig* best = nullptr;
  for (auto& c : cs) {
    if (!c.feasible) continue;
    if (!best) {
      best = &c;
      continue;
    }
    c.tied =
        band.validated() && c.tokens_per_s_per_gpu > 0 &&
        (1 + band.low) / c.tokens_per_s_per_gpu <= (1 + band.high) / best->tokens_per_s_per_gpu;
  }
}

std::string ties_text(const std::vector<PlanConfig>& cs, const ErrorBand& band, int top) {
  int shown = 0, tied = 0;
  for (const auto& c : cs) {
    if (!c.feasible || shown++ >= top) continue;
    tied += c.tied;
  }
  if (!band.validated()) return "  (no error band for this class: ranks rest on the model alone)\n";
  if (tied == 0) return "";
  return fmt::format(
      "  = tied with rank 1: within its error band (-{} to +{} on the time per token), "
      "so the scoreboard cannot rank them apart\n",
      band_percent(band.low), band_percent(band.high));
}

void apply_execution_flags(const PlanFlags& f, const Device& device, PlanRequest& r) {
  r.compile = parse_choice("--compile", f.compile, {"on", "off"}) == "on";
  if (r.compile && r.framework != Framework::PytorchFsdp)
    throw InputError(fmt::format(
        "--compile: torch.compile applies to --framework pytorch-fsdp; {} compiles its own way",
        to_string(r.framework)));
  if (!f.tp_overlap.empty())
    r.tp_overlap = parse_choice("--tp-overlap", f.tp_overlap, {"on", "off"}) == "on" ? 1 : 0;
  if (!f.sequence_parallel.empty()) {
    r.sequence_parallel =
        parse_choice("--sequence-parallel", f.sequence_parallel, {"on", "off"}) == "on";
    if (r.framework != Framework::Megatron)
      throw InputError(
          "--sequence-parallel: Megatron-LM's flag, for --framework megatron (TorchTitan's TP "
          "plan always shards the norms over the sequence; jax-xla shards by its own rules)");
    if (!r.sequence_parallel && r.tp_overlap == 1)
      throw InputError(
          "--tp-overlap on: Megatron-LM overlaps TP communication only with sequence parallelism "
          "(\"Tensor parallel communication/GEMM overlap can happen only when sequence "
          "parallelism is enabled\"); not with --sequence-parallel off");
    if (!r.sequence_parallel && is_moe(r.shape))
      throw InputError(
          "--sequence-parallel off: a mixture-of-experts model with TP runs sequence parallel "
          "(Megatron-LM: \"When using MoE and tensor parallelism, sequence parallelism must be "
          "used.\")");
  }
  if (!f.attention_dropout.empty()) {
    r.attention_dropout = parse_real("--attention-dropout", f.attention_dropout, 0, 0.99);
    // Its scores are counted as whole rows of the context: not where packed
    // documents or attention chunks bound them.
    if (r.attention_dropout > 0 &&
        (!f.documents.empty() || chunked_attention_applies(r.shape, r.context)))
      throw InputError(
          "--attention-dropout: counts each query's whole row of scores; not with packed "
          "documents (--documents) or a chunked-attention model, whose rows are shorter");
  }
  if (!f.dp_overlap.empty()) {
    r.dp_overlap = parse_choice("--dp-overlap", f.dp_overlap, {"on", "off"}) == "on";
    if (r.framework != Framework::Megatron || r.fsdp == 1)
      throw InputError(
          "--dp-overlap: applies to --framework megatron's distributed optimizer (its "
          "--overlap-grad-reduce and --overlap-param-gather); FSDP overlaps its own collectives");
  }
  if (!f.micro_batch.empty())
    r.micro_batch = parse_count("--micro-batch", f.micro_batch, 1, 1 << 20);
  r.memory_check = parse_choice("--memory-check", f.memory_check, {"on", "off"}) == "on";
  // A path (it holds '/' or '.') is the user's calibration file
  // (`ringsim calibrate --runs`); else default or none.
  const bool file = f.calibration.find_first_of("/.") != std::string::npos;
  if (file) {
    r.user_calibration = read_user_calibration(f.calibration);
    r.calibration_file = f.calibration;
  }
  const auto cal = file ? std::string("default")
                        : parse_choice("--calibration", f.calibration, {"default", "none"});
  set_calibration(r, device.family, cal == "none");
}

// When nothing fits for memory: the catalog devices whose reported memory
// holds what the closest config needs (the runtime's terms differ a little
// by device; the estimate is this device's).
std::string larger_device_text(const std::vector<PlanConfig>& cs, const Catalog& cat,
                               const std::string& gpu) {
  if (cs.empty() || cs.front().feasible) return {};
  const PlanConfig* best = nullptr;
  for (const auto& c : cs)
    if (c.why.kind == Infeasibility::Kind::Memory &&
        (!best || c.why.needed_bytes < best->why.needed_bytes))
      best = &c;
  if (!best) return {};
  std::vector<std::string> names;
  for (const auto& d : cat.devices())
    if (d.name != gpu && d.hbm_bytes >= best->why.needed_bytes)
      names.push_back(fmt::format("{} ({:.1f} GiB)", d.name, d.hbm_bytes / 1073741824.0));
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  return fmt::format(
      "\nthe closest config, {}, needs {:.1f} GiB per device; {}\n", best->label(),
      best->why.needed_bytes / 1073741824.0,
      names.empty() ? std::string("no device in the catalog holds that: more devices (--gpus) or "
                                  "more parallelism (--cp, --pp, --tp)")
                    : "a device that holds it: " + list + " (--gpu NAME)");
}

// --ep, --capacity-factor, --routing-seed: a mixture-of-experts model's
// expert parallelism and routing (models/plan/moe.hpp).
// --pp-schedule auto, or a comma list of schedules to search (schedule.hpp):
// only what the framework ships unless --framework any; interleaved and
// --pp-virtual above 1 go together.
void apply_schedule_flag(const PlanFlags& f, PlanRequest& r) {
  if (f.pp_schedule == "auto") return;
  for (std::size_t at = 0; at <= f.pp_schedule.size();) {
    const auto end = std::min(f.pp_schedule.find(',', at), f.pp_schedule.size());
    const auto s = parse_pipeline_schedule("--pp-schedule", f.pp_schedule.substr(at, end - at));
    if (std::find(r.pp_schedules.begin(), r.pp_schedules.end(), s) == r.pp_schedules.end())
      r.pp_schedules.push_back(s);
    at = end + 1;
  }
  const auto has = framework_schedules(r);
  for (auto s : r.pp_schedules)
    if (std::find(has.begin(), has.end(), s) == has.end())
      throw InputError(fmt::format(
          "--pp-schedule: {} does not ship {} (docs/plan.md, 'Pipeline schedules'); pass "
          "--framework any to plan it anyway",
          to_string(r.framework), to_string(s)));
  const bool interleaved = std::find(r.pp_schedules.begin(), r.pp_schedules.end(),
                                     PipelineSchedule::Interleaved) != r.pp_schedules.end();
  if (interleaved && (r.pp_virtual <= 1 || r.pp_schedules.size() > 1))
    throw InputError(
        "--pp-schedule: interleaved goes alone and with --pp-virtual V above 1 (V model chunks "
        "per device)");
  if (!interleaved && r.pp_virtual > 1)
    throw InputError("--pp-virtual: above 1 means --pp-schedule interleaved");
}

void apply_moe_flags(const PlanFlags& f, PlanRequest& r) {
  const bool moe = is_moe(r.shape);
  auto need_moe = [&](const char* flag) {
    if (!moe) throw InputError(not_moe_message(flag, r.shape));
  };
  if (!f.ep.empty()) {
    need_moe("--ep");
    r.ep = parse_count("--ep", f.ep, 1, r.shape.experts);
    if (r.shape.experts % r.ep != 0)
      throw InputError(
          fmt::format("--ep: must divide the model's {} experts, got {}", r.shape.experts, r.ep));
    r.ep_degrees = {r.ep};
  }
  if (!f.etp.empty()) {
    need_moe("--etp");
    r.etp = parse_count("--etp", f.etp, 1, r.shape.expert_ffn);
    if (r.shape.expert_ffn % r.etp != 0)
      throw InputError(fmt::format("--etp: must divide the experts' width {}, got {}",
                                   r.shape.expert_ffn, r.etp));
  }
  if (!f.capacity_factor.empty()) {
    need_moe("--capacity-factor");
    // 1: each expert takes its even share; 64: past any load a sample reaches.
    r.capacity_factor = parse_real("--capacity-factor", f.capacity_factor, 1, 64);
  }
  if (!f.ep_dispatcher.empty()) {
    need_moe("--ep-dispatcher");
    r.ep_flex = parse_choice("--ep-dispatcher", f.ep_dispatcher, {"alltoall", "flex"}) == "flex";
  }
  if (!f.ep_overlap.empty()) {
    need_moe("--ep-overlap");
    r.ep_overlap = parse_choice("--ep-overlap", f.ep_overlap, {"on", "off"}) == "on";
  }
  if (!f.routing_seed.empty()) {
    need_moe("--routing-seed");
    r.routing_seed = static_cast<std::uint64_t>(
        parse_count("--routing-seed", f.routing_seed, 0, std::numeric_limits<std::int64_t>::max()));
  }
}

// --grad-dtype, --fp8-weights and --remat-policy onto the request: each
// refused, with the reason, where the framework has no such rule.
void apply_memory_flags(const PlanFlags& f, PlanRequest& r) {
  const auto& fw = framework_profile(r);
  if (!f.grad_dtype.empty())
    r.grad_bytes = parse_choice("--grad-dtype", f.grad_dtype, {"bf16", "fp32"}) == "bf16" ? 2 : 4;
  if (!f.fp8_weights.empty()) {
    const bool on = parse_choice("--fp8-weights", f.fp8_weights, {"on", "off"}) == "on";
    if (on && r.precision != Precision::FP8)
      throw InputError("--fp8-weights: FP8 weights need --precision fp8");
    if (on && !fw.fp8_weights_supported)
      throw InputError(fmt::format(
          "--fp8-weights: {} keeps its master weights and gathers FP8 copies; FP8 weight "
          "storage is modelled for --framework megatron (--fp8-param-gather)",
          fw.name));
    r.fp8_weights = on ? 1 : 0;
  }
  if (!f.fp8_recipe.empty()) {
    r.fp8_recipe = parse_fp8_recipe("--fp8-recipe", f.fp8_recipe);
    // One line naming everything the flag needs (--framework any times
    // pytorch-fsdp's rules, so it is named as given).
    if (r.framework != Framework::Megatron || r.any_layout)
      throw InputError(fmt::format(
          "--fp8-recipe: {} picks its own scaling; the recipes (Transformer Engine's delayed or "
          "tensorwise current scaling) are modelled for --framework megatron with --precision fp8",
          r.any_layout ? std::string("--framework any") : fw.name));
    if (r.precision != Precision::FP8)
      throw InputError("--fp8-recipe: an FP8 scaling recipe needs --precision fp8");
  }
  if (!f.fsdp.empty()) {
    const bool on = parse_choice("--fsdp", f.fsdp, {"on", "off"}) == "on";
    if (r.framework != Framework::Megatron && !on)
      throw InputError(fmt::format(
          "--fsdp: {} always shards parameters, gradients and optimizer state (FSDP); off "
          "applies to --framework megatron",
          fw.name));
    r.fsdp = on ? 1 : 0;
  }
  if (!f.recompute_layers.empty()) {
    if (r.checkpointing != Checkpointing::Full)
      throw InputError(
          "--recompute-layers: partial recompute needs --activation-checkpointing full");
    r.recompute_layers =
        static_cast<int>(parse_count("--recompute-layers", f.recompute_layers, 1, r.shape.layers));
  }
  if (!f.norm.empty()) {
    r.fused_norm = parse_choice("--norm", f.norm, {"eager", "fused"}) == "fused";
    if (r.framework != Framework::PytorchFsdp)
      throw InputError(fmt::format(
          "--norm: chooses PyTorch's RMSNorm under --framework pytorch-fsdp; {} fuses its own",
          fw.name));
  }
  if (!f.offload_layers.empty())
    r.offload_layers =
        static_cast<int>(parse_count("--offload-layers", f.offload_layers, 1, r.shape.layers));
  if (!f.remat_policy.empty()) {
    if (r.framework != Framework::JaxXla)
      throw InputError(
          "--remat-policy: MaxText's jax.checkpoint policies apply to --framework jax-xla; use "
          "--activation-checkpointing none|selective|full");
    if (f.remat_policy.rfind("custom:", 0) == 0) {
      if (!valid_custom_remat_policy(f.remat_policy))
        throw InputError(fmt::format(
            "--remat-policy: custom:NAME[,NAME...] keeps MaxText's named tensors on the device; "
            "names are {} (got '{}')",
            fmt::join(remat_tensor_names(), ", "), f.remat_policy));
      r.remat_policy = f.remat_policy;
    } else {
      r.remat_policy = parse_choice("--remat-policy", f.remat_policy, remat_policy_names());
    }
    r.checkpointing = remat_policy_checkpointing(r.remat_policy);
  }
}

// Flags of --inference alone.
void refuse_inference_flags(const PlanFlags& f) {
  const std::pair<const char*, const std::string*> only[] = {{"--ttft-target", &f.ttft_target},
                                                             {"--cached", &f.cached},
                                                             {"--batch", &f.batch},
                                                             {"--decode-tokens", &f.decode_tokens},
                                                             {"--variant", &f.variant}};
  for (const auto& [flag, value] : only)
    if (!value->empty())
      throw InputError(fmt::format("{}: plans inference; add --inference", flag));
}

// The config's layer in job mode: skipped (and why), failed, or its result.
nlohmann::json job_json(const proc::RecheckJob& j) {
  if (!j.skipped.empty()) return {{"skipped", j.skipped}};
  if (!j.error.empty()) return {{"error", j.error}};
  return {{"gpus", j.gpus},
          {"fsdp", j.fsdp},
          {"layer_fwdbwd_s", j.layer_s},
          {"ring_alone_s", j.alone_s},
          {"contention", j.contention},
          {"why", j.why},
          {"hottest_link", j.hottest_link},
          {"hottest_link_peak", j.hottest_peak},
          {"hottest_link_mean", j.hottest_mean}};
}

std::string job_text(const proc::RecheckJob& j) {
  if (!j.skipped.empty()) return "";  // why is in the JSON (job.skipped)
  if (!j.error.empty()) return fmt::format("    job mode: failed: {}\n", j.error);
  std::string out = fmt::format(
      "    job mode ({} GPUs on one fabric, one layer fwd+bwd{}): {} (one ring alone, closed "
      "form: {}, x{:.3f})",
      j.gpus, j.fsdp ? ", FSDP flows" : "", seconds(j.layer_s), seconds(j.alone_s), j.contention);
  if (!j.hottest_link.empty())
    out += fmt::format("; busiest link {} ({:.0f}% peak, {:.0f}% mean)", j.hottest_link,
                       100 * j.hottest_peak, 100 * j.hottest_mean);
  if (!j.why.empty()) out += "; slowest ring: " + j.why;
  return out + "\n";
}

nlohmann::json recheck_json(const proc::Recheck& rc) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& x : rc.rows) {
    if (!x.error.empty()) {
      rows.push_back({{"config", x.config}, {"engine", "simgrid"}, {"error", x.error}});
      continue;
    }
    const auto& s = x.with_simgrid;
    nlohmann::json j;
    j["config"] = x.config;
    j["engine"] = "simgrid";
    j["attention_fwdbwd_s_per_layer_simgrid"] = x.fwdbwd_layer_s;
    j["attention_fwd_s_per_layer_simgrid"] = x.fwd_layer_s;
    j["attention_fwdbwd_s_per_layer_analytic_child"] = x.fwdbwd_layer_analytic_s;
    j["attention_s_analytic"] = x.analytic_attention_s;
    j["attention_s_simgrid"] = s.time.attention_s;
    j["attention_rel_diff"] =
        x.analytic_attention_s > 0 ? s.time.attention_s / x.analytic_attention_s - 1 : 0.0;
    j["step_time_s_analytic"] = x.analytic_step_s;
    j["step_time_s_simgrid_attention"] = s.time.step_time_s;
    j["tokens_per_s_per_gpu_simgrid_attention"] = s.tokens_per_s_per_gpu;
    j["mfu_simgrid_attention"] = s.mfu;
    j["job"] = job_json(x.job);
    j["compute_slowdown"] = x.compute_slowdown;
    rows.push_back(j);
  }
  return {{"status", rc.status_name()},
          {"message", rc.message},
          {"faults", rc.faults},
          {"configs", rows}};
}

std::string recheck_text(const proc::Recheck& rc) {
  using S = proc::Recheck::Status;
  if (rc.status == S::Off)
    return "\nSimGrid re-check: off (pass --recheck N to re-run the top N configs' attention with "
           "the SimGrid engine)\n";
  if (rc.status == S::Unavailable)
    return fmt::format(
        "\nSimGrid re-check: unavailable: {}; every number above is from the analytic engine\n",
        rc.message);
  std::string out = fmt::format(
      "\nSimGrid re-check ({}): the table above is analytic; with SimGrid's attention{}:\n",
      rc.message,
      rc.faults.empty()
          ? ""
          : fmt::format(" and the faults {} (the analytic step has none)", rc.faults));
  for (const auto& x : rc.rows) {
    if (!x.error.empty()) {
      out += fmt::format("  {:<24}failed: {}\n", x.config, x.error);
      continue;
    }
    const auto& s = x.with_simgrid;
    out += fmt::format(
        "  {:<24}attention {} (analytic {}, {:+.3f}%), step {} (analytic {}), {:.0f} tok/s/GPU, "
        "MFU {:.1f}%\n",
        x.config, seconds(s.time.attention_s), seconds(x.analytic_attention_s),
        100 * (x.analytic_attention_s > 0 ? s.time.attention_s / x.analytic_attention_s - 1 : 0.0),
        seconds(s.time.step_time_s), seconds(x.analytic_step_s), s.tokens_per_s_per_gpu,
        100 * s.mfu);
    if (x.compute_slowdown > 1)
      out += fmt::format(
          "  {:<24}every compute outside the attention x{:g} too: the straggler sets the pace of "
          "a synchronous step; step {:+.1f}% against the analytic one\n",
          "", x.compute_slowdown, 100 * (s.time.step_time_s / x.analytic_step_s - 1));
    out += job_text(x.job);
  }
  return out;
}

// --straggler GPU:F, --degrade LINK:F, --jitter S (with --seed): faults the
// re-check children run with, and a straggler's pace on the whole step.
proc::PlanFaults plan_faults(const PlanFlags& f, const PlanRequest& r, int recheck) {
  // The syntax now; a degraded link's name is judged by each child's platform,
  // so the degrades travel as given.
  const auto x = proc::parse_faults(f.stragglers, f.degrades, f.jitter, f.seed, r.gpus);
  proc::PlanFaults p;
  for (const auto& s : x.stragglers) p.stragglers.emplace_back(s.device, s.factor);
  p.degrades = f.degrades;
  p.jitter = x.jitter_sigma;
  p.seed = x.seed;
  if (p.any() && recheck == 0)
    throw InputError(fmt::format(
        "{}: needs --recheck N (the faults run in the SimGrid re-check of the top N configs)",
        !f.stragglers.empty() ? "--straggler"
        : !f.degrades.empty() ? "--degrade"
                              : "--jitter"));
  return p;
}

// --documents, --samples and --seed; nullopt without --documents.
std::optional<DocumentSampling> document_sampling(const PlanFlags& f) {
  DocumentSampling s;
  s.samples = parse_count("--samples", f.samples, 1, 10000);  // a bad value first, as given
  s.seed = static_cast<std::uint64_t>(parse_count("--seed", f.seed, 0, INT64_MAX));
  s.samples_given = f.gave("--samples");
  if (f.documents.empty()) {
    if (s.samples_given)
      throw InputError("--samples: packings of --documents to evaluate; add --documents DIST");
    return std::nullopt;
  }
  s.spec = parse_documents("--documents", f.documents);
  return s;
}

int run(const PlanFlags& f) {
  if (f.inference) return run_inference(f);
  refuse_inference_flags(f);
  const auto sampling = document_sampling(f);
  // The search at tens of thousands of GPUs, the re-check's children and the
  // packings of --documents run for minutes: from here on Ctrl-C or SIGTERM
  // ends the plan at its next unit of work (the search's next config, a ring
  // step of a closed form, a child, a packing) with exit 130.
  const int recheck = static_cast<int>(parse_count("--recheck", f.recheck, 0, 100));
  const StopScope stop;
  const auto hs = proc::parse_hardware(f.hw);
  const auto cat = proc::load_catalog(hs, /*framework_keys=*/true);
  auto hw = proc::resolve_hardware(hs, cat, DType::BF16);
  hw.xla_collectives = xla_collectives_apply(hw);  // a TPU runs XLA's collectives
  const auto& device = cat.device(hw.gpu_name);
  // --attention-precision fp32: attention at the device's fp32 peak (no
  // catalog kernel runs fp32, so the roofline); the GEMMs keep `hw`.
  const auto attention_dtype =
      parse_attention_precision("--attention-precision", f.attention_precision);
  if (attention_dtype == DType::FP32 && device.peak_fp32 <= 0)
    throw InputError(fmt::format(
        "--attention-precision: fp32 needs an fp32 peak; the catalog lists none for {}; use bf16",
        device.name));
  const auto cm = proc::make_implementation(
      hs, cat, attention_dtype == DType::FP32 ? proc::resolve_hardware(hs, cat, DType::FP32) : hw,
      attention_dtype, proc::kPlanProfileDtype);
  PlanRequest r;
  r.attention_dtype = attention_dtype;
  r.kernel = cm->kernel();
  r.tpu = device.kind == "tpu";
  // any: every layout, under the device's usual framework's rules.
  r.any_layout = f.framework == "any";
  if (!r.any_layout && std::find(framework_names().begin(), framework_names().end(), f.framework) ==
                           framework_names().end())
    throw InputError(fmt::format(
        "--framework: unknown value '{}'; choose one of: pytorch-fsdp, megatron, jax-xla, any",
        f.framework));
  r.framework = r.any_layout ? (r.tpu ? Framework::JaxXla : Framework::PytorchFsdp)
                             : parse_framework("--framework", f.framework);
  r.moves = parse_framework_moves(hs.sets, r.framework);
  r.precision = parse_precision("--precision", f.precision);
  if (r.precision == Precision::FP8) {
    if (device.peak_fp8 <= 0)
      throw InputError(fmt::format(
          "--precision: fp8 needs FP8 tensor cores; {} has none (catalog peak_flops.fp8 = 0); use "
          "bf16",
          device.name));
    r.fp8_flops = device.peak_fp8 * hw.clock_scale;  // at the power limit, like hw.flops
    r.fp8_gemm_efficiency = device.fp8_gemm_efficiency;
  }
  r.shape = proc::resolve_shape(proc::parse_workload(f.w, false));
  if (!f.layers.empty())
    set_layers(r.shape, static_cast<int>(parse_count("--layers", f.layers, 1, 100000)));
  if (!f.vocab.empty())
    r.shape.vocab = static_cast<int>(parse_count("--vocab", f.vocab, 1, 1 << 24));
  if (f.gpus.empty()) throw InputError("--gpus: required (number of devices, 1 .. 1M)");
  r.gpus = parse_count("--gpus", f.gpus, 1, 1 << 20);
  if (!f.slices.empty()) {
    r.slices = parse_count("--slices", f.slices, 1, 1 << 16);
    if (r.slices > 1 && (device.dcn_bandwidth_per_chip <= 0 || r.framework != Framework::JaxXla))
      throw InputError(fmt::format(
          "--slices: multi-slice training over the DCN is modelled for --framework jax-xla on a "
          "TPU with a catalog dcn_bandwidth_per_chip; {} under {} has none",
          device.name, framework_profile(r).name));
    if (r.gpus % r.slices != 0)
      throw InputError(fmt::format("--slices: must divide --gpus {}, got {}", r.gpus, r.slices));
    r.dcn_bandwidth_per_chip = device.dcn_bandwidth_per_chip;
    r.dcn_latency = device.dcn_latency;
  }
  if (f.context.empty() && !f.max_context)
    throw InputError(
        "--context: required (tokens per sequence, e.g. 131072 or 128K), or pass --max-context");
  const auto context =
      f.context.empty() ? kDefaultContextLimit : parse_count("--context", f.context, 1, kMaxTokens);
  r.context = context;
  if (sampling && !attention_chunks(r.shape, r.context).empty())
    throw InputError(fmt::format(
        "--documents: {}'s chunked attention (chunks of {} tokens in {} of {} layers) is not "
        "modelled together with packed documents; plan it without --documents",
        r.shape.name, r.shape.attention_chunk, chunked_attention_layers(r.shape), r.shape.layers));
  if (!f.global_batch_tokens.empty()) {
    if (f.max_context)
      throw InputError("--global-batch-tokens: cannot be combined with --max-context");
    if (f.global_batch_tokens != "replica") {
      const auto& v = f.global_batch_tokens;
      if (v.empty() || !std::isdigit(static_cast<unsigned char>(v.front())))
        throw InputError(fmt::format(
            "--global-batch-tokens: a token count (e.g. 4M, a multiple of --context) or "
            "'replica', got '{}'",
            v));
      r.global_batch_tokens = parse_count("--global-batch-tokens", v, 1, kMaxTokens);
    }
  }
  r.checkpointing = parse_checkpointing("--activation-checkpointing", f.checkpointing);
  parse_choice("--optimizer", f.optimizer, {"adamw"});
  r.loss = parse_loss("--loss", f.loss);
  apply_memory_flags(f, r);
  r.causal = f.causal;
  if (!f.cp.empty()) r.cp_degrees = {parse_count("--cp", f.cp, 1, 1 << 20)};
  apply_moe_flags(f, r);
  // One layout, or a comma list of the layouts to search (e.g. those a framework has).
  if (!f.layout.empty())
    for (std::size_t at = 0; at <= f.layout.size();) {
      const auto end = std::min(f.layout.find(',', at), f.layout.size());
      const auto l = parse_layout("--layout", f.layout.substr(at, end - at));
      if (std::find(r.layouts.begin(), r.layouts.end(), l) == r.layouts.end())
        r.layouts.push_back(l);
      at = end + 1;
    }
  if (!r.any_layout)
    for (auto l : r.layouts)
      if (!framework_implements(r, l))
        throw InputError(fmt::format(
            "--layout: {} does not implement {} (it has {}; docs/plan.md, 'Framework x layout'); "
            "pass --framework any to plan it anyway",
            to_string(r.framework), to_string(l), layouts_text(r)));
  if (f.tp == "auto") {
    r.tp_degrees = auto_tp_degrees(r, hw);
  } else {
    r.tp_degrees = {static_cast<int>(parse_count("--tp", f.tp, 1, 1024))};
  }
  if (!f.hbm.empty())
    r.hbm_bytes = static_cast<double>(parse_count("--hbm", f.hbm, 1 << 20, kMaxTokens));
  // Pipeline parallelism: searched by default (auto); --pp 1 keeps every layer on every device.
  if (f.pp == "auto")
    r.pp_degrees.clear();
  else
    r.pp_degrees = {parse_count("--pp", f.pp, 1, 1 << 20)};
  r.pp_virtual = static_cast<int>(parse_count("--pp-virtual", f.pp_virtual, 1, 1024));
  r.pp_layout = parse_pipeline_layout("--pp-layout", f.pp_layout);
  apply_schedule_flag(f, r);
  r.dp_replicate =
      f.dp_replicate == "auto" ? 0 : parse_count("--dp-replicate", f.dp_replicate, 1, 1 << 20);
  if (!f.pp_first_layers.empty())
    r.pp_first_layers = static_cast<int>(
        parse_count("--pp-first-stage-layers", f.pp_first_layers, 1, r.shape.layers));
  if (!f.pp_last_layers.empty())
    r.pp_last_layers = static_cast<int>(
        parse_count("--pp-last-stage-layers", f.pp_last_layers, 1, r.shape.layers));
  if ((r.pp_first_layers > 0) != (r.pp_last_layers > 0)) {
    // Name the flag that was given: the one missing is what to add.
    const bool first = r.pp_first_layers > 0;
    throw InputError(fmt::format("{}: give it with {} (Megatron's uneven edge stages take both)",
                                 first ? "--pp-first-stage-layers" : "--pp-last-stage-layers",
                                 first ? "--pp-last-stage-layers" : "--pp-first-stage-layers"));
  }
  if (r.pp_first_layers > 0 && r.pp_layout != PipelineLayout::Auto &&
      r.pp_layout != PipelineLayout::Even)
    throw InputError(
        "--pp-layout: the edge stages' layers (--pp-first/last-stage-layers) split the middle "
        "stages evenly; use --pp-layout even or auto with them");
  if (!f.microbatches.empty())
    r.microbatches = parse_count("--microbatches", f.microbatches, 1, 1 << 20);
  apply_execution_flags(f, device, r);
  if (f.global_batch_tokens.empty() && f.microbatches.empty() && !f.max_context)
    set_default_batch(r);
  const int top = static_cast<int>(parse_count("--top", f.top, 1, 100000));
  const double hbm = usable_hbm_bytes(r, hw);  // jax-xla on a GPU: XLA's 75% (framework.hpp)
  CostRequest cost;
  if (!f.price.empty())
    cost.price_per_gpu_hour = parse_price_per_gpu_hour("--price-per-gpu-hour", f.price);
  if (!f.train_tokens.empty())
    cost.train_tokens = parse_train_tokens("--train-tokens", f.train_tokens);

  std::optional<MaxContext> mc;
  if (f.max_context) {
    mc = max_context(r, hw, context);
    if (mc->tokens == 0) {
      // A rule (its words) rather than a memory term (one name) stops every
      // row: say the rule, as the row would.
      const auto ruled = std::all_of(mc->by_config.begin(), mc->by_config.end(), [](const auto& e) {
        return e.limited_by.find(' ') != std::string::npos;
      });
      if (ruled && !mc->by_config.empty())
        throw InputError(fmt::format("--max-context: no config takes even {} tokens: {} ({})",
                                     mc->granularity, mc->by_config.front().limited_by,
                                     mc->by_config.front().label));
      throw InputError(
          fmt::format("--max-context: not even {} tokens fit in {} of HBM with any config",
                      mc->granularity, human_gib(hbm)));
    }
    r.context = mc->tokens;
  }
  auto configs = search(r, hw, *cm);
  const auto rc = proc::recheck_top(recheck, configs, r, hw, hs, *cm, plan_faults(f, r, recheck));
  throw_if_cancelled();
  const auto band = plan_error_band(r, device, f.calibration == "none");
  mark_ties(configs, band);
  const auto other =
      mc ? std::nullopt : best_other_framework(r, hw, *cm, device, f.calibration == "none");
  const PlanConfig* chosen = nullptr;
  if (!configs.empty()) chosen = &configs.front();
  // Cost and the step's sensitivity to catalog assumptions, for the chosen config.
  const bool costed = cost.any() && chosen && chosen->feasible;
  // --fail-if-none: a script's check that something fits (exit 1, output as usual).
  const bool none_fits = f.fail_if_none && !(chosen && chosen->feasible);
  std::optional<std::vector<UncertaintyRow>> uncertainty;
  if ((f.json || f.explain) && chosen && chosen->feasible)
    uncertainty =
        step_time_uncertainty(r, hw, *chosen, cat.assumptions(hw), [&](const Hardware& h) {
          // The attention implementation as `cm` is built, on the varied hardware.
          Hardware a = h;
          if (attention_dtype == DType::FP32)
            a.flops = proc::resolve_hardware(hs, cat, DType::FP32).flops;
          return proc::make_implementation(hs, cat, a, attention_dtype, proc::kPlanProfileDtype);
        });
  // Packed documents: every layout with the best config's shape, over the sampled packings.
  std::optional<DocumentPlan> docs;
  if (sampling && chosen && chosen->feasible) {
    // Up to 12 rows x 10,000 packings: a bar with ETA on a terminal after
    // two seconds, and Ctrl-C ends it at the next packing (exit 130).
    std::optional<sim::Progress> bar;
    docs = plan_documents(
        r, hw, *cm, *chosen, r.layouts, *sampling, [&bar](std::uint64_t, std::uint64_t total) {
          if (!bar)
            bar.emplace(sim::progress_wanted(false), total, "ringsim plan: packed documents");
          bar->tick();  // the bar clears itself when it goes, after the last packing
        });
  }
  std::string extras;  // appended to --explain
  if (costed) extras += cost_text(*chosen, plan_cost(*chosen, r.gpus, cost));
  // What the plan assumed: --explain's last table and --json's "assumptions".
  const auto assumed =
      f.json || f.explain ? plan_assumptions(r, hw, cat) : std::vector<AssumptionRow>();
  if (uncertainty) extras += uncertainty_text(*chosen, *uncertainty);
  extras += "\n" + assumptions_text(assumed);

  if (f.json) {
    nlohmann::json j;
    j["model"] = r.shape.name;
    j["params"] = total_params(r.shape);
    j["layers"] = r.shape.layers;
    j["context"] = r.context;
    j["gpus"] = r.gpus;
    j["hardware"] = hw.describe();
    j["hbm_bytes"] = hbm;
    j["checkpointing"] = to_string(r.checkpointing);
    j["optimizer"] = "adamw";
    j["loss"] = to_string(r.loss);
    j["precision"] = to_string(r.precision);
    j["fp8_recipe"] = r.precision == Precision::FP8 && r.framework == Framework::Megatron
                          ? nlohmann::json(to_string(r.fp8_recipe))
                          : nlohmann::json(nullptr);
    j["attention_precision"] = to_string(r.attention_dtype);
    j["framework"] = to_string(r.framework);
    j["calibration"] = {
        {"group", r.calibration_key}, {"factor", r.calibration}, {"line", calibration_line(r)}};
    j["memory_check"] = r.memory_check;
    j["error_band"] = band.to_json();
    j["assumptions"] = assumptions_json(assumed);
    j["framework_layouts"] = nlohmann::json::array();
    for (auto l : r.any_layout ? std::vector<Layout>() : framework_layouts(r))
      j["framework_layouts"].push_back(to_string(l));
    j["any_layout"] = r.any_layout;
    j["best_other_framework"] =
        other ? nlohmann::json{{"framework", other->framework},
                               {"label", other->label},
                               {"tokens_per_s_per_gpu", other->tokens_per_s_per_gpu},
                               {"mfu", other->mfu},
                               {"calibrated", other->calibrated},
                               {"error_band", other->band.to_json()}}
              : nlohmann::json(nullptr);
    j["causal"] = r.causal;
    j["global_batch_tokens"] =
        r.global_batch_tokens > 0 ? nlohmann::json(r.global_batch_tokens) : nlohmann::json(nullptr);
    j["engine"] = "analytic";
    j["compute_model"] = cm->name();
    j["configs"] = nlohmann::json::array();
    for (size_t i = 0; i < configs.size(); ++i) {
      auto cj = config_json(configs[i], static_cast<int>(i + 1), hbm);
      if (configs[i].feasible) cj["error_band"] = band.to_json();
      cj["tied"] = configs[i].tied;
      if (cost.any() && configs[i].feasible)
        cj["cost"] = cost_json(plan_cost(configs[i], r.gpus, cost));
      if (i == 0 && uncertainty) cj["uncertainty"] = uncertainty_json(*uncertainty);
      j["configs"].push_back(cj);
    }
    j["recheck"] = recheck_json(rc);
    if (sampling)
      j["documents"] = docs ? documents_json(*docs, *sampling) : nlohmann::json(nullptr);
    if (mc) {
      nlohmann::json by = nlohmann::json::array();
      for (const auto& e : mc->by_config)
        by.push_back({{"label", e.label},
                      {"layout", e.cp == 1 ? "none" : to_string(e.layout)},
                      {"cp", e.cp},
                      {"tp", e.tp},
                      {"pp", e.pp},
                      {"ep", e.ep},
                      {"pp_schedule", e.pp > 1 ? schedule_json_name(e.schedule) : "none"},
                      {"max_context", e.max_context},
                      {"granularity", e.granularity},
                      {"limited_by", e.limited_by}});
      j["max_context"] = {{"tokens", mc->tokens},
                          {"granularity", mc->granularity},
                          {"search_limit", context},
                          {"by_config", by}};
    }
    if (f.explain && chosen) j["explain"] = explain(*chosen, hbm) + extras;
    j["schema_version"] = kJsonSchemaVersion;
    std::cout << j.dump(2) << "\n";
    return none_fits ? 1 : 0;
  }

  std::string out = header(r, hw, hbm, cm->name());
  if (mc) {
    // The config that ranks first at the longest context, and what stops it one step longer.
    const auto& best = configs.front();
    const MaxContextEntry* at = &mc->by_config.front();
    for (const auto& e : mc->by_config)
      if (e.label == best.label()) at = &e;
    out += fmt::format(
        "\nlongest context that fits: {} tokens ({}), best there: {}; {} more tokens do not fit "
        "(largest term: {})\n",
        mc->tokens, human_tokens(static_cast<double>(mc->tokens)), best.label(), at->granularity,
        at->limited_by);
    // The config column as wide as the widest label shown (24 at least).
    std::size_t width = 24;
    const auto rows = std::min<std::size_t>(mc->by_config.size(), static_cast<std::size_t>(top));
    for (std::size_t i = 0; i < rows; ++i)
      width = std::max(width, mc->by_config[i].label.size() + 2);
    out += fmt::format("\n  {:<{}}{:>14}  {}\n", "config", width, "max context",
                       "one step longer: largest term, or the rule");
    for (std::size_t i = 0; i < rows; ++i) {
      const auto& e = mc->by_config[i];
      out += fmt::format("  {:<{}}{:>14}  {}\n", e.label, width, e.max_context, e.limited_by);
    }
    if (mc->by_config.size() > rows)
      out += fmt::format("  ... {} more (--top {} or --json for all)\n",
                         mc->by_config.size() - rows, mc->by_config.size());
    out += fmt::format(
        "\n  (searched in multiples of lcm(1024, 2 cp) tokens up to {}; the ranking below is at {} "
        "tokens)\n",
        context, mc->tokens);
  } else {
    out += fmt::format("  context    {} tokens ({})\n", r.context,
                       human_tokens(static_cast<double>(r.context)));
  }
  out += "  " + calibration_line(r) + "\n";
  out += "  error band " + band.text() + "\n";
  out += framework_text(r, cm->kernel(), other);
  if (!r.memory_check)
    out +=
        "  memory check off: configurations are timed even where the memory model says they "
        "do not fit\n";
  out += table(configs, top);
  out += ties_text(configs, band, top);
  out += larger_device_text(configs, cat, hw.gpu_name);
  if (costed && !f.explain) out += cost_text(*chosen, plan_cost(*chosen, r.gpus, cost));
  if (docs) out += documents_text(*docs, *sampling);
  if (sampling && !docs)
    out += "\npacked documents: no config fits, so no layout was timed under them\n";
  out += recheck_text(rc);
  if (f.explain && chosen) out += explain(*chosen, hbm) + extras;
  std::cout << out;
  return none_fits ? 1 : 0;
}

}  // namespace

Command plan_command() {
  return {
      "plan", [](CLI::App& app, int* code) {
        auto f = std::make_shared<PlanFlags>();
        auto* sub = app.add_subcommand(
            "plan",
            "Capacity planning: which CP degree, layout and block fit, step time, tokens/s, MFU");
        proc::add_model_flags(sub, f->w);
        sub->add_option("--layers", f->layers, "Override the model's depth")
            ->type_name(flag_type::kInt);
        sub->add_option("--vocab", f->vocab, "Override the model's vocabulary size")
            ->type_name(flag_type::kInt);
        sub->add_option("--context", f->context,
                        "Tokens per sequence (K/M suffix: 128K, 1M = 1048576); with --max-context, "
                        "the search limit")
            ->type_name(flag_type::kTokens);
        sub->add_option("--gpus", f->gpus, "Devices in the job")->type_name(flag_type::kInt);
        sub->add_option("--slices", f->slices,
                        "TPU slices the devices split into, data-parallel over the DCN "
                        "(jax-xla; MaxText's dcn_data_parallelism; default 1)")
            ->type_name(flag_type::kInt);
        proc::add_hardware_flags(sub, f->hw);
        sub->add_option("--hbm", f->hbm, "Override HBM bytes per device (K/M/G binary suffix: 95G)")
            ->type_name(flag_type::kBytes);
        sub->add_option("--global-batch-tokens", f->global_batch_tokens,
                        "Tokens per optimizer step, the same for every row (multiple of "
                        "--context; default: the model card's batch, else 4M tokens, in whole "
                        "sequences; 'replica': one sequence per data-parallel replica)")
            ->type_name(flag_type::kTokens);
        sub->add_option("--activation-checkpointing", f->checkpointing, "none|selective|full")
            ->capture_default_str()
            ->type_name(flag_type::kName);
        sub->add_option("--grad-dtype", f->grad_dtype,
                        "Gradients' dtype: megatron's main-gradient buffer (default bf16, as "
                        "NeMo's performance recipes), pytorch-fsdp's reduce dtype (default fp32)")
            ->type_name("bf16|fp32");
        sub->add_option("--fp8-weights", f->fp8_weights,
                        "megatron with --precision fp8: linear weights stored in FP8 (Megatron's "
                        "--fp8-param-gather; default on, as Megatron-Bridge's FP8 recipes)")
            ->type_name("on|off");
        sub->add_option("--fp8-recipe", f->fp8_recipe,
                        "megatron with --precision fp8: Megatron-LM's --fp8-recipe; delayed "
                        "(default: scales from the amax history) or tensorwise (current "
                        "scaling: an amax pass before every cast, as NeMo 25.11's FP8-CS)")
            ->type_name("delayed|tensorwise");
        sub->add_option("--fsdp", f->fsdp,
                        "megatron: on = Megatron FSDP (params, gradients and optimizer state "
                        "sharded over cp x dp, gathered per layer); default off (the "
                        "distributed optimizer)")
            ->type_name("on|off");
        sub->add_option("--norm", f->norm,
                        "pytorch-fsdp: eager RMSNorm (keeps an fp32 copy of its input; the "
                        "default) or fused (a fused kernel, TorchTitan's fused_rmsnorm)")
            ->type_name("eager|fused");
        sub->add_option("--recompute-layers", f->recompute_layers,
                        "With full checkpointing: only N layers per stage and model chunk "
                        "recompute, the rest keep their activations (Megatron's "
                        "--recompute-method block --recompute-num-layers N)")
            ->type_name(flag_type::kInt);
        sub->add_option("--offload-layers", f->offload_layers,
                        "Activations of N layers per stage kept in host memory (Megatron's "
                        "cpu_offloading_num_layers); the copies are not timed")
            ->type_name(flag_type::kInt);
        sub->add_option("--remat-policy", f->remat_policy,
                        "jax-xla: MaxText's remat_policy (full, minimal, minimal_with_context, "
                        "save_dot_with_context_except_mlp, save_dot_except_mlpwi, "
                        "save_dot_except_mlp, save_qkv_proj, save_out_proj, qkv_proj_offloaded, "
                        "minimal_offloaded), or custom:NAME[,NAME...] for remat_policy=custom "
                        "with those tensors on the device (e.g. custom:context); overrides "
                        "--activation-checkpointing")
            ->type_name(flag_type::kName);
        sub->add_option("--optimizer", f->optimizer, "adamw")
            ->capture_default_str()
            ->type_name(flag_type::kName);
        sub->add_option("--precision", f->precision,
                        "bf16 | fp8 (Float8 projections and MLP; the output head stays bf16; with "
                        "--inference, the MLP's weights and GEMMs in FP8, as infer --precision)")
            ->capture_default_str()
            ->type_name(flag_type::kName);
        sub->add_option("--attention-precision", f->attention_precision,
                        "bf16 | fp32 (attention at the device's fp32 peak)")
            ->capture_default_str()
            ->type_name(flag_type::kName);
        sub->add_option("--framework", f->framework,
                        "pytorch-fsdp | megatron | jax-xla: the framework's memory and time rules, "
                        "and the layouts it implements | any: every layout (the device's usual "
                        "framework's rules)")
            ->capture_default_str()
            ->type_name(flag_type::kName);
        sub->add_option(
               "--loss", f->loss,
               "eager (fp32 logits of every token) | chunked (4096-token chunks) | "
               "compiled (torch.compile's fused cross-entropy: bf16 logits and gradient) | "
               "fused (a fused cross-entropy kernel, flash-attn's, as LLM Foundry runs it: "
               "bf16 logits and gradient)")
            ->capture_default_str()
            ->type_name(flag_type::kName);
        sub->add_option("--cp", f->cp,
                        "Fix the context-parallel degree (default: search powers of two)")
            ->type_name(flag_type::kInt);
        sub->add_option("--ep", f->ep,
                        "Mixture-of-experts models: fix the expert-parallel degree (default: "
                        "search powers of two dividing the experts and cp x dp)")
            ->type_name(flag_type::kInt);
        sub->add_option("--etp", f->etp,
                        "Mixture-of-experts models: the experts' tensor-parallel degree "
                        "(default: --tp, Megatron-Core's default; 1 keeps experts whole and "
                        "lets an EP group fold over the TP ranks)")
            ->type_name(flag_type::kInt);
        sub->add_option("--capacity-factor", f->capacity_factor,
                        "Mixture-of-experts models: each expert's capacity over its even share "
                        "(tokens over it dropped); default: dropless")
            ->type_name(flag_type::kFloat);
        sub->add_option("--ep-dispatcher", f->ep_dispatcher,
                        "Mixture-of-experts models: alltoall (Megatron-Core's default: every "
                        "routed copy in one all-to-all) or flex (DeepEP/HybridEP: a token "
                        "crosses to each remote node once, then fans out over NVLink)")
            ->type_name(flag_type::kName);
        sub->add_option("--ep-overlap", f->ep_overlap,
                        "Mixture-of-experts models: on hides one micro-batch's dispatch and "
                        "combine behind another's compute (Megatron-Core's "
                        "overlap_moe_expert_parallel_comm, DeepSeek-V3's DualPipe); default off")
            ->type_name(flag_type::kName);
        sub->add_option("--routing-seed", f->routing_seed,
                        "Mixture-of-experts models: the seed of the sampled routing that sets "
                        "the slowest EP rank's load (default 1)")
            ->type_name(flag_type::kInt);
        sub->add_option("--layout", f->layout,
                        "Fix the layout: ring|striped|zigzag|ulysses|allgather|hybrid, or search "
                        "a comma list of them (ring,zigzag)")
            ->type_name(flag_type::kName);
        sub->add_option("--tp", f->tp,
                        "Tensor-parallel degree, or auto: powers of two within a node that "
                        "divide the KV heads (the default; --tp 1 keeps TP off)")
            ->capture_default_str()
            ->type_name(flag_type::kIntOrAuto);
        sub->add_option("--pp", f->pp,
                        "Pipeline stages, or auto: powers of two keeping a layer per stage (the "
                        "default; --pp 1 keeps PP off); placement tp, cp, pp, dp, innermost first")
            ->capture_default_str()
            ->type_name(flag_type::kIntOrAuto);
        sub->add_option("--pp-virtual", f->pp_virtual,
                        "Virtual stages per device: 1 = 1F1B, V > 1 = interleaved 1F1B")
            ->capture_default_str()
            ->type_name(flag_type::kInt);
        sub->add_option("--pp-schedule", f->pp_schedule,
                        "Pipeline schedules to search, a comma list of 1f1b, interleaved (with "
                        "--pp-virtual), zb-h1, zb-v, dualpipe; auto: what the framework ships "
                        "(docs/plan.md, 'Pipeline schedules')")
            ->capture_default_str()
            ->type_name("auto|SCHEDULE[,SCHEDULE...]");
        sub->add_option("--dp-replicate", f->dp_replicate,
                        "HSDP: split the data-parallel ranks into N replica groups, the state "
                        "sharded inside each and the gradients all-reduced across them once per "
                        "step (FSDP2's data_parallel_replicate_degree); auto searches powers of "
                        "two; 1 (default) shards over all of them")
            ->capture_default_str()
            ->type_name(flag_type::kIntOrAuto);
        sub->add_option("--pp-layout", f->pp_layout,
                        "How layers split over stages: balanced (Llama 3: edge stages lighter), "
                        "even (Megatron's default), embedding-loss (the embedding and the loss "
                        "count as a layer each: Megatron's --account-for-embedding/loss-in-"
                        "pipeline-split), auto (balanced where it splits into whole virtual "
                        "chunks, else embedding-loss, else even)")
            ->capture_default_str()
            ->type_name("auto|balanced|even|embedding-loss");
        sub->add_option("--pp-first-stage-layers", f->pp_first_layers,
                        "Layers on the first stage, the rest even over the middle stages "
                        "(Megatron's --decoder-first-pipeline-num-layers); with "
                        "--pp-last-stage-layers")
            ->type_name(flag_type::kInt);
        sub->add_option("--pp-last-stage-layers", f->pp_last_layers,
                        "Layers on the last stage (Megatron's --decoder-last-pipeline-num-layers)")
            ->type_name(flag_type::kInt);
        sub->add_option("--microbatches", f->microbatches,
                        "Microbatches per data-parallel replica per step (default: sequences per "
                        "replica; with --pp > 1 and no --global-batch-tokens, pp)")
            ->type_name(flag_type::kInt);
        sub->add_option("--compile", f->compile,
                        "pytorch-fsdp: torch.compile fuses the memory-bound ops (docs/plan.md, "
                        "'Frameworks as they execute')")
            ->capture_default_str()
            ->type_name(flag_type::kOnOff);
        sub->add_option("--tp-overlap", f->tp_overlap,
                        "TP collectives overlapped with the GEMMs (async TP, TE userbuffers; "
                        "default: the framework's, on for megatron (off with --sequence-parallel "
                        "off), off for pytorch-fsdp and jax-xla)")
            ->type_name(flag_type::kOnOff);
        sub->add_option("--sequence-parallel", f->sequence_parallel,
                        "megatron: on = the TP group shards the norms, residual adds and their "
                        "activations over the sequence (all-gathers + reduce-scatters; default); "
                        "off = every TP rank runs and keeps them whole and the group all-reduces "
                        "(Megatron-LM before sequence parallelism)")
            ->type_name(flag_type::kOnOff);
        sub->add_option("--attention-dropout", f->attention_dropout,
                        "Dropout probability on the attention probabilities (default 0, as "
                        "Llama-style models train; Megatron-LM's default and GPT-3 configs 0.1): "
                        "one more memory-bound op where the kernel writes the scores to HBM "
                        "(--kernel unfused); a fused kernel draws it inside")
            ->type_name(flag_type::kFloat);
        sub->add_option("--dp-overlap", f->dp_overlap,
                        "megatron: the distributed optimizer's once-per-step gradient "
                        "reduce-scatter and parameter all-gather hidden behind the last and "
                        "first microbatch (--overlap-grad-reduce, --overlap-param-gather; "
                        "default on), or exposed after the backward and before the forward "
                        "(off: Megatron-LM before those flags)")
            ->type_name(flag_type::kOnOff);
        sub->add_option(
               "--micro-batch", f->micro_batch,
               "Sequences per data-parallel rank per micro-step (TorchTitan's local batch; "
               "default: searched)")
            ->type_name(flag_type::kInt);
        sub->add_option("--memory-check", f->memory_check,
                        "off: time configurations the memory model says do not fit (the "
                        "validation of runs that did fit; docs/validation.md)")
            ->capture_default_str()
            ->type_name(flag_type::kOnOff);
        sub->add_option("--calibration", f->calibration,
                        "default: the framework x device-family factor fitted to published runs "
                        "(models/data/calibration.json, docs/validation.md) | none: first "
                        "principles | FILE: your own factors (`ringsim calibrate --runs`, "
                        "docs/own-cluster.md) over the project's")
            ->capture_default_str()
            ->type_name(flag_type::kName);
        sub->add_flag("--causal,!--no-causal", f->causal, "Causal mask (default) or full attention")
            ->option_text(flag_type::kCausalDefault);
        sub->add_flag("--max-context", f->max_context, "Search for the longest context that fits");
        sub->add_flag("--fail-if-none", f->fail_if_none,
                      "Exit 1 when no configuration fits (and, with --inference, meets "
                      "--ttft-target); the output is printed as usual");
        sub->add_flag("--explain", f->explain,
                      "Itemised memory and time of the best config (fix one with --cp/--layout)");
        sub->add_option("--top", f->top, "Feasible rows to print")
            ->capture_default_str()
            ->type_name(flag_type::kInt);
        sub->add_option(
               "--recheck", f->recheck,
               "Re-run the top N configs' attention with the SimGrid engine (child processes)")
            ->capture_default_str()
            ->type_name(flag_type::kInt);
        sub->add_option("--documents", f->documents,
                        "Packed documents (as run's --documents): every layout and pack mode "
                        "with the best config's shape, timed over --samples packings")
            ->type_name(flag_type::kDocuments);
        sub->add_option("--samples", f->samples,
                        "Packings of --documents to draw, with seeds --seed .. --seed + N - 1")
            ->capture_default_str()
            ->type_name(flag_type::kInt);
        sub->add_option("--seed", f->seed,
                        "Seed of the first packing of --documents, and of --jitter")
            ->capture_default_str()
            ->type_name(flag_type::kInt);
        sub->add_option("--straggler", f->stragglers,
                        "GPU:FACTOR, with --recheck: that GPU of the job computes FACTOR x "
                        "slower, in the re-check's ring and for the whole step (repeatable)")
            ->type_name("GPU:FACTOR");
        sub->add_option("--degrade", f->degrades,
                        "LINK:FACTOR, with --recheck: a link of the re-check's ring FACTOR x "
                        "slower (run's --degrade; repeatable)")
            ->type_name("LINK:FACTOR");
        sub->add_option("--jitter", f->jitter,
                        "SIGMA, with --recheck: lognormal noise (mean 1) on every compute of the "
                        "re-check's ring (seeded by --seed)")
            ->type_name("SIGMA");
        sub->add_flag("--json", f->json, "Print one JSON object instead of the table");
        sub->add_flag("--inference", f->inference,
                      "Plan long-context inference instead: TP x CP splits ranked by time to "
                      "first token, then cost (docs/inference.md)");
        sub->add_option("--ttft-target", f->ttft_target,
                        "--inference: seconds the prefill may take")
            ->type_name(flag_type::kSeconds);
        sub->add_option("--cached", f->cached,
                        "--inference: tokens of the context already in the KV cache")
            ->type_name(flag_type::kTokens);
        sub->add_option("--batch", f->batch, "--inference: sequences decoded together")
            ->type_name(flag_type::kInt);
        sub->add_option("--decode-tokens", f->decode_tokens,
                        "--inference: tokens generated after the prefill")
            ->type_name(flag_type::kTokens);
        sub->add_option("--variant", f->variant, "--inference: auto|pass-kv|pass-q")
            ->type_name(flag_type::kName);
        sub->add_option("--price-per-gpu-hour", f->price,
                        "Price of one GPU-hour: training cost per step, per billion tokens and per "
                        "run; with --inference, the cost column")
            ->type_name(flag_type::kPrice);
        sub->add_option(
               "--train-tokens", f->train_tokens,
               "Tokens of the whole training run, decimal SI as runs are quoted (15T = 15e12; "
               "K/M/G or B/T = 1e3/1e6/1e9/1e12): steps, hours, GPU-hours and, with a price, "
               "its cost")
            ->type_name(flag_type::kDecimalTokens);
        sub->callback([f, code, sub] {
          for (const auto* o : sub->get_options())
            if (o->count() > 0 && !o->get_lnames().empty())
              f->given.push_back(o->get_lnames()[0] == "causal" && !f->causal
                                     ? "--no-causal"
                                     : "--" + o->get_lnames()[0]);
          *code = run(*f);
        });
        return sub;
      }};
}

}  // namespace ringsim::cli
