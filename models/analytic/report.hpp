#pragma once
// The run summary: the one record of a run's results (the keys users' scripts
// read, docs/sim.md and docs/models.md). RunSummary::to_json writes it and
// RunSummary::from_json reads it back side by side, so a key is named in one
// file; from_json refuses a missing or mistyped key, which is how a parent
// process reads a child `ringsim run --json`.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/analytic/analytic.hpp"

namespace ringsim {

struct RunSummary {
  // The configuration, echoed.
  std::int64_t devices = 0, block = 0, seq_len = 0;
  std::string layout, pass, dtype, model, scope, hardware;
  // A chunked-attention model's layer kind, global or chunked (--layer-kind;
  // JSON null, "" here, for every other model).
  std::string layer_kind;
  std::optional<std::int64_t> ulysses_degree, ring_degree;  // hybrid only
  bool causal = true;
  int heads = 0, kv_heads = 0, head_dim = 0, layers = 0;
  int tp = 1;                     // tensor-parallel degree (GPUs per CP rank)
  bool sequence_parallel = true;  // with tp > 1: all-gathers + reduce-scatters, not all-reduces
  // Per step and totals (analyze() or the simulation).
  double compute_s_per_step = 0, merge_s_per_step = 0, comm_s_per_step = 0;
  // The implementation and its per-step costs (docs/models.md).
  std::string kernel, merge_style, comm_link_kind;
  std::optional<ChunkScanInfo> chunk_scan;     // JSON "chunk_scan": null unless a chunk scan
  std::optional<PermutationInfo> permutation;  // JSON "permutation": null unless striped/zigzag
  double accumulate_s_per_step = 0, launch_s_per_step = 0, reduce_s = 0;
  double interference_compute = 1, interference_memory = 1;
  int comm_ctas = 0;
  double useful_flops = 0, executed_flops = 0;
  double single_device_time_s = 0, efficiency_vs_single_device = 0;
  std::string overlap;  // full | none
  std::uint64_t bytes_per_step = 0;
  std::optional<std::int64_t> min_block;  // none: no overlap in this layout, or never hides
  bool overlapped = false;
  double time_s = 0, ideal_time_s = 0, efficiency = 0, exposed_comm_s = 0, compute_only_s = 0;
  double collective_s = 0, other_s = 0;
  double pointwise_s = 0;  // --scope layer: of other_s, the memory-bound ops (closed form)
  double tp_comm_s = 0;    // --tp, --scope layer: the TP collectives, exposed (all layers)
  // --scope layer on a mixture-of-experts model (JSON "moe"; null otherwise):
  // its experts, the EP and expert TP degrees, the routing seed, and what
  // layer_moe charged over the covered layers (ep_comm_s, exposed, is also
  // the summary's top-level key, 0 without EP).
  struct Moe {
    int experts = 0, experts_per_token = 0, shared_experts = 0;
    std::int64_t ep = 1, expert_tp = 1;
    std::uint64_t routing_seed = 1;
    double imbalance = 1, experts_s = 0, alltoall_bytes_per_gpu = 0;
  };
  std::optional<Moe> moe;
  double ep_comm_s = 0;
  std::uint64_t memory_bytes_per_device = 0;
  std::map<std::string, std::uint64_t> memory_breakdown;
  std::string engine, compute_model;
  // Hidden, exposed and its sources, stalled steps, min block per pass
  // (models/analytic/verdict.hpp); overlapped == verdict.hidden.
  Verdict verdict;

  // What only a simulation sees (engine "simgrid").
  struct Simulated {
    double analytic_time_s = 0, analytic_efficiency = 0;
    std::string platform, network_model;
    std::optional<std::string> inter_topology;  // nodes platform only
    std::uint64_t activities = 0;
    std::int64_t simulated_devices = 0;
    // How the schedule was played: "simgrid" (every device an actor),
    // "symmetry" (one period of a uniform ring), "recurrence" (a link-disjoint
    // ring as arithmetic, no SimGrid activities; docs/sim.md).
    std::string simulation_method = "simgrid";
    std::vector<std::int64_t> stalled_fwd, stalled_bwd;
    std::uint64_t stalled_device_steps = 0;
    double wait_s = 0;
    std::int64_t critical_device = 0;
    double critical_device_busy_s = 0;
    nlohmann::json faults = nlohmann::json::object();
    // Job mode (run --dp > 1, docs/sim.md "Job mode"): the rings, the
    // slowest and why, the busiest links. Absent otherwise.
    std::optional<nlohmann::json> job;
  };
  std::optional<Simulated> sim;

  static RunSummary of(const Summary& s);
  nlohmann::json to_json() const;
  // Throws InputError naming `origin` and the key that is missing or has the
  // wrong type; the simulated part is required when engine is "simgrid".
  static RunSummary from_json(const nlohmann::json& j, const std::string& origin);
};

// What both text reports (analytic and simulated) open with: the title line
// ("ringsim: 8 x 4096 tokens = 32K ...", with its newline) and the model row.
std::string title_line(const Workload& w);
std::string model_text(const Workload& w);
// The "tensor parallel" line both text reports print for --tp > 1.
std::string tp_text(const Workload& w);
// The verdict's stalled steps ("fwd 6-14; bwd 0-14", "none") and its exposed
// time with the sources above the tolerance ("3.8 ms (transfer_waits 3.2 ms, ...)").
std::string stalled_steps_text(const Verdict& v);
std::string exposed_text(const Verdict& v);
// RunSummary::of(s).to_json().
nlohmann::json summary_json(const Summary& s);
std::string summary_text(const Summary& s);
// The per-step cost rows both text reports print (kernel, tiles, merge,
// launch, reduce, interference): (label, value), only those that apply.
std::vector<std::pair<std::string, std::string>> cost_rows(const Summary& s);
// A MoE layer's rows (--scope layer on a mixture-of-experts model): its
// experts and routing, the expert compute, the dispatch and combine.
std::vector<std::pair<std::string, std::string>> moe_rows(const Summary& s);

}  // namespace ringsim
