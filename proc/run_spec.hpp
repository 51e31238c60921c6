#pragma once
// What `ringsim run` is asked, as typed values: the one record that carries a
// configuration across a process boundary (the planner's re-check, the
// experiments, calibrate, the GUI's run panel, the simulator benchmark). The
// flags are declared once here (add_*_flags), parsed once (parse_*), and
// written back by to_args(), so parse_run_args(to_args(spec)) == spec; a test
// holds that for every field, and renaming a flag breaks it at build time of
// the tests, not in a child at run time.
//
// A spec is what the user asked, not what it resolves to: names (model, GPU,
// links, cluster) are checked against the catalog by cli/resolve.hpp.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/core/workload.hpp"
#include "sim/faults.hpp"
#include "sim/options.hpp"
#include "sim/topology.hpp"

namespace ringsim::proc {

enum class Engine { SimGrid, Analytic };
const std::vector<std::string>& engine_names();
std::string to_string(Engine e);

struct WorkloadSpec {
  std::int64_t devices = 256;
  std::int64_t block = 4096;  // tokens per device
  Layout layout = Layout::Ring;
  bool causal = true;
  Pass pass = Pass::Fwd;
  DType dtype = DType::BF16;
  std::string model = "llama3-8b";
  // A custom shape overrides the preset's fields that are set.
  std::optional<int> d_model, heads, kv_heads, head_dim, ffn;
  std::optional<std::string> mlp;     // --mlp: swiglu, geglu, gelu, relu2
  std::optional<int> layers;          // layers this run covers (default 1)
  std::optional<int> ulysses_degree;  // hybrid only
  Scope scope = Scope::Attention;
  int tp = 1;                     // --tp: GPUs of one TP group behind each CP rank
  bool sequence_parallel = true;  // --sequence-parallel on|off (with --tp > 1)
  // A mixture-of-experts model with --scope layer: --ep (CP ranks per EP
  // group) and --routing-seed (unset: 1).
  std::int64_t ep = 1;
  std::optional<std::uint64_t> routing_seed;
  // --documents as given (models/core/documents.hpp; "" = one document), drawn
  // with documents_seed (--seed) when resolved, and --pack.
  std::string documents;
  std::uint64_t documents_seed = 1;
  Pack pack = Pack::Sequence;
  // --layer-kind chunked: a chunked-attention model's chunked layers (else its global ones).
  bool chunked_layer = false;
  bool operator==(const WorkloadSpec&) const = default;
};

struct HardwareSpec {
  std::string gpu, cluster, intra, inter;  // "" = the catalog's default
  std::optional<Platform> platform;
  std::optional<int> gpus_per_node;
  std::optional<double> flops, efficiency, bandwidth, latency;
  // As deployed: the power limit (W) and an HBM bandwidth override (bytes/s).
  std::optional<double> power_limit, hbm_bandwidth;
  // The cluster's shape (docs/models.md, "Cluster fields"); unset = the cluster's.
  std::optional<int> nics_per_node, nvlink_domain;
  std::optional<bool> wraparound;  // torus: wrap-around links (--wraparound on|off)
  std::optional<double> oversubscription;
  std::string catalog, profile;  // files; "" = none
  std::string kernel;            // --kernel: an implementation in the catalog; "" = the device's
  // --query-chunk-size, --key-chunk-size: the JAX chunk scan's (ringattention-jax only).
  std::optional<int> query_chunk, key_chunk;
  // --set KEY=VALUE (docs/models.md, "Moving an assumption"), in order: a
  // catalog field (SECTION.NAME.FIELD) or a framework's (frameworks.NAME.FIELD).
  std::vector<std::pair<std::string, std::string>> sets;
  bool operator==(const HardwareSpec&) const = default;
};

struct SimSpec {
  Engine engine = Engine::SimGrid;
  std::string trace, csv;  // output files; "" = none
  sim::NetworkModel network = sim::NetworkModel::Exact;
  sim::InterTopology inter_topology = sim::InterTopology::Rail;
  bool inter_topology_given = false;  // --inter-topology was on the command line
  std::vector<int> torus_dims;        // empty: chosen from the device count
  sim::Faults faults;
  sim::Symmetry symmetry = sim::Symmetry::Auto;
  sim::Recurrence recurrence = sim::Recurrence::Auto;
  bool overlap = true;  // --overlap full|none
  std::optional<std::uint64_t> max_activities, max_memory;
  bool progress = false;
  // Job mode (docs/sim.md, "Job mode"): --dp rings of --devices CP ranks on one
  // platform, and whether their FSDP collectives run as flows (--fsdp; unset:
  // on with --scope layer).
  std::int64_t dp = 1;
  std::optional<bool> fsdp;
  bool operator==(const SimSpec&) const = default;
};

struct RunSpec {
  WorkloadSpec workload;
  HardwareSpec hardware;
  SimSpec sim;
  // A `calibrate --runs` file: the error band of run's class from the user's
  // own measured runs (docs/own-cluster.md); "" = the scoreboard's.
  std::string calibration;
  // A sweep's point: the SHA-256 of the files it reads (catalog with the
  // built-in data, --calibration, a --documents file, --profile) as hashed
  // when the sweep started (sweep/header.hpp, inputs_hash); the child refuses
  // to run when they changed since. "" = not checked.
  std::string inputs_sha256;
  bool json = false;
  bool operator==(const RunSpec&) const = default;
};

// ---- the flags, as text, as CLI11 fills them --------------------------------

struct WorkloadFlags {
  std::string devices = "256", block = "4096", layout = "ring", pass = "fwd", dtype = "bf16";
  bool causal = true;
  std::string model = "llama3-8b";
  std::string d_model, layers, heads, kv_heads, head_dim, ffn, mlp, ulysses_degree;
  std::string scope = "attention";
  std::string tp = "1", sequence_parallel = "on";
  std::string ep = "1", routing_seed;
  std::string documents, pack = "sequence";
  std::string layer_kind;
};

struct HardwareFlags {
  std::string gpu, platform, gpus_per_node, intra, inter, cluster;
  std::string flops, efficiency, bandwidth, latency, power_limit, hbm_bandwidth;
  std::string nics_per_node, nvlink_domain, oversubscription, wraparound;
  std::string catalog, profile, kernel;
  std::string query_chunk, key_chunk;
  std::vector<std::string> sets;  // --set KEY=VALUE, in order
};

struct SimFlags {
  std::string engine = "simgrid", trace, csv, network_model = "exact", inter_topology;
  std::string torus_dims;
  std::vector<std::string> stragglers, degrades;
  std::string jitter, seed = "1";
  bool progress = false;
  std::string max_activities, max_memory, symmetry = "auto", overlap = "full";
  std::string recurrence = "auto";
  std::string dp = "1", fsdp;
};

struct RunFlags {
  WorkloadFlags w;
  HardwareFlags hw;
  SimFlags sim;
  std::string calibration, inputs_sha256;
  bool json = false;
};

// `with_sizes`: add --devices/--block (run) or not (minblock).
void add_workload_flags(CLI::App* app, WorkloadFlags& f, bool with_sizes = true);
void add_model_flags(CLI::App* app, WorkloadFlags& f);  // --model and the custom shape
void add_hardware_flags(CLI::App* app, HardwareFlags& f);
void add_sim_flags(CLI::App* app, SimFlags& f);
void add_run_flags(CLI::App* app, RunFlags& f);  // all of the above and --json

// Text to typed values; errors name the flag and what it allows (InputError).
WorkloadSpec parse_workload(const WorkloadFlags& f, bool with_sizes = true);
HardwareSpec parse_hardware(const HardwareFlags& f);
SimSpec parse_sim(const SimFlags& f, std::int64_t devices);
// --straggler DEVICE:F (a device of `devices`), --degrade LINK:F, --jitter
// SIGMA and --seed N as text, into the faults every simulator plays (run,
// infer and plan's re-check parse them here).
sim::Faults parse_faults(const std::vector<std::string>& stragglers,
                         const std::vector<std::string>& degrades, const std::string& jitter,
                         const std::string& seed, std::int64_t devices);
RunSpec parse_run(const RunFlags& f);

// "KEY=VALUE" of --set, split; throws InputError naming --set.
std::pair<std::string, std::string> parse_set(const std::string& text);

// The flags that reproduce a spec (fields at their default are left out).
std::vector<std::string> to_args(const WorkloadSpec& s);
std::vector<std::string> to_args(const HardwareSpec& s);
std::vector<std::string> to_args(const SimSpec& s);
// "run" and every flag of the spec (and --json).
std::vector<std::string> to_args(const RunSpec& s);

// `ringsim run ARGS` parsed as the CLI parses it ("run" may lead); throws
// InputError for what the CLI would refuse.
RunSpec parse_run_args(const std::vector<std::string>& args);

}  // namespace ringsim::proc
