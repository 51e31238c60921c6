#pragma once
// Closed-form model of one attention layer (or a whole transformer layer with
// --scope layer) for every layout. Derivations are in docs/models.md and at
// each formula. The SimGrid model reports the same keys; tests check the two
// agree where no link is shared.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/analytic/verdict.hpp"
#include "models/core/workload.hpp"

namespace ringsim {

class ComputeModel;    // models/core/profile.hpp
class Implementation;  // models/kernel/implementation.hpp

struct StepTimes {
  double compute_s = 0;  // slowest device's compute in this step
  double comm_s = 0;     // transfer that overlaps this step (0 on the last)
  double step_s = 0;     // max of the two (their sum with --overlap none)
};

// What a JAX chunk-scan implementation (ringattention-jax) adds to a run:
// its chunks, precision and the per-step costs that do not scale with the work.
struct ChunkScanInfo {
  std::int64_t query_chunk = 0, key_chunk = 0;
  std::string precision;
  double matmul_flops = 0;                     // the einsums' FLOP/s at that precision
  std::int64_t chunk_iterations_per_step = 0;  // (query chunk, key chunk) pairs a step scans
  double chunk_iteration_s = 0, query_iteration_s = 0, step_s = 0;
  double loop_s_per_step = 0;       // the step's loop control: all of the above
  int k_bytes = 0, grad_bytes = 0;  // bytes per K and per dK/dV element on the ring
  bool operator==(const ChunkScanInfo&) const = default;
};

// Where a striped or zigzag layout reorders the sequence, and what it costs
// (docs/models.md, "Layout permutation").
struct PermutationInfo {
  std::string where;  // pipeline | layer
  // layer: the all-to-all bytes one device sends and receives per layer (all
  // passes run) and their time; pipeline: the token ids and positions one
  // device reorders per training step (int32 each), not charged.
  std::uint64_t bytes = 0;
  double seconds = 0;
  bool charged = false;
  bool operator==(const PermutationInfo&) const = default;
};

struct Summary {
  // Inputs echoed.
  Workload workload;
  std::string hardware, engine = "analytic", compute_model = "roofline";
  std::string kernel = "roofline", merge_style;  // the implementation (--kernel) and how it merges
  std::optional<ChunkScanInfo> chunk_scan;       // --kernel ringattention-jax
  std::optional<PermutationInfo> permutation;    // striped and zigzag
  // Per step (ring-type layouts; one entry for ulysses/allgather).
  double compute_s_per_step = 0;     // slowest device, heaviest step (launch, merge included)
  double merge_s_per_step = 0;       // forward: merging the step's partial output (max over steps)
  double accumulate_s_per_step = 0;  // backward: adding dQ/dK/dV (max over steps)
  double launch_s_per_step = 0;      // host launch time not covered by device work (max)
  double reduce_s = 0;         // once per pass: final casts, deferred corrections (all layers)
  double comm_s_per_step = 0;  // one ring transfer (K,V; backward K,V,dK,dV)
  // Compute slowdown while a transfer is in flight (docs/models.md,
  // "Overlap interference"): attention kernels and memory-bound merges.
  double interference_compute = 1, interference_memory = 1;
  int comm_ctas = 0;
  std::string comm_link_kind;
  // FLOPs of the attention calls, all devices and layers: what the mask
  // leaves visible (useful) and what the kernel computes in tiles (executed).
  double useful_flops = 0, executed_flops = 0;
  std::uint64_t bytes_per_step = 0;
  std::int64_t min_block = 0;  // max over the passes; 0 = n/a (no overlap), -1 = never hides
  bool overlapped = false;     // verdict.hidden: nothing exposed (models/analytic/verdict.hpp)
  bool overlap = true;         // the transport overlaps transfers with compute (Hardware::overlap)
  // Totals (all covered layers).
  double time_s = 0;        // predicted wall time
  double ideal_time_s = 0;  // total work / devices, no communication
  double efficiency = 0;    // ideal / predicted
  // One device running the whole sequence as one call with the same kernel
  // (memory permitting), and efficiency against it: single / (devices x time).
  double single_device_time_s = 0, efficiency_vs_single_device = 0;
  double exposed_comm_s = 0;  // time_s minus the same schedule with free links
  double compute_only_s = 0;  // the same schedule with free links
  double collective_s = 0;    // ulysses all-to-alls / allgather gathers (exposed)
  // --scope layer: the layer outside attention and its TP collectives, the
  // projections and MLP GEMM by GEMM (+ a MoE layer's experts) and the
  // memory-bound ops; of it, pointwise_s the memory-bound ops (norms,
  // residual adds, RoPE, the MLP's activation) at the closed forms' rate.
  double other_s = 0, pointwise_s = 0;
  double tp_comm_s = 0;  // --tp with --scope layer: TP all-reduces / all-gathers + reduce-scatters
  // --scope layer on a MoE model (models/analytic/moe.hpp, layer_moe): of
  // other_s, the expert side's compute; and the dispatch and combine
  // all-to-alls (--ep above 1), exposed; the slowest EP rank's routed rows
  // over the mean; one all-to-all's bytes per GPU.
  double moe_compute_s = 0, ep_comm_s = 0, moe_imbalance = 1, ep_alltoall_bytes = 0;
  std::uint64_t memory_bytes_per_device = 0;
  std::vector<StepTimes> steps;  // forward then backward, one layer
  // Hidden, exposed and its sources, stalled steps, min block per pass: the
  // one verdict both engines state (this one on the closed forms' timeline).
  VerdictInputs verdict_inputs;
  Verdict verdict;
};

// The per-pass traffic, shared with the simulator so both move the same bytes.
// Backward ships dK/dV in fp32 (they accumulate across the ring; rounding them
// to bf16 at every hop would lose exactness), K/V in the workload dtype.
struct PassBytes {
  std::uint64_t ring = 0;           // per ring step, per device (ring-type and hybrid)
  std::uint64_t final_hop = 0;      // backward: dK/dV's last hop home, after the last step
  std::uint64_t a2a_in = 0;         // ulysses/hybrid: per device, before local attention
  std::uint64_t a2a_out = 0;        // ulysses/hybrid: per device, after it
  std::uint64_t gather_block = 0;   // allgather: each device's block that everyone gathers
  std::uint64_t scatter_block = 0;  // allgather backward: dK/dV reduce-scatter block
};
// `grad_bytes`: bytes per element of dK/dV on the ring (the implementation's).
// `k_bytes`: bytes per K element on the ring, 0 = the dtype's (the seed's JAX
// code casts K to fp32 before the ring and sends it so; V stays in the dtype).
// `permute_per_layer`: striped and zigzag reorder the sequence around every
// attention (an all-to-all of Q, K, V in and of O out; backward dO in and dQ,
// dK, dV out) instead of once in the data pipeline.
PassBytes pass_bytes(const Workload& w, bool backward, int grad_bytes = 4, int k_bytes = 0,
                     bool permute_per_layer = false);
// The devices one all-to-all spans: a Ulysses group, or the whole ring for a
// per-layer layout permutation.
std::int64_t alltoall_group(const Workload& w);
// The implementation's payload of a pass (its dK/dV and K bytes, its permutation).
PassBytes pass_bytes(const Workload& w, bool backward, const Implementation& im);
// ... on `hw`: under XLA's collectives (Hardware::xla_collectives) the
// all-gather's reduce-scatter carries dK/dV in the dtype.
PassBytes pass_bytes(const Workload& w, bool backward, const Implementation& im,
                     const Hardware& hw);

// Kernel seconds of one device at one step with a bare compute model (its
// calls, models/core/calls.hpp), and its measured merge (a profile's merge
// points; forward steps after the first). Implementation::step has the rest.
double step_seconds(const Workload& w, const ComputeModel& cm, std::int64_t device,
                    std::int64_t step, bool backward);
double merge_step_seconds(const Workload& w, const ComputeModel& cm, std::int64_t device,
                          std::int64_t step, bool backward);

// One step of one pass as the closed forms see it: the slowest device's
// compute without and with interference, and the transfer it overlaps.
struct StepSlot {
  double free_s = 0, slowed_s = 0, comm_s = 0;
  double work_slowed_s = 0;  // slowed_s without launch stalls (what can cover a transfer)
  bool sends = false;
};
StepSlot step_slot(const Workload& w, const Hardware& hw, const Implementation& im, bool backward,
                   std::int64_t step);

// Time of a staged all-to-all (N-1 rounds) of `bytes_per_device` among `group`
// devices, and of a ring all-gather/reduce-scatter of one block per device.
double alltoall_time(std::uint64_t bytes_per_device, std::int64_t group, double bw, double lat);
double ring_collective_time(std::uint64_t block_bytes, std::int64_t group, double bw, double lat);
// Bandwidth/latency the Ulysses all-to-all of `group` consecutive devices sees.
double alltoall_bandwidth(const Hardware& hw, std::int64_t group);
double alltoall_latency(const Hardware& hw, std::int64_t group);

// Link time of a pass's CP collectives (Ulysses or permutation all-to-alls,
// all-gather, reduce-scatter), one layer: XLA's on the TPU torus when
// hw.xla_collectives (models/analytic/xla_collectives.hpp), else the staged
// all-to-all and ring collectives above. Both engines' closed forms and the
// planner charge this.
double pass_collective_seconds(const Workload& w, const Hardware& hw, const PassBytes& b);
// One ring transfer of `bytes` on the slowest hop (XLA: one ICI link).
double ring_step_seconds(const Workload& w, const Hardware& hw, std::uint64_t bytes);

// FLOPs of the rest of a transformer layer per device (projections + SwiGLU MLP).
double other_layer_flops(const Workload& w, bool backward);
// Seconds of those GEMMs on one device, each by its shape as the planner times
// them (models/kernel/gemm.hpp: tiles in waves, a tile's fill at short K, the
// memory floor): Q/K/V fused, gate and up fused, the output and down
// projections; MLA's own projections; a MoE model's MLP left to layer_moe.
// Both engines charge it for --scope layer.
double other_layer_seconds(const Workload& w, const Hardware& hw, bool backward);
// Seconds of the layer's memory-bound ops on one device, as the planner and
// `infer` charge them: the fused lower bound (pointwise_bytes_per_token) of
// this rank's shape at the achievable HBM rate, the residual stream's share
// over w.residual_shard ranks (sequence parallel); the backward moves twice
// the forward's bytes (the planner's Execution default). Both engines charge
// it for --scope layer, inside other_s.
double layer_pointwise_seconds(const Workload& w, const Hardware& hw, bool backward);
// Of it, the residual stream's ops (norms and residual adds) over
// w.residual_shard ranks.
double residual_stream_seconds(const Workload& w, const Hardware& hw, bool backward);
// One token's attention projections (Q/K/V and output; MLA's down and up
// projections) on a GPU holding `heads` of the model's heads (its TP share).
double attention_projection_flops(const ModelShape& s, double heads);
// Parameters: one layer's attention projections (MLA's as DeepSeek-V3 has
// them); every layer's together, exact; and their mean per layer (a MoE
// model with dense first layers has two kinds).
std::uint64_t attention_params(const ModelShape& s);
std::uint64_t all_layer_params(const ModelShape& s);
std::uint64_t layer_params(const ModelShape& s);

// Sets efficiency = ideal / time, after settling rounding: the ideal and the
// time are sums taken in different orders, so a run that reaches the ideal
// can come out an ulp below it; within 1e-9 (relative) the ideal is taken
// to be the time, so efficiency never exceeds 1 and time never falls below
// the ideal. A larger gap is left to show (a model error, never hidden).
void settle_efficiency(Summary& s);
// single / (gpus x time): the run against one device doing all of it. A sum
// that rounds a hair past 1 is settled at 1, as settle_efficiency does.
double efficiency_vs_one_device(double single_s, double gpus, double time_s);

// The verdict from s's verdict_inputs and its time (sets verdict,
// exposed_comm_s and overlapped); analyze() calls it, so does the simulator.
void decide(Summary& s);
// The run header's "hardware" line: the device that computes (a profile's
// own device when one is used) and the links actually in use, by name and
// bandwidth.
std::string hardware_text(const Hardware& hw, const Implementation& im);
// What the layout's collectives are called in the verdict's sentence.
std::string collective_name(const Workload& w);

Summary analyze(const Workload& w, const Hardware& hw, const Implementation& im);
// analyze(...).time_s without the minimum block and the verdict (the
// planner's inner loop times thousands of configurations).
double analyze_time(const Workload& w, const Hardware& hw, const Implementation& im);
Summary analyze(const Workload& w, const Hardware& hw, const ComputeModel& cm);  // bare model
Summary analyze(const Workload& w, const Hardware& hw);                          // roofline

}  // namespace ringsim
