#pragma once
// Time of one training step of one configuration (docs/plan.md): attention by
// the closed forms (or a SimGrid re-check's times), projections and MLP at
// the device's rate, pointwise work at HBM bandwidth, tensor-parallel and
// FSDP collectives, the output head and loss, the optimizer.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/plan/basics.hpp"

namespace ringsim {

class Implementation;  // models/kernel/implementation.hpp

// One CP collective of a layer as the planner times it (one sequence, one
// layer): what moves, its link time, how often a layer runs it and whether it
// overlaps compute (plan --explain itemises these; docs/plan.md).
struct CpCollective {
  std::string op;           // collective-permute | all-gather | reduce-scatter | all-to-all | ...
  std::string pass;         // fwd | bwd
  std::string what;         // the payload
  double seconds = 0;       // one occurrence
  std::int64_t count = 0;   // occurrences per layer and pass
  bool overlapped = false;  // runs beside the attention's compute (else on its critical path)
};

// While one is alive on its thread, step_time keeps each attention time it
// computes by the workload's shape (layout, CP, TP, Ulysses degree, pass,
// documents): a search evaluates one shape under many micro-batches, EP
// degrees, pipelines and schedules, which leave attention alone, and the
// chunked layers' packed chunks (Llama 4) cost every device at every ring
// step (Maverick at 2,048 GPUs took 5 minutes without it). Only search()
// holds one, for one request, hardware and implementation; nested scopes
// share the outer one's.
class AttentionMemoScope {
 public:
  AttentionMemoScope();
  ~AttentionMemoScope();
  AttentionMemoScope(const AttentionMemoScope&) = delete;
  AttentionMemoScope& operator=(const AttentionMemoScope&) = delete;

 private:
  bool owner_ = false;
};

struct PlanTime {
  std::string engine = "analytic";  // who produced the attention times
  // Seconds per step (all micro-steps, all layers) unless noted.
  double attention_s = 0;            // fwd + bwd, = analyze(fwdbwd, layers) x micro-batch
  double attention_recompute_s = 0;  // the attention forward run again in backward
  double other_compute_s = 0;        // projections + MLP (+ recompute), GEMM by GEMM
  double pointwise_s = 0;            // norms, RoPE, residuals, SwiGLU by HBM roofline
  double fp8_cast_s = 0;             // FP8 casts of linear inputs, weights, output grads (HBM)
  std::string fp8_cast_how;          // what they are (fp8_cast_text)
  double head_s = 0;                 // output projection + loss
  double tp_comm_s = 0;              // sequence-parallel all-gathers/reduce-scatters (exposed)
  // Mixture of experts (moe.hpp): the dispatch and combine all-to-alls
  // (exposed, in the step), one all-to-all's bytes per GPU, the slowest EP
  // rank's routed load over the mean, and the expert GEMMs (in other_compute_s).
  double ep_alltoall_s = 0, ep_alltoall_bytes = 0, moe_imbalance = 1, expert_compute_s = 0;
  double etp_comm_s = 0;  // of ep_alltoall_s: the ETP group's gather and scatter of routed tokens
  // Chunked attention: layers that attend inside their chunk of
  // attention_chunk tokens (0: every layer over the whole sequence).
  int chunked_layers = 0, global_layers = 0;
  std::int64_t attention_chunk = 0;
  bool ep_overlapped = false, ep_flex = false;  // --ep-overlap, --ep-dispatcher flex
  double fsdp_comm_s = 0;                       // FSDP all-gathers + reduce-scatters (link time)
  double cp_link_s = 0;                         // ring transfers + CP collectives (link time)
  double fsdp_exposed_s = 0;                    // FSDP time not hidden behind compute
  double micro_step_s = 0;                      // one micro-step (pipeline: of the slowest stage)
  double optimizer_s = 0;                       // AdamW update by HBM roofline
  double step_time_s = 0;  // grad_accum x micro_step + optimizer, x calibration
  // Frameworks as they execute (models/plan/execution.hpp), per step:
  double launch_s = 0;      // device gaps between the layers' kernels
  double host_bound_s = 0;  // host issue time beyond the device's (a host-bound layer)
  double tp_exposed_s =
      0;  // TP collectives not hidden behind GEMMs (all of tp_comm_s unless overlapped)
  double interference_s = 0;  // compute slowed while overlapped collectives hold SMs
  double dp_step_comm_s = 0;  // per-step data-parallel collectives (distributed optimizer)
  double dp_step_exposed_s = 0;
  double dcn_s = 0, dcn_exposed_s = 0;    // --slices: the gradients' all-reduce over the DCN
  double hsdp_s = 0, hsdp_exposed_s = 0;  // --dp-replicate: the shards' all-reduce across replicas
  double edges_s = 0;  // the first all-gather and the last reduce-scatter of each micro-step
  // The framework-level calibration (1: none) and the step before it.
  double calibration = 1;
  double step_time_first_principles_s = 0;
  // Pipeline parallelism (models/plan/pipeline.hpp). With pp > 1 the terms
  // above are the slowest stage's, per device, and
  // step = (m + (p-1)/V) x (micro_step + 2 V x message) + optimizer
  //      = m x micro_step + pp_bubble_s + pp_p2p_s + optimizer.
  double pp_bubble_s = 0;         // (p-1)/V x micro_step: fill and drain
  double pp_bubble_fraction = 0;  // ((p-1)/V) / (m + (p-1)/V)
  // The schedule (schedule.hpp) and its bubble in slowest-stage microbatches:
  // (p-1)/V for 1F1B and interleaved.
  PipelineSchedule pp_schedule = PipelineSchedule::OneFOneB;
  double pp_bubble_slots = 0;
  double pp_p2p_s = 0;          // exposed stage-to-stage sends, (m + (p-1)/V) x 2V x message
  double pp_message_bytes = 0;  // one activation or gradient message per device
  double pp_message_s = 0;      // its time on the slowest boundary's link
  std::string pp_link;          // that link's name
  std::int64_t pp_slowest_stage = 0;
  // CP collectives of one layer, itemised; cp_model says whose: "xla-ici"
  // (XLA's collectives on a TPU torus, models/analytic/xla_collectives.hpp)
  // or "links" (the catalog's ring links and staged collectives).
  std::vector<CpCollective> cp_collectives;
  std::string cp_model = "links";
  std::string tp_where;  // where the TP group's collectives run, for --explain
  // Forward K/V bytes one ring step sends per sequence and layer (0: no
  // ring), as run and minblock charge them (pass_bytes with the implementation).
  std::uint64_t ring_bytes_per_step = 0;
};

// Attention times that replace the analytic ones (a SimGrid re-check):
// seconds per layer for one sequence, forward and forward+backward.
struct AttentionOverride {
  double fwd_layer_s = 0, fwdbwd_layer_s = 0;
  std::string engine;
};

// One configuration's shape as the step-time model needs it.
struct StepShape {
  Layout layout = Layout::Ring;
  std::int64_t cp = 1, tp = 1, block = 0, micro_batch = 1, grad_accum = 1;
  int ulysses_degree = 0;
  // Pipeline: stages, virtual stages per device, layers per stage (empty:
  // one stage holding every layer). grad_accum is the microbatch count m.
  std::int64_t pp = 1;
  int pp_virtual = 1;
  std::vector<int> stage_layers;
  // The schedule as it runs: interleaved when pp_virtual > 1 (the caller's
  // PipelineChoice::effective; step_time does not derive it again).
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
};

// Throws InputError when the compute model cannot time the attention (a
// profile that does not cover the block).
PlanTime step_time(const PlanRequest& r, const Hardware& hw, const Implementation& cm,
                   const StepShape& s, const std::optional<AttentionOverride>& attention);

}  // namespace ringsim
