#include "models/plan/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "models/analytic/analytic.hpp"
#include "models/core/cancel.hpp"
#include "models/core/errors.hpp"
#include "models/core/profile.hpp"
#include "models/plan/execution.hpp"
#include "models/plan/moe.hpp"

namespace ringsim {

std::string PlanConfig::label() const {
  std::string s = cp == 1 ? "no cp" : fmt::format("{} cp {}", to_string(layout), cp);
  if (layout == Layout::Hybrid && cp > 1)
    s += fmt::format(" (u{}xr{})", ulysses_degree, cp / std::max(1, ulysses_degree));
  if (tp > 1) s += fmt::format(" tp {}", tp);
  if (ep > 1) s += fmt::format(" ep {}", ep);
  if (etp > 0 && etp != tp) s += fmt::format(" etp {}", etp);
  if (dp_replicate > 1)
    s += dp > 0 && dp % dp_replicate == 0
             ? fmt::format(" hsdp {}x{}", dp_replicate, dp / dp_replicate)
             : fmt::format(" hsdp {}", dp_replicate);
  if (pp > 1) s += fmt::format(" pp {}", pp);
  if (pp > 1 && pp_virtual > 1) s += fmt::format(" v{}", pp_virtual);
  if (pp > 1 && pp_virtual <= 1 && pp_schedule != PipelineSchedule::OneFOneB)
    s += " " + to_string(pp_schedule);
  return s;
}

Workload attention_workload(const PlanRequest& r, const PlanConfig& c) {
  return attention_workload(r, c.layout, c.cp, c.tp, c.ulysses_degree);
}

namespace {

// Expert parallelism (moe.hpp): the EP x ETP groups fold over the
// tp x cp x dp ranks (Megatron-Core's MoE parallel folding) and split the
// experts evenly; the experts' width splits over etp (tp by default).
std::string moe_rule(const PlanRequest& r, std::int64_t cp_dp, std::int64_t tp) {
  const auto& s = r.shape;
  if (!is_moe(s)) return r.ep > 1 ? "--ep: the model has no experts (a dense model)" : "";
  const auto etp = expert_tp(r, tp);
  if (s.experts % r.ep != 0)
    return fmt::format("ep {} does not divide the {} experts", r.ep, s.experts);
  if ((tp * cp_dp) % (r.ep * etp) != 0)
    return fmt::format(
        "ep {} x etp {} does not divide tp x cp x dp = {} (the expert groups fold over them)", r.ep,
        etp, tp * cp_dp);
  if (s.expert_ffn % etp != 0)
    return fmt::format("etp {} must divide the experts' width ({})", etp, s.expert_ffn);
  return {};
}

// A shape rule that rejects the config before any memory or time; empty if it passes.
std::string shape_rule(const PlanRequest& r, const Hardware& hw, Layout layout, std::int64_t cp,
                       std::int64_t tp, int* ulysses, std::int64_t pp = 1) {
  const auto& s = r.shape;
  if (tp < 1 || r.gpus % tp != 0)
    return fmt::format("tp {} does not divide {} devices", tp, r.gpus);
  if (s.heads % tp || s.kv_heads % tp || s.ffn % tp)
    return fmt::format("tp {} must divide the heads ({}), KV heads ({}) and FFN ({})", tp, s.heads,
                       s.kv_heads, s.ffn);
  if ((r.gpus / tp) % cp != 0)
    return fmt::format("cp {} x tp {} does not divide {} devices", cp, tp, r.gpus);
  if (r.context % cp != 0)
    return fmt::format("context {} is not divisible by cp {}", r.context, cp);
  const auto block = r.context / cp;
  const auto kvh = s.kv_heads / tp;
  if (cp > 1) {
    switch (layout) {
      case Layout::Zigzag:
      case Layout::Allgather:
        if (block % 2)
          return fmt::format("{} needs an even block (context / cp), got {}", to_string(layout),
                             block);
        break;
      case Layout::Ulysses:
        if (kvh % cp)
          return fmt::format(
              "ulysses degree {} must divide the {} KV heads per tensor-parallel rank", cp, kvh);
        break;
      case Layout::Hybrid: {
        const auto g = group_hardware(hw, tp);
        *ulysses = auto_ulysses_degree(cp, static_cast<int>(kvh), g.gpus_per_node);
        if (*ulysses <= 1 || *ulysses >= cp)
          return fmt::format(
              "hybrid's Ulysses degree would be {} (the same as {}); it needs 1 < U < cp", *ulysses,
              *ulysses <= 1 ? "zigzag" : "ulysses");
        if ((block * *ulysses) % 2) return "hybrid needs an even group block";
        break;
      }
      default:
        break;
    }
  }
  if (pp > 1 && (r.gpus / (tp * cp)) % pp != 0)
    return fmt::format("pp {} x cp {} x tp {} does not divide {} devices", pp, cp, tp, r.gpus);
  if (pp > s.layers)
    return fmt::format("pp {} leaves a stage without a layer (the model has {})", pp, s.layers);
  const auto dp = r.gpus / (tp * cp * pp);
  if (r.dp_replicate > 1 && (dp / r.slices) % r.dp_replicate != 0)
    return fmt::format("--dp-replicate {} does not divide dp {}{}", r.dp_replicate, dp / r.slices,
                       r.slices > 1 ? " per slice" : "");
  if (dp % r.slices != 0)
    return fmt::format("dp {} does not split over {} slices (cp x tp x pp stay inside a slice)", dp,
                       r.slices);
  const auto seqs = sequences_per_step(r, dp, pp);
  if (seqs % dp != 0)
    return fmt::format(
        "a global batch of {} sequences does not split over {} data-parallel replicas", seqs, dp);
  return moe_rule(r, cp * dp, tp);
}

// The layers of each device under the pipeline's schedule: the split for
// its chunks (stage_split), and under ZB-V, which runs the head on device 0
// (schedule.hpp), the split's light edge stage, made light for the head,
// moved there. The evaluation and the longest-context search share it.
StageSplit schedule_stage_split(const PlanRequest& r, const PipelineChoice& pc) {
  auto split = stage_split(r, pc.pp, schedule_split_groups(pc.effective(), pc.virtual_stages));
  if (pc.effective() == PipelineSchedule::ZbV)
    std::reverse(split.layers.begin(), split.layers.end());
  return split;
}

// One change of the request that would make `c` fit: the flag, and the
// request and shape with it applied.
struct FitChange {
  std::string flag;
  PlanRequest r;
  std::int64_t cp, pp;
};

std::vector<FitChange> fit_changes(const PlanRequest& r, const PlanConfig& c) {
  std::vector<FitChange> out;
  auto with = [&](std::string flag, auto&& edit, std::int64_t cp, std::int64_t pp) {
    FitChange f{std::move(flag), r, cp, pp};
    edit(f.r);
    out.push_back(std::move(f));
  };
  if (r.checkpointing != Checkpointing::Full || r.recompute_layers > 0)
    with(
        "--activation-checkpointing full",
        [](PlanRequest& q) {
          q.checkpointing = Checkpointing::Full;
          q.recompute_layers = 0;
          q.remat_policy.clear();
        },
        c.cp, c.pp);
  if (r.loss == LossImpl::Eager && framework_profile(r).block_tokens == 0)
    with(
        "--loss chunked", [](PlanRequest& q) { q.loss = LossImpl::Chunked; }, c.cp, c.pp);
  with(
      fmt::format("--cp {}", 2 * c.cp), [](PlanRequest&) {}, 2 * c.cp, c.pp);
  if (2 * c.pp <= r.shape.layers)
    with(
        fmt::format("--pp {}", 2 * c.pp), [](PlanRequest&) {}, c.cp, 2 * c.pp);
  if (r.precision == Precision::FP8 && framework_profile(r).fp8_weights_supported &&
      !fp8_weights(r))
    with(
        "--fp8-weights on", [](PlanRequest& q) { q.fp8_weights = 1; }, c.cp, c.pp);
  if (r.precision == Precision::BF16 && r.fp8_flops > 0)
    with(
        "--precision fp8", [](PlanRequest& q) { q.precision = Precision::FP8; }, c.cp, c.pp);
  return out;
}

}  // namespace

std::string fit_hint(const PlanRequest& r, const Hardware& hw, const Implementation& cm,
                     const PlanConfig& c) {
  std::vector<std::string> fits;
  for (auto& f : fit_changes(r, c)) {
    f.r.micro_batch = c.micro_batch;
    auto alt = evaluate(f.r, hw, cm, c.layout, f.cp, c.tp, c.micro_batch, std::nullopt, true,
                        {f.pp, c.pp_virtual, c.pp_schedule});
    if (alt.evaluated && alt.feasible)
      fits.push_back(fmt::format("{} ({:.1f} GiB{})", f.flag, alt.memory.total / 1073741824.0,
                                 alt.memory_verdict == "tight" ? ", tight" : ""));
  }
  if (fits.empty()) return {};
  std::string out = "fits with ";
  for (size_t i = 0; i < fits.size(); ++i) out += (i ? ", or " : "") + fits[i];
  return out;
}

namespace {

Infeasibility broken(std::string rule) {
  Infeasibility i;
  i.kind = Infeasibility::Kind::Rule;
  i.rule = std::move(rule);
  return i;
}

}  // namespace

PlanConfig evaluate(const PlanRequest& r, const Hardware& hw, const Implementation& cm,
                    Layout layout, std::int64_t cp, std::int64_t tp, std::int64_t micro_batch,
                    const std::optional<AttentionOverride>& attention, bool memory_only,
                    const PipelineChoice& pipeline) {
  // The framework's attention module decides what the ring passes, whatever
  // kernel it calls (execution.hpp, ring_kv_expanded); on a TPU the kernel's
  // own rule stands.
  if (const bool expanded = ring_kv_expanded(r); !r.tpu && cm.expands_kv() != expanded) {
    Implementation framework_cm = cm;
    framework_cm.expands_kv_ = expanded;
    return evaluate(r, hw, framework_cm, layout, cp, tp, micro_batch, attention, memory_only,
                    pipeline);
  }
  // (fit_hint re-enters with memory_only: its alternatives never hint again.)
  PlanConfig c;
  c.layout = cp == 1 ? Layout::Ring : layout;
  c.cp = cp;
  c.tp = tp;
  c.ep = r.ep;
  c.etp = r.etp;
  c.dp_replicate = r.dp_replicate;
  c.micro_batch = micro_batch;
  c.pp = pipeline.pp;
  c.pp_virtual = pipeline.pp > 1 ? pipeline.virtual_stages : 1;
  c.pp_schedule = pipeline.pp > 1 ? pipeline.effective() : PipelineSchedule::OneFOneB;
  // Set before the shape rule, so that a row it refuses shows what its shape
  // defines and 0 (null in JSON) where the shape does not divide.
  const auto ranks = tp * cp * c.pp;
  c.dp = ranks > 0 && r.gpus % ranks == 0 ? r.gpus / ranks : 0;
  c.block = cp > 0 && r.context % cp == 0 ? r.context / cp : 0;
  int ulysses = 0;
  if (auto rule = shape_rule(r, hw, c.layout, cp, tp, &ulysses, c.pp); !rule.empty()) {
    c.ulysses_degree = ulysses;
    c.grad_accum = 0;
    c.why = broken(std::move(rule));
    return c;
  }
  c.ulysses_degree = ulysses;  // the rule passed: ranks divide the GPUs, cp the context
  const auto seqs = sequences_per_step(r, c.dp, c.pp);
  const auto per_replica = seqs / c.dp;
  if (r.microbatches > 0 && per_replica % r.microbatches != 0) {
    c.why = broken(fmt::format("{} microbatches do not split the {} sequences per replica",
                               r.microbatches, per_replica));
    return c;
  }
  if (per_replica % micro_batch != 0) {
    c.why = broken(fmt::format("micro-batch {} does not divide the {} sequences per replica",
                               micro_batch, per_replica));
    return c;
  }
  c.grad_accum = per_replica / micro_batch;
  const PipelineChoice pc{c.pp, c.pp_virtual, c.pp_schedule};
  if (c.pp > 1) {
    const auto split = schedule_stage_split(r, pc);
    c.stage_layers = split.layers;
    c.pp_layout = split.text();
    if (auto rule = pipeline_rule(r, pc, split, c.grad_accum); !rule.empty()) {
      c.why = broken(std::move(rule));
      return c;
    }
  }
  try {
    validate(attention_workload(r, c), group_hardware(hw, tp));
  } catch (const InputError& e) {
    c.why = broken(e.what());
    return c;
  }
  c.evaluated = true;
  c.memory = c.pp > 1 ? pipeline_memory(r, hw, c.layout, cp, tp, micro_batch, c.stage_layers, pc,
                                        c.grad_accum)
                      : training_memory(r, hw, c.layout, cp, tp, micro_batch);
  const double hbm = usable_hbm_bytes(r, hw);  // the framework's share (framework.hpp)
  c.overflow_bytes = c.memory.total - hbm;
  const bool tight = PlanConstants::tight(c.memory.total, hbm);
  c.memory_verdict = c.overflow_bytes <= 0 ? "fits" : tight ? "tight" : "over";
  if (c.overflow_bytes > 0 && !tight && r.memory_check) {
    const auto& big = c.memory.largest();
    c.why.kind = Infeasibility::Kind::Memory;
    c.why.needed_bytes = c.memory.total;
    c.why.hbm_bytes = hbm;
    c.why.term = big.name;
    c.why.term_bytes = big.bytes;
    c.why.term_phase = big.phase;
    c.why.stage = c.memory.stage;
    if (!memory_only) c.why.hint = fit_hint(r, hw, cm, c);
  } else {
    c.feasible = true;
  }
  if (memory_only || !c.feasible) return c;

  try {
    c.time = step_time(r, hw, cm,
                       {c.layout, cp, tp, c.block, micro_batch, c.grad_accum, c.ulysses_degree,
                        c.pp, c.pp_virtual, c.stage_layers, c.pp_schedule},
                       attention);
  } catch (const InputError& e) {
    // A measured profile does not cover this block: no time, said why.
    c.feasible = false;
    c.why.kind = Infeasibility::Kind::NoTime;
    c.why.rule = e.what();
    return c;
  }
  const auto& s = r.shape;
  const auto& T = c.time;
  const double G = static_cast<double>(r.gpus);
  c.tokens_per_step =
      static_cast<double>(sequences_per_step(r, c.dp, c.pp)) * static_cast<double>(r.context);
  c.tokens_per_s_per_gpu = c.tokens_per_step / (T.step_time_s * G);
  c.model_flops_per_step = c.tokens_per_step * model_flops_per_token(s, r.context, r.causal);
  c.mfu = c.model_flops_per_step / (T.step_time_s * hw.flops * G);
  c.mfu_palm = c.tokens_per_step * model_flops_per_token(s, r.context, false) /
               (T.step_time_s * hw.flops * G);
  return c;
}

namespace {

std::vector<std::int64_t> auto_cp(std::int64_t gpus_per_tp) {
  std::vector<std::int64_t> out;
  for (std::int64_t p = 1; p <= std::min(gpus_per_tp, kMaxAutoCp); p *= 2)
    if (gpus_per_tp % p == 0) out.push_back(p);
  return out;
}

void check_request(const PlanRequest& r) {
  if (r.context < 1) throw InputError("--context: must be at least 1 token");
  if (r.gpus < 1) throw InputError("--gpus: must be at least 1");
  if (r.global_batch_tokens > 0 && r.global_batch_tokens % r.context != 0)
    throw InputError(
        fmt::format("--global-batch-tokens: must be a multiple of --context ({}), got {}",
                    r.context, r.global_batch_tokens));
  for (auto cp : r.cp_degrees)
    if (cp < 1 || r.gpus % cp != 0)
      throw InputError(fmt::format("--cp: must divide --gpus ({}), got {}", r.gpus, cp));
  for (auto tp : r.tp_degrees)
    if (tp < 1 || r.gpus % tp != 0)
      throw InputError(fmt::format("--tp: must divide --gpus ({}), got {}", r.gpus, tp));
  for (auto pp : r.pp_degrees) {
    if (pp < 1 || r.gpus % pp != 0)
      throw InputError(fmt::format("--pp: must divide --gpus ({}), got {}", r.gpus, pp));
    if (pp > r.shape.layers)
      throw InputError(fmt::format("--pp: at most the model's {} layers (one per stage), got {}",
                                   r.shape.layers, pp));
  }
  if (r.pp_virtual < 1)
    throw InputError(fmt::format("--pp-virtual: must be at least 1, got {}", r.pp_virtual));
  if (r.pp_virtual > 1 && !r.pp_degrees.empty() &&
      std::all_of(r.pp_degrees.begin(), r.pp_degrees.end(), [](auto p) { return p == 1; }))
    throw InputError("--pp-virtual: interleaving needs --pp above 1 (or --pp auto)");
  if (!r.pp_schedules.empty() && !r.pp_degrees.empty() &&
      std::all_of(r.pp_degrees.begin(), r.pp_degrees.end(), [](auto p) { return p == 1; }))
    throw InputError(
        "--pp-schedule: a schedule orders a pipeline's stages; it needs --pp above 1 (or --pp "
        "auto)");
  // Interleaved 1F1B with the microbatches fixed: Megatron's rule, m % p == 0.
  if (r.pp_virtual > 1 && r.microbatches > 0)
    for (auto pp : r.pp_degrees)
      if (pp > 1 && r.microbatches % pp != 0)
        throw InputError(fmt::format(
            "--pp-virtual: interleaved 1F1B needs --microbatches ({}) to be a multiple of --pp "
            "({})",
            r.microbatches, pp));
}

// Stages searched: the request's, or powers of two keeping a layer per stage
// and dividing the devices left by tp x cp.
std::vector<std::int64_t> pp_degrees(const PlanRequest& r, std::int64_t tp, std::int64_t cp) {
  if (!r.pp_degrees.empty()) return r.pp_degrees;
  std::vector<std::int64_t> out;
  const auto left = r.gpus / (tp * cp);
  for (std::int64_t p = 1; p <= r.shape.layers && p <= left; p *= 2)
    if (left % p == 0) out.push_back(p);
  return out;
}

struct Candidate {
  Layout layout;
  std::int64_t cp, tp, pp = 1;
};

std::vector<Candidate> candidates(const PlanRequest& r, const Hardware& hw, bool* any) {
  std::vector<Candidate> out;
  const auto& all = layout_names();
  for (int tp : r.tp_degrees) {
    const auto cps = r.cp_degrees.empty() ? auto_cp(r.gpus / tp) : r.cp_degrees;
    for (auto cp : cps) {
      if (cp == 1) {
        for (auto pp : pp_degrees(r, tp, 1)) out.push_back({Layout::Ring, 1, tp, pp});
        continue;
      }
      for (size_t i = 0; i < all.size(); ++i) {
        const auto l = static_cast<Layout>(i);
        if (!r.layouts.empty() &&
            std::find(r.layouts.begin(), r.layouts.end(), l) == r.layouts.end())
          continue;
        // Only what the framework implements (framework.hpp), unless --framework any.
        if (!r.any_layout && !framework_implements(r, l)) continue;
        // Automatic search: hybrid only where it differs from zigzag and ulysses.
        if (r.layouts.empty() && l == Layout::Hybrid) {
          int u = 0;
          if (!shape_rule(r, hw, l, cp, tp, &u).empty() && (u <= 1 || u >= cp)) continue;
        }
        for (auto pp : pp_degrees(r, tp, cp)) out.push_back({l, cp, tp, pp});
      }
    }
  }
  *any = !out.empty();
  return out;
}

// The expert-parallel degrees and HSDP replica groups searched for one shape:
// --dp-replicate auto tries every power of two dividing dp per slice.
std::vector<std::pair<std::int64_t, std::int64_t>> ep_and_replicas(const PlanRequest& r,
                                                                   const Candidate& cd,
                                                                   std::int64_t dp) {
  std::vector<std::int64_t> reps{r.dp_replicate};
  if (r.dp_replicate == 0) {
    reps = {1};
    const auto per_slice = dp / r.slices;
    for (std::int64_t k = 2; k <= per_slice; k *= 2)
      if (per_slice % k == 0) reps.push_back(k);
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (auto ep : ep_degrees(r, cd.tp * cd.cp * dp / expert_tp(r, cd.tp)))
    for (auto k : reps) out.emplace_back(ep, k);
  return out;
}

// The schedules a shape is tried under: those searched with a pipeline,
// 1F1B without one.
std::vector<PipelineSchedule> shape_schedules(const PlanRequest& r, const Candidate& cd) {
  return cd.pp > 1 ? searched_schedules(r)
                   : std::vector<PipelineSchedule>{PipelineSchedule::OneFOneB};
}

// The ranking's order (search's sort) for the choices inside one shape (its
// micro-batch, its schedule): what surely fits before what is tight (within
// the memory band), then the faster.
bool better(const PlanConfig& c, const PlanConfig& best) {
  if (!c.feasible) return false;
  if (!best.feasible) return true;
  const bool ct = c.memory_verdict == "tight", bt = best.memory_verdict == "tight";
  if (ct != bt) return bt;
  return c.tokens_per_s_per_gpu > best.tokens_per_s_per_gpu;
}

// One shape under one schedule at its best micro-batch.
PlanConfig best_micro_batch(const PlanRequest& q, const Hardware& hw, const Implementation& cm,
                            const Candidate& cd, const std::vector<std::int64_t>& mbs,
                            PipelineSchedule sched) {
  std::optional<PlanConfig> best;
  for (auto m : mbs) {
    auto c = evaluate(q, hw, cm, cd.layout, cd.cp, cd.tp, m, std::nullopt, false,
                      {cd.pp, q.pp_virtual, sched});
    if (!best || better(c, *best)) best = std::move(c);
    if (!best->feasible && !best->evaluated) break;  // a shape rule: every micro-batch fails
  }
  return std::move(*best);
}

}  // namespace

std::vector<PlanConfig> search(const PlanRequest& r, const Hardware& hw, const Implementation& cm) {
  check_request(r);
  // One request, hardware and implementation: attention times are shared
  // by every configuration of the same shape (step_time.hpp).
  const AttentionMemoScope memo;
  bool any = false;
  const auto cands = candidates(r, hw, &any);
  std::vector<PlanConfig> out;
  for (const auto& cd : cands) {
    throw_if_cancelled();  // a plan whose later parts run long stops here too (cli/stop_scope.hpp)
    const auto ranks = cd.tp * cd.cp * cd.pp;
    const auto dp = r.gpus % ranks == 0 ? r.gpus / ranks : 1;
    const auto seqs = sequences_per_step(r, dp, cd.pp);
    const auto per_replica = seqs % dp == 0 ? seqs / dp : 1;
    // Micro-batch: powers of two dividing the sequences per replica, and all
    // of them. Fixed when the microbatch count is: --microbatches M, or a
    // pipeline's default of one sequence per microbatch (M = sequences per
    // replica).
    std::vector<std::int64_t> mbs;
    if (r.micro_batch > 0) {
      mbs.push_back(r.micro_batch);  // --micro-batch: fixed
    } else if (r.microbatches > 0) {
      mbs.push_back(per_replica % r.microbatches == 0 ? per_replica / r.microbatches : 1);
    } else if (cd.pp > 1) {
      mbs.push_back(1);
    } else {
      for (std::int64_t m = 1; m <= per_replica; m *= 2)
        if (per_replica % m == 0) mbs.push_back(m);
      if (mbs.back() != per_replica) mbs.push_back(per_replica);
    }
    const auto schedules = shape_schedules(r, cd);
    for (auto [ep, rep] : ep_and_replicas(r, cd, dp)) {
      PlanRequest q = r;
      q.ep = ep;
      q.dp_replicate = rep;
      std::optional<PlanConfig> best;
      std::vector<PlanConfig::ScheduleTry> tried;
      for (auto sched : schedules) {
        auto c = best_micro_batch(q, hw, cm, cd, mbs, sched);
        if (cd.pp > 1)
          tried.push_back({sched, c.feasible, c.tokens_per_s_per_gpu, c.time.pp_bubble_s,
                           c.memory.total, c.reason()});
        if (!best || better(c, *best)) best = std::move(c);
      }
      best->schedules_tried = std::move(tried);
      out.push_back(std::move(*best));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const PlanConfig& a, const PlanConfig& b) {
    if (a.feasible != b.feasible) return a.feasible;
    if (a.feasible) {
      // What surely fits ranks above what is tight (within the memory band).
      const bool at = a.memory_verdict == "tight", bt = b.memory_verdict == "tight";
      if (at != bt) return bt;
      if (a.tokens_per_s_per_gpu != b.tokens_per_s_per_gpu)
        return a.tokens_per_s_per_gpu > b.tokens_per_s_per_gpu;
      return a.memory.total < b.memory.total;
    }
    if (a.evaluated != b.evaluated) return a.evaluated;
    return a.overflow_bytes < b.overflow_bytes;
  });
  return out;
}

namespace {
// Microbatches per replica in a step of the longest-context search (the
// global batch is one sequence per replica, or the pipeline's fill).
std::int64_t max_context_microbatches(const PlanRequest& r, const Candidate& cd) {
  const auto dp = r.gpus / (cd.tp * cd.cp * cd.pp);
  return sequences_per_step(r, dp, cd.pp) / dp;
}

// Memory of one sequence per microbatch: the worst stage's under a pipeline
// run with `sched`.
PlanMemory memory_of(const PlanRequest& r, const Hardware& hw, const Candidate& cd,
                     PipelineSchedule sched) {
  if (cd.pp <= 1) return training_memory(r, hw, cd.layout, cd.cp, cd.tp, 1);
  const PipelineChoice pc{cd.pp, r.pp_virtual, sched};
  auto layers = schedule_stage_split(r, pc).layers;
  if (layers.empty()) layers = split_layers(r.shape, r.context, r.causal, cd.pp, r.pp_virtual);
  return pipeline_memory(r, hw, cd.layout, cd.cp, cd.tp, 1, layers, pc,
                         max_context_microbatches(r, cd));
}

// One candidate's longest context under one schedule: doubling, then
// bisection, in steps of lcm(1024, 2 cp) tokens, on memory and the shape's
// rules alone (memory never decreases with context).
MaxContextEntry longest_context(PlanRequest r, const Hardware& hw, const Candidate& cd,
                                PipelineSchedule sched, double hbm, std::int64_t limit) {
  const std::int64_t q = std::lcm<std::int64_t>(1024, 2 * cd.cp);
  auto rule_at = [&](std::int64_t units) {
    r.context = units * q;
    int u = 0;
    auto rule = shape_rule(r, hw, cd.layout, cd.cp, cd.tp, &u, cd.pp);
    if (rule.empty() && cd.pp > 1)
      rule = schedule_rule(sched, cd.pp, max_context_microbatches(r, cd));
    return rule;
  };
  auto fits = [&](std::int64_t units) {
    return rule_at(units).empty() && memory_of(r, hw, cd, sched).total <= hbm;
  };
  MaxContextEntry e{cd.cp == 1 ? Layout::Ring : cd.layout, cd.cp, cd.tp, 0, q, "", ""};
  PlanConfig shown;
  shown.layout = e.layout;
  shown.cp = cd.cp;
  shown.tp = cd.tp;
  shown.pp = cd.pp;
  shown.pp_virtual = r.pp_virtual;
  shown.pp_schedule = cd.pp > 1 ? PipelineChoice{cd.pp, r.pp_virtual, sched}.effective()
                                : PipelineSchedule::OneFOneB;
  e.pp = cd.pp;
  e.schedule = shown.pp_schedule;
  e.ep = std::max<std::int64_t>(1, r.ep);
  shown.ep = e.ep;
  shown.etp = r.etp;
  if (cd.layout == Layout::Hybrid && cd.cp > 1)
    shown.ulysses_degree = auto_ulysses_degree(cd.cp, r.shape.kv_heads / static_cast<int>(cd.tp),
                                               group_hardware(hw, cd.tp).gpus_per_node);
  e.label = shown.label();
  const std::int64_t max_units = limit / q;
  std::int64_t lo = 0, hi = 1;
  while (hi <= max_units && fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  hi = std::min(hi, max_units + 1);
  while (lo + 1 < hi) {
    const auto mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  e.max_context = lo * q;
  if (lo < max_units) {
    const auto rule = rule_at(lo + 1);
    e.limited_by = !rule.empty() ? rule : memory_of(r, hw, cd, sched).largest().name;
  } else {
    e.limited_by = fmt::format("the search limit ({} tokens)", limit);
  }
  return e;
}

}  // namespace

MaxContext max_context(const PlanRequest& req, const Hardware& hw, std::int64_t limit) {
  PlanRequest r = req;
  r.global_batch_tokens = 0;
  r.context = 1;
  check_request(r);
  bool any = false;
  const double hbm = usable_hbm_bytes(r, hw);  // the framework's share (framework.hpp)
  MaxContext out;
  if (r.dp_replicate == 0) r.dp_replicate = 1;  // HSDP only adds memory: sized without it
  for (const auto& cd : candidates(r, hw, &any)) {
    // A pipeline is sized under each schedule searched: each holds its own
    // microbatches in flight and parameters per device (schedule.hpp); a
    // MoE model under each expert-parallel degree searched (the experts'
    // weights and state shard over EP).
    const auto dp = r.gpus / (cd.tp * cd.cp * cd.pp);
    const auto schedules = shape_schedules(r, cd);
    for (const auto& [ep, rep] : ep_and_replicas(r, cd, dp)) {  // rep: 1, set above
      PlanRequest q = r;
      q.ep = ep;
      for (const auto sched : schedules) {
        auto e = longest_context(q, hw, cd, sched, hbm, limit);
        out.granularity = std::max(out.granularity, e.granularity);
        out.tokens = std::max(out.tokens, e.max_context);
        out.by_config.push_back(std::move(e));
      }
    }
  }
  std::stable_sort(out.by_config.begin(), out.by_config.end(),
                   [](const auto& a, const auto& b) { return a.max_context > b.max_context; });
  return out;
}

}  // namespace ringsim

namespace ringsim {
std::vector<PlanConfig> search(const PlanRequest& r, const Hardware& hw, const ComputeModel& cm) {
  return search(r, hw, bare_implementation(cm));
}
PlanConfig evaluate(const PlanRequest& r, const Hardware& hw, const Implementation& cm,
                    const PlanConfig& like, const std::optional<AttentionOverride>& attention) {
  return evaluate(r, hw, cm, like.layout, like.cp, like.tp, like.micro_batch, attention, false,
                  {like.pp, like.pp_virtual, like.pp_schedule});
}
PlanConfig evaluate(const PlanRequest& r, const Hardware& hw, const ComputeModel& cm, Layout layout,
                    std::int64_t cp, std::int64_t tp, std::int64_t micro_batch,
                    const std::optional<AttentionOverride>& attention) {
  return evaluate(r, hw, bare_implementation(cm), layout, cp, tp, micro_batch, attention);
}
}  // namespace ringsim
