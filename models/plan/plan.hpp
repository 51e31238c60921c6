#pragma once
// Capacity planning for training: does model M at context S fit on G devices,
// with which context-parallel degree, layout and block, how long is a step,
// how many tokens/s per device and what MFU. Pure library code: the shape
// rules, the evaluation of one configuration and the search; memory and step
// time are in memory.hpp and step_time.hpp.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/kernel/implementation.hpp"
#include "models/plan/basics.hpp"
#include "models/plan/memory.hpp"
#include "models/plan/pipeline.hpp"
#include "models/plan/schedule.hpp"
#include "models/plan/step_time.hpp"

namespace ringsim {

struct PlanConfig {
  Layout layout = Layout::Ring;
  std::int64_t cp = 1, tp = 1, dp = 1;
  std::int64_t ep = 1;            // expert parallelism (MoE models; moe.hpp)
  std::int64_t etp = 0;           // expert tensor parallelism (0: tp)
  std::int64_t dp_replicate = 1;  // HSDP replica groups (--dp-replicate): dp = replicas x shard
  std::int64_t block = 0;         // tokens per device per sequence = context / cp
  std::int64_t micro_batch = 1;   // sequences per CP group per micro-step
  std::int64_t grad_accum = 1;    // micro-steps per step
  bool tied = false;       // its error band overlaps the best row's (cli/cmd_plan.cpp, mark_ties)
  int ulysses_degree = 0;  // hybrid only
  // Pipeline parallelism: stages, virtual stages per device (1: plain 1F1B),
  // layers per stage (empty without a pipeline). grad_accum is the schedule's
  // microbatch count m; memory is the worst stage's (memory.stage).
  std::int64_t pp = 1;
  int pp_virtual = 1;
  PipelineSchedule pp_schedule = PipelineSchedule::OneFOneB;  // interleaved when pp_virtual > 1
  // The schedules the search tried for this shape, the chosen one among them
  // (--explain says which and why).
  struct ScheduleTry {
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    bool feasible = false;
    double tokens_per_s_per_gpu = 0, bubble_s = 0, memory_total = 0;
    std::string why;
  };
  std::vector<ScheduleTry> schedules_tried;
  std::vector<int> stage_layers;
  std::string pp_layout;  // stage_split's text: "balanced", "embedding-loss", "first 7, last 7"
  bool feasible = false;
  // fits | tight (over the HBM by less than the memory model's band,
  // PlanConstants::kMemoryBand: kept, marked) | over
  std::string memory_verdict = "fits";
  Infeasibility why;          // why not (kind Fits when feasible)
  double overflow_bytes = 0;  // memory total - HBM (> 0 when memory-infeasible)
  bool evaluated = false;     // memory/time computed (false: rejected by a shape rule)
  PlanMemory memory;
  PlanTime time;
  double tokens_per_step = 0;
  double tokens_per_s_per_gpu = 0;
  double model_flops_per_step = 0;  // causal-aware PaLM convention (see model_flops_per_token)
  double mfu = 0, mfu_palm = 0;
  std::string label()
      const;  // "zigzag cp 32" / "no cp" / "... tp 2" / "... pp 16" / "... pp 16 v2"
  std::string reason() const { return feasible ? std::string() : why.line(); }
};

// The attention workload of one config (attention_workload of its shape).
Workload attention_workload(const PlanRequest& r, const PlanConfig& c);

// Evaluates one config; never throws for an infeasible one (`why` is set).
PlanConfig evaluate(const PlanRequest& r, const Hardware& hw, const Implementation& cm,
                    Layout layout, std::int64_t cp, std::int64_t tp, std::int64_t micro_batch,
                    const std::optional<AttentionOverride>& attention = std::nullopt,
                    bool memory_only = false, const PipelineChoice& pipeline = {});
// What would make a config the memory model refuses fit, as one line ("fits
// with --activation-checkpointing full (61.2 GiB), or --cp 8 (70.1 GiB)"):
// each of full recompute, a chunked loss, twice the CP or PP degree, FP8
// weights or FP8, tried alone on the memory model. "" when none does.
std::string fit_hint(const PlanRequest& r, const Hardware& hw, const Implementation& cm,
                     const PlanConfig& c);
// The same shape as `like` (layout, cp, tp, micro-batch, pp, pp_virtual)
// evaluated again, e.g. with a SimGrid re-check's attention times.
PlanConfig evaluate(const PlanRequest& r, const Hardware& hw, const Implementation& cm,
                    const PlanConfig& like, const std::optional<AttentionOverride>& attention);
PlanConfig evaluate(const PlanRequest& r, const Hardware& hw, const ComputeModel& cm, Layout layout,
                    std::int64_t cp, std::int64_t tp, std::int64_t micro_batch,
                    const std::optional<AttentionOverride>& attention = std::nullopt);

// All configs, ranked: those that fit by tokens/s per device (best first),
// then the tight ones (within the memory model's band) the same way, then the
// infeasible ones, closest to fitting first. Throws InputError for a request
// that no config can express (e.g. --cp not dividing --gpus).
std::vector<PlanConfig> search(const PlanRequest& r, const Hardware& hw, const Implementation& cm);
// With a bare compute model (no per-step costs around the kernel).
std::vector<PlanConfig> search(const PlanRequest& r, const Hardware& hw, const ComputeModel& cm);

struct MaxContextEntry {
  Layout layout;
  std::int64_t cp, tp;
  std::int64_t max_context = 0;  // 0: not even the smallest context fits
  std::int64_t granularity = 0;  // lcm(1024, 2 cp): the search step
  std::string limited_by;        // largest memory term one step above (or the rule that stops it)
  std::string label;
  std::int64_t pp = 1;  // pipeline stages
  // The schedule it was sized under (its microbatches in flight and
  // parameters per device); 1F1B without a pipeline.
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  std::int64_t ep = 1;  // expert parallelism it was sized under (1 for a dense model)
};

struct MaxContext {
  std::int64_t tokens = 0;                 // longest context any config fits (0: none)
  std::int64_t granularity = 0;            // the coarsest step of any config
  std::vector<MaxContextEntry> by_config;  // sorted, longest first
};

// Longest context (a multiple of lcm(1024, 2 cp)) that fits in HBM, per config
// and overall, up to `limit` tokens. Memory is non-decreasing in the context,
// so each config is a binary search on memory alone.
MaxContext max_context(const PlanRequest& r, const Hardware& hw, std::int64_t limit);

}  // namespace ringsim
