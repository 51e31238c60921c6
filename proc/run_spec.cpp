#include "proc/run_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "models/core/documents.hpp"
#include "models/core/errors.hpp"
#include "models/core/flag_types.hpp"
#include "models/core/parse.hpp"
#include "proc/unknown_flag.hpp"

namespace ringsim::proc {

namespace {

constexpr std::int64_t kMaxDevices = std::int64_t{1} << 20;  // 1M devices

template <typename E>
E choose(const std::string& flag, const std::string& text, const std::vector<std::string>& names) {
  const auto v = parse_choice(flag, text, names);
  return static_cast<E>(std::find(names.begin(), names.end(), v) - names.begin());
}

std::optional<int> opt_count(const std::string& flag, const std::string& text, std::int64_t lo,
                             std::int64_t hi) {
  if (text.empty()) return std::nullopt;
  return static_cast<int>(parse_count(flag, text, lo, hi));
}

std::optional<double> opt_real(const std::string& flag, const std::string& text, double lo,
                               double hi) {
  if (text.empty()) return std::nullopt;
  return parse_real(flag, text, lo, hi);
}

std::optional<double> opt_rate(const std::string& flag, const std::string& text, double lo,
                               double hi) {
  if (text.empty()) return std::nullopt;
  return parse_rate(flag, text, lo, hi);
}

// Shortest text that reads back as the same double (fmt's round-trip form).
std::string real_text(double v) {
  return fmt::format("{}", v);
}

void put(std::vector<std::string>& a, const char* flag, const std::string& v) {
  a.push_back(flag);
  a.push_back(v);
}
template <typename T>
void put_opt(std::vector<std::string>& a, const char* flag, const std::optional<T>& v) {
  if (!v) return;
  if constexpr (std::is_floating_point_v<T>)
    put(a, flag, real_text(*v));
  else
    put(a, flag, std::to_string(*v));
}
void put_text(std::vector<std::string>& a, const char* flag, const std::string& v) {
  if (!v.empty()) put(a, flag, v);
}

}  // namespace

const std::vector<std::string>& engine_names() {
  static const std::vector<std::string> n{"simgrid", "analytic"};
  return n;
}
std::string to_string(Engine e) {
  return engine_names()[static_cast<int>(e)];
}

// ---- flags ------------------------------------------------------------------

void add_model_flags(CLI::App* app, WorkloadFlags& f) {
  app->add_option("--model", f.model, "Transformer shape preset (see `ringsim hardware`)")
      ->capture_default_str()
      ->type_name(flag_type::kName);
  app->add_option("--d-model", f.d_model, "Custom shape: model width (overrides the preset)")
      ->type_name(flag_type::kInt);
  app->add_option("--heads", f.heads, "Custom shape: query heads")->type_name(flag_type::kInt);
  app->add_option("--kv-heads", f.kv_heads, "Custom shape: key/value heads (GQA; = heads for MHA)")
      ->type_name(flag_type::kInt);
  app->add_option("--head-dim", f.head_dim, "Custom shape: head dimension")
      ->type_name(flag_type::kInt);
  app->add_option("--ffn", f.ffn, "Custom shape: MLP hidden size")->type_name(flag_type::kInt);
  app->add_option("--mlp", f.mlp,
                  "Custom shape: the MLP, swiglu|geglu (gated: gate, up, down) or gelu|relu2 "
                  "(plain: up, down); default the preset's")
      ->type_name("NAME");
}

void add_workload_flags(CLI::App* app, WorkloadFlags& f, bool with_sizes) {
  if (with_sizes) {
    app->add_option("--devices", f.devices, "Devices in the ring, N (1 .. 1M)")
        ->capture_default_str()
        ->type_name(flag_type::kInt);
    app->add_option("--block", f.block,
                    "Tokens per device block, c (sequence = N x c; K/M suffix ok)")
        ->capture_default_str()
        ->type_name(flag_type::kTokens);
  }
  app->add_option("--layout", f.layout, "ring|striped|zigzag|ulysses|allgather|hybrid")
      ->capture_default_str()
      ->type_name(flag_type::kName);
  app->add_flag("--causal,!--no-causal", f.causal, "Causal mask (default) or full attention")
      ->option_text(flag_type::kCausalDefault);
  app->add_option("--pass", f.pass, "fwd|bwd|fwdbwd")
      ->capture_default_str()
      ->type_name(flag_type::kName);
  app->add_option("--dtype", f.dtype, "bf16|fp16|fp32 (bytes moved and peak FLOP/s)")
      ->capture_default_str()
      ->type_name(flag_type::kName);
  add_model_flags(app, f);
  app->add_option("--layers", f.layers,
                  "Transformer layers this run covers (default 1; with a custom shape also its "
                  "depth)")
      ->type_name(flag_type::kInt);
  app->add_option("--ulysses-degree", f.ulysses_degree,
                  "hybrid: head-parallel degree inside each group (default: largest power of two "
                  "dividing devices and KV heads within a node)")
      ->type_name(flag_type::kInt);
  app->add_option("--layer-kind", f.layer_kind,
                  "A chunked-attention model (Llama 4): global (default: a layer that attends to "
                  "the whole sequence) or chunked (one that attends inside its chunk, the chunks "
                  "timed as packed documents)")
      ->default_str("global")
      ->type_name(flag_type::kName);
  app->add_option(
         "--scope", f.scope,
         "attention|layer (layer adds projections and MLP, GEMM by GEMM as plan times them; a "
         "mixture-of-experts model's experts at their GEMM shapes)")
      ->capture_default_str()
      ->type_name(flag_type::kName);
  if (with_sizes) {
    app->add_option("--tp", f.tp,
                    "Tensor-parallel degree: GPUs of one node behind each CP rank (heads, KV heads "
                    "and MLP split N ways; --scope layer adds the TP collectives)")
        ->capture_default_str()
        ->type_name(flag_type::kInt);
    app->add_option("--sequence-parallel", f.sequence_parallel,
                    "on|off: with --tp, all-gathers + reduce-scatters (on) or all-reduces (off)")
        ->capture_default_str()
        ->type_name(flag_type::kOnOff);
    app->add_option("--ep", f.ep,
                    "Expert parallelism of a mixture-of-experts model with --scope layer: CP "
                    "ranks per EP group, dividing --devices and the experts (each expert split "
                    "over its TP group; dispatch and combine all-to-alls exposed)")
        ->capture_default_str()
        ->type_name(flag_type::kInt);
    app->add_option("--routing-seed", f.routing_seed,
                    "Seed of a mixture-of-experts model's routing draw (default 1): the slowest "
                    "EP rank's rows, which set the experts' time (and, with --tp, the routed "
                    "tokens gathered)")
        // Shown, and a sweep's journal counts `--routing-seed 1` as not given
        // (sweep/header.cpp flags_given); the flag stays unset when absent.
        ->default_str("1")
        ->type_name(flag_type::kInt);
    app->add_option("--documents", f.documents,
                    "Packed documents: lengths 8K,2K,512 (repeated), a file with one length per "
                    "line, cu_seqlens as FILE.npy (int32/int64 [0, l1, l1+l2, ...] as "
                    "flash_attn_varlen_func takes them), fixed:L, uniform:A..B, "
                    "lognormal:MEAN,SIGMA or dataset:NAME (a published length histogram: "
                    "wikipedia; drawn with --seed); "
                    "packed into N x block tokens, the last document cut to fit; attention "
                    "causal within each document")
        ->type_name(flag_type::kDocuments);
    app->add_option("--pack", f.pack,
                    "sequence (the layout splits the packed sequence) or document (each "
                    "document split into 2 x N chunks as TransformerEngine's THD does; ring: N "
                    "chunks; striped: striped per document)")
        ->capture_default_str()
        ->type_name(flag_type::kName);
  }
}

void add_hardware_flags(CLI::App* app, HardwareFlags& f) {
  app->add_option("--gpu", f.gpu, "Device from the catalog (default h100-sxm)")
      ->type_name(flag_type::kName);
  app->add_option("--cluster", f.cluster,
                  "Cluster preset: sets --gpu, --platform, --gpus-per-node, --intra, --inter")
      ->type_name(flag_type::kName);
  app->add_option("--platform", f.platform,
                  "flat|nodes|torus2d|torus3d|fattree (default: the device's)")
      ->type_name(flag_type::kName);
  app->add_option("--gpus-per-node", f.gpus_per_node, "GPUs per node on `nodes` (default 8)")
      ->type_name(flag_type::kInt);
  app->add_option("--intra", f.intra, "Interconnect inside a node (default nvlink4 for H100)")
      ->type_name(flag_type::kName);
  app->add_option("--inter", f.inter, "Interconnect between nodes (default ib-ndr for H100)")
      ->type_name(flag_type::kName);
  app->add_option("--flops", f.flops, "Override: device peak FLOP/s (e.g. 1e15)")
      ->type_name(flag_type::kFlops);
  app->add_option("--efficiency", f.efficiency,
                  "Override: fraction of peak the attention kernel reaches (0..1]")
      ->type_name(flag_type::kFraction);
  app->add_option("--bandwidth", f.bandwidth,
                  "Override: bytes/s per direction of every ring link (flat ring): 50e9, 50GB/s or "
                  "400Gbps (bits, divided by 8)")
      ->type_name(flag_type::kBytesPerS);
  app->add_option("--latency", f.latency, "Override: seconds per link hop")
      ->type_name(flag_type::kSeconds);
  app->add_option(
         "--power-limit", f.power_limit,
         "Power limit per device in W: every compute peak follows the clock at that "
         "power, the settled GEMM and attention shares included (docs/models.md, 'Hardware as "
         "deployed'; default: the device's as deployed, e.g. 500 on h100-sxm-96gb, "
         "else its rated TDP)")
      ->type_name(flag_type::kWatts);
  app->add_option("--hbm-bandwidth", f.hbm_bandwidth,
                  "Override: HBM bandwidth per device, bytes/s (beside --hbm)")
      ->type_name(flag_type::kBytesPerS);
  app->add_option("--nics-per-node", f.nics_per_node,
                  "nodes: NICs per node, dividing --gpus-per-node; the GPUs behind one NIC share "
                  "it (default: the cluster's, else one per GPU)")
      ->type_name(flag_type::kInt);
  app->add_option("--nvlink-domain", f.nvlink_domain,
                  "nodes: GPUs on one NVLink fabric, a multiple of --gpus-per-node (72 on GB200 "
                  "NVL72; default: the cluster's, else one node)")
      ->type_name(flag_type::kInt);
  app->add_option("--wraparound", f.wraparound,
                  "torus2d/torus3d: on (a full slice, opposite faces joined) or off (a partial "
                  "TPU slice, a mesh; default: the cluster's, else on)")
      ->type_name(flag_type::kOnOff);
  app->add_option("--oversubscription", f.oversubscription,
                  "nodes/fattree: R >= 1, the leaf-to-spine uplinks carry 1/R of the leaf's NIC "
                  "bandwidth (default: the cluster's, else 1)")
      ->type_name(flag_type::kFloat);
  app->add_option("--catalog", f.catalog, "Extra catalog JSON (adds or replaces entries by name)")
      ->type_name(flag_type::kFile);
  app->add_option("--set", f.sets,
                  "Move one assumption, repeatable: a catalog field SECTION.NAME.FIELD=VALUE "
                  "(devices.h100-sxm.gemm_efficiency=0.7, interconnects.ib-ndr.latency=5e-6, "
                  "kernels.fa3.rate_scale=0.9, kernels.fa2.ops.merge-out.bytes=20) or, for plan, "
                  "a framework's (frameworks.megatron.gap_s=2e-6); --explain lists the keys")
      ->type_name(flag_type::kKeyValue);
  app->add_option("--profile", f.profile,
                  "Kernel profile JSON (models/profiles): compute time from measurements")
      ->type_name(flag_type::kFile);
  app->add_option("--kernel", f.kernel,
                  "Attention implementation from the catalog: fa2, fa-triton, unfused, fa3, cudnn, "
                  "te-cudnn, pallas, ringattention-jax, "
                  "ringsim-cpu, ringsim-cuda, roofline (default: what PyTorch or JAX runs on the "
                  "device; roofline when --flops/--efficiency are given)")
      ->type_name(flag_type::kName);
  app->add_option("--query-chunk-size", f.query_chunk,
                  "--kernel ringattention-jax: query rows per chunk of the blockwise scan "
                  "(blockwise_kwargs query_chunk_size; default 512, the seed README's)")
      ->type_name(flag_type::kInt);
  app->add_option("--key-chunk-size", f.key_chunk,
                  "--kernel ringattention-jax: keys per chunk of the blockwise scan "
                  "(blockwise_kwargs key_chunk_size; default 512, the seed README's)")
      ->type_name(flag_type::kInt);
}

void add_sim_flags(CLI::App* app, SimFlags& f) {
  app->add_option("--engine", f.engine,
                  "simgrid (simulate the cluster; closed forms alongside) | analytic")
      ->capture_default_str()
      ->type_name(flag_type::kName);
  app->add_option("--trace", f.trace, "Write a Chrome trace (Perfetto) of the simulation to FILE")
      ->type_name(flag_type::kFile);
  app->add_option("--csv", f.csv, "Write one CSV row per device per step to FILE")
      ->type_name(flag_type::kFile);
  app->add_option("--network-model", f.network_model,
                  "exact (S/B + L on an idle link) | lv08 (SimGrid's TCP-calibrated model)")
      ->capture_default_str()
      ->type_name(flag_type::kName);
  app->add_option("--inter-topology", f.inter_topology,
                  "nodes platform: rail (one leaf switch per GPU rank; the default) | fattree "
                  "(leaves by node)")
      ->type_name(flag_type::kName);
  app->add_option("--torus-dims", f.torus_dims, "torus2d/torus3d: dimensions, e.g. 16x16 or 8x8x4")
      ->type_name(flag_type::kDims);
  app->add_option("--straggler", f.stragglers,
                  "DEVICE:FACTOR: that device computes FACTOR x slower (repeatable)")
      ->type_name(flag_type::kDeviceFactor);
  app->add_option("--degrade", f.degrades,
                  "LINK:FACTOR: divide a link's bandwidth (a link name such as nic7, or A-B for "
                  "the route between devices A and B; repeatable)")
      ->type_name(flag_type::kLinkFactor);
  app->add_option("--jitter", f.jitter, "SIGMA: lognormal noise (mean 1) on every compute")
      ->type_name(flag_type::kFloat);
  app->add_option("--seed", f.seed, "Seed for --jitter and --documents")
      ->capture_default_str()
      ->type_name(flag_type::kInt);
  app->add_flag("--progress", f.progress,
                "Show progress on stderr (default: when stderr is a terminal)");
  app->add_option("--symmetry", f.symmetry,
                  "auto|on|off: simulate one period of a uniform ring (auto: past 1024 devices)")
      ->capture_default_str()
      ->type_name(flag_type::kName);
  app->add_option("--recurrence", f.recurrence,
                  "auto|on|off: play a ring whose hops share no link as arithmetic, without "
                  "SimGrid's activities (auto: past 1024 devices)")
      ->capture_default_str()
      ->type_name(flag_type::kName);
  app->add_option("--overlap", f.overlap,
                  "full: a step's transfer runs during its compute (GPUs, RDMA) | none: it "
                  "starts when the compute ends (MPI over shared memory; `ringsim calibrate` "
                  "measures which)")
      ->capture_default_str()
      ->type_name(flag_type::kName);
  app->add_option("--dp", f.dp,
                  "Job mode: data-parallel replicas, each a CP ring of --devices ranks (of --tp "
                  "GPUs), all simulated at once on one platform")
      ->capture_default_str()
      ->type_name(flag_type::kInt);
  app->add_option("--fsdp", f.fsdp,
                  "on|off: with --dp > 1 and --scope layer, the layer's FSDP all-gathers and "
                  "reduce-scatter as flows (default on)")
      ->type_name(flag_type::kOnOff);
  app->add_option("--max-activities", f.max_activities,
                  "Size guard: most activities to simulate (default 2^29)")
      ->type_name(flag_type::kInt);
  app->add_option("--max-memory", f.max_memory,
                  "Size guard: most bytes of memory (K/M/G; default 80% of RAM)")
      ->type_name(flag_type::kBytes);
}

void add_run_flags(CLI::App* app, RunFlags& f) {
  add_workload_flags(app, f.w);
  add_hardware_flags(app, f.hw);
  add_sim_flags(app, f.sim);
  app->add_option("--calibration", f.calibration,
                  "Your calibrate --runs file: run's error band from your own measured runs "
                  "where 3 or more validate it (docs/own-cluster.md)")
      ->type_name(flag_type::kFile);
  app->add_option("--inputs-sha256", f.inputs_sha256,
                  "Refuse to run unless the catalog, --calibration, --documents and --profile "
                  "files hash to this (64 hex digits; a sweep passes it to each point, "
                  "docs/sweep.md)")
      ->type_name(flag_type::kHex);
  app->add_flag("--json", f.json, "Print one JSON object instead of the table");
}

// ---- text -> spec -------------------------------------------------------------

WorkloadSpec parse_workload(const WorkloadFlags& f, bool with_sizes) {
  WorkloadSpec s;
  if (with_sizes) {
    s.devices = parse_count("--devices", f.devices, 1, kMaxDevices);
    s.block = parse_count("--block", f.block, 1, kMaxTokens);
    if (s.block > kMaxTokens / s.devices)
      throw InputError(fmt::format(
          "--block: devices x block must be at most 2^40 tokens, got {} x {}", s.devices, s.block));
  }
  s.layout = parse_layout("--layout", f.layout);
  s.causal = f.causal;
  s.pass = parse_pass("--pass", f.pass);
  s.dtype = parse_dtype("--dtype", f.dtype);
  s.model = f.model;
  s.d_model = opt_count("--d-model", f.d_model, 1, 1 << 20);
  s.heads = opt_count("--heads", f.heads, 1, 4096);
  s.kv_heads = opt_count("--kv-heads", f.kv_heads, 1, 4096);
  s.head_dim = opt_count("--head-dim", f.head_dim, 1, 1024);
  s.ffn = opt_count("--ffn", f.ffn, 1, 1 << 22);
  if (!f.mlp.empty()) s.mlp = parse_choice("--mlp", f.mlp, mlp_names());
  s.layers = opt_count("--layers", f.layers, 1, 100000);
  s.scope = choose<Scope>("--scope", f.scope, {"attention", "layer"});
  if (!f.layer_kind.empty())
    s.chunked_layer =
        parse_choice("--layer-kind", f.layer_kind, {"global", "chunked"}) == "chunked";
  if (with_sizes) {
    // Whether it divides the node, heads and MLP is the workload's rule (validate()).
    s.tp = static_cast<int>(parse_count("--tp", f.tp, 1, 1024));
    s.sequence_parallel =
        parse_choice("--sequence-parallel", f.sequence_parallel, {"on", "off"}) == "on";
    // Whether the model has experts they divide is the workload's rule (resolve).
    s.ep = parse_count("--ep", f.ep, 1, 65536);
    if (!f.routing_seed.empty())
      s.routing_seed = static_cast<std::uint64_t>(parse_count(
          "--routing-seed", f.routing_seed, 0, std::numeric_limits<std::int64_t>::max()));
    if (!f.documents.empty()) {
      parse_documents("--documents", f.documents);  // refused here, drawn when resolved
      s.documents = f.documents;
    }
    s.pack = parse_pack("--pack", f.pack);
  }
  if (!f.ulysses_degree.empty()) {
    if (s.layout != Layout::Hybrid)
      throw InputError("--ulysses-degree: only applies to --layout hybrid");
    s.ulysses_degree = opt_count("--ulysses-degree", f.ulysses_degree, 1, 4096);
  }
  return s;
}

std::pair<std::string, std::string> parse_set(const std::string& text) {
  const auto eq = text.find('=');
  const auto key = text.substr(0, eq);
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size() ||
      key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789._-") != std::string::npos)
    throw InputError(fmt::format(
        "--set: expected KEY=VALUE with a dotted key (devices.h100-sxm.gemm_efficiency=0.7), "
        "got '{}'",
        text));
  return {key, text.substr(eq + 1)};
}

HardwareSpec parse_hardware(const HardwareFlags& f) {
  HardwareSpec s;
  s.gpu = f.gpu;
  s.cluster = f.cluster;
  s.intra = f.intra;
  s.inter = f.inter;
  if (!f.platform.empty()) s.platform = parse_platform("--platform", f.platform);
  s.gpus_per_node = opt_count("--gpus-per-node", f.gpus_per_node, 1, 1024);
  s.flops = opt_real("--flops", f.flops, 1e6, 1e18);
  s.efficiency = opt_real("--efficiency", f.efficiency, 1e-3, 1.0);
  s.bandwidth = opt_rate("--bandwidth", f.bandwidth, 1e3, 1e15);
  s.latency = opt_real("--latency", f.latency, 0, 1);
  s.power_limit = opt_real("--power-limit", f.power_limit, 1, 1e5);
  s.hbm_bandwidth = opt_rate("--hbm-bandwidth", f.hbm_bandwidth, 1e6, 1e15);
  s.nics_per_node = opt_count("--nics-per-node", f.nics_per_node, 1, 1024);
  s.nvlink_domain = opt_count("--nvlink-domain", f.nvlink_domain, 1, 1 << 20);
  s.oversubscription = opt_real("--oversubscription", f.oversubscription, 1, 64);
  if (!f.wraparound.empty())
    s.wraparound = parse_choice("--wraparound", f.wraparound, {"on", "off"}) == "on";
  s.catalog = f.catalog;
  s.profile = f.profile;
  s.kernel = f.kernel;
  s.query_chunk = opt_count("--query-chunk-size", f.query_chunk, 1, 1 << 24);
  s.key_chunk = opt_count("--key-chunk-size", f.key_chunk, 1, 1 << 24);
  for (const auto& kv : f.sets) s.sets.push_back(parse_set(kv));
  return s;
}

SimSpec parse_sim(const SimFlags& f, std::int64_t devices) {
  SimSpec s;
  s.engine = choose<Engine>("--engine", f.engine, engine_names());
  s.trace = f.trace;
  s.csv = f.csv;
  s.network =
      choose<sim::NetworkModel>("--network-model", f.network_model, sim::network_model_names());
  s.inter_topology_given = !f.inter_topology.empty();
  if (s.inter_topology_given)
    s.inter_topology = choose<sim::InterTopology>("--inter-topology", f.inter_topology,
                                                  sim::inter_topology_names());
  if (!f.torus_dims.empty()) s.torus_dims = sim::split_torus_dims(f.torus_dims);
  s.dp = parse_count("--dp", f.dp, 1, 65536);
  if (!f.fsdp.empty()) {
    if (s.dp == 1) throw InputError("--fsdp: only applies to job mode (--dp > 1)");
    s.fsdp = parse_choice("--fsdp", f.fsdp, {"on", "off"}) == "on";
  }
  // Faults name devices of the whole job: ring r's rank c is device r x devices + c.
  s.faults = parse_faults(f.stragglers, f.degrades, f.jitter, f.seed, devices * s.dp);
  s.progress = f.progress;
  s.symmetry = choose<sim::Symmetry>("--symmetry", f.symmetry, sim::symmetry_names());
  s.recurrence = choose<sim::Recurrence>("--recurrence", f.recurrence, sim::recurrence_names());
  s.overlap = parse_choice("--overlap", f.overlap, {"full", "none"}) == "full";
  if (!f.max_activities.empty())
    s.max_activities =
        static_cast<std::uint64_t>(parse_count("--max-activities", f.max_activities, 1, INT64_MAX));
  if (!f.max_memory.empty())
    s.max_memory =
        static_cast<std::uint64_t>(parse_count("--max-memory", f.max_memory, 1, INT64_MAX));
  if (s.engine == Engine::Analytic)
    for (const auto& [flag, set] : {std::pair{"--trace", !s.trace.empty()},
                                    {"--csv", !s.csv.empty()},
                                    {"--straggler/--degrade/--jitter", s.faults.any()},
                                    // job mode: the closed forms time one ring alone
                                    {"--dp", s.dp > 1}})
      if (set) throw InputError(fmt::format("{}: needs the simulator (--engine simgrid)", flag));
  return s;
}

sim::Faults parse_faults(const std::vector<std::string>& stragglers,
                         const std::vector<std::string>& degrades, const std::string& jitter,
                         const std::string& seed, std::int64_t devices) {
  sim::Faults x;
  for (const auto& s : stragglers) x.stragglers.push_back(sim::parse_straggler(s, devices));
  for (const auto& d : degrades) x.degrades.push_back(sim::parse_degrade(d));
  if (!jitter.empty()) x.jitter_sigma = parse_real("--jitter", jitter, 0, 1);
  x.seed = static_cast<std::uint64_t>(parse_count("--seed", seed, 0, INT64_MAX));
  return x;
}

RunSpec parse_run(const RunFlags& f) {
  RunSpec s;
  s.hardware = parse_hardware(f.hw);
  s.workload = parse_workload(f.w);
  s.sim = parse_sim(f.sim, s.workload.devices);
  s.workload.documents_seed = s.sim.faults.seed;  // --seed draws --documents too
  s.calibration = f.calibration;
  if (!f.inputs_sha256.empty() &&
      (f.inputs_sha256.size() != 64 ||
       f.inputs_sha256.find_first_not_of("0123456789abcdef") != std::string::npos))
    throw InputError(fmt::format("--inputs-sha256: expected 64 lowercase hex digits, got '{}'",
                                 one_line(f.inputs_sha256)));
  s.inputs_sha256 = f.inputs_sha256;
  s.json = f.json;
  return s;
}

// ---- spec -> flags -----------------------------------------------------------

std::vector<std::string> to_args(const WorkloadSpec& s) {
  const WorkloadSpec d;
  std::vector<std::string> a;
  put(a, "--devices", std::to_string(s.devices));
  put(a, "--block", std::to_string(s.block));
  if (s.layout != d.layout) put(a, "--layout", to_string(s.layout));
  if (!s.causal) a.push_back("--no-causal");
  if (s.pass != d.pass) put(a, "--pass", to_string(s.pass));
  if (s.dtype != d.dtype) put(a, "--dtype", to_string(s.dtype));
  if (s.model != d.model) put(a, "--model", s.model);
  put_opt(a, "--d-model", s.d_model);
  put_opt(a, "--heads", s.heads);
  put_opt(a, "--kv-heads", s.kv_heads);
  put_opt(a, "--head-dim", s.head_dim);
  put_opt(a, "--ffn", s.ffn);
  if (s.mlp) put(a, "--mlp", *s.mlp);
  put_opt(a, "--layers", s.layers);
  put_opt(a, "--ulysses-degree", s.ulysses_degree);
  if (s.scope != d.scope) put(a, "--scope", s.scope == Scope::Layer ? "layer" : "attention");
  if (s.chunked_layer) put(a, "--layer-kind", "chunked");
  if (s.tp != d.tp) put(a, "--tp", std::to_string(s.tp));
  if (!s.sequence_parallel) put(a, "--sequence-parallel", "off");
  if (s.ep != d.ep) put(a, "--ep", std::to_string(s.ep));
  if (s.routing_seed) put(a, "--routing-seed", std::to_string(*s.routing_seed));
  if (!s.documents.empty()) put(a, "--documents", s.documents);  // --seed: the SimSpec's
  if (s.pack != d.pack) put(a, "--pack", to_string(s.pack));
  return a;
}

std::vector<std::string> to_args(const HardwareSpec& s) {
  std::vector<std::string> a;
  put_text(a, "--gpu", s.gpu);
  put_text(a, "--cluster", s.cluster);
  if (s.platform) put(a, "--platform", to_string(*s.platform));
  put_opt(a, "--gpus-per-node", s.gpus_per_node);
  put_text(a, "--intra", s.intra);
  put_text(a, "--inter", s.inter);
  put_opt(a, "--flops", s.flops);
  put_opt(a, "--efficiency", s.efficiency);
  put_opt(a, "--bandwidth", s.bandwidth);
  put_opt(a, "--latency", s.latency);
  put_opt(a, "--power-limit", s.power_limit);
  put_opt(a, "--hbm-bandwidth", s.hbm_bandwidth);
  put_opt(a, "--nics-per-node", s.nics_per_node);
  put_opt(a, "--nvlink-domain", s.nvlink_domain);
  put_opt(a, "--oversubscription", s.oversubscription);
  if (s.wraparound) put(a, "--wraparound", *s.wraparound ? "on" : "off");
  put_text(a, "--catalog", s.catalog);
  put_text(a, "--profile", s.profile);
  put_text(a, "--kernel", s.kernel);
  put_opt(a, "--query-chunk-size", s.query_chunk);
  put_opt(a, "--key-chunk-size", s.key_chunk);
  for (const auto& [k, v] : s.sets) put(a, "--set", k + "=" + v);
  return a;
}

std::vector<std::string> to_args(const SimSpec& s) {
  const SimSpec d;
  std::vector<std::string> a;
  put(a, "--engine", to_string(s.engine));
  put_text(a, "--trace", s.trace);
  put_text(a, "--csv", s.csv);
  if (s.network != d.network) put(a, "--network-model", sim::to_string(s.network));
  if (s.inter_topology_given || s.inter_topology != d.inter_topology)
    put(a, "--inter-topology", sim::to_string(s.inter_topology));
  if (!s.torus_dims.empty()) {
    std::string t;
    for (int x : s.torus_dims) t += (t.empty() ? "" : "x") + std::to_string(x);
    put(a, "--torus-dims", t);
  }
  for (const auto& x : s.faults.stragglers)
    put(a, "--straggler", fmt::format("{}:{}", x.device, real_text(x.factor)));
  for (const auto& x : s.faults.degrades)
    put(a, "--degrade", fmt::format("{}:{}", x.link, real_text(x.factor)));
  if (s.faults.jitter_sigma != d.faults.jitter_sigma)
    put(a, "--jitter", real_text(s.faults.jitter_sigma));
  if (s.faults.seed != d.faults.seed) put(a, "--seed", std::to_string(s.faults.seed));
  if (s.symmetry != d.symmetry) put(a, "--symmetry", sim::to_string(s.symmetry));
  if (s.recurrence != d.recurrence) put(a, "--recurrence", sim::to_string(s.recurrence));
  if (!s.overlap) put(a, "--overlap", "none");
  if (s.dp != d.dp) put(a, "--dp", std::to_string(s.dp));
  if (s.fsdp) put(a, "--fsdp", *s.fsdp ? "on" : "off");
  put_opt(a, "--max-activities", s.max_activities);
  put_opt(a, "--max-memory", s.max_memory);
  if (s.progress) a.push_back("--progress");
  return a;
}

std::vector<std::string> to_args(const RunSpec& s) {
  std::vector<std::string> a{"run"};
  for (const auto& part : {to_args(s.workload), to_args(s.hardware), to_args(s.sim)})
    a.insert(a.end(), part.begin(), part.end());
  put_text(a, "--calibration", s.calibration);
  put_text(a, "--inputs-sha256", s.inputs_sha256);
  if (s.json) a.push_back("--json");
  return a;
}

RunSpec parse_run_args(const std::vector<std::string>& args) {
  CLI::App app{"ringsim run", "ringsim"};
  RunFlags f;
  add_run_flags(&app, f);
  std::vector<std::string> rest(args.begin(), args.end());
  if (!rest.empty() && rest.front() == "run") rest.erase(rest.begin());
  std::reverse(rest.begin(), rest.end());  // CLI11 takes the vector form in reverse
  try {
    app.parse(rest);
  } catch (const CLI::ExtrasError& e) {
    const auto line = unknown_flag_line(app.remaining(), {&app}, "ringsim run");
    throw InputError(line.empty() ? e.what() : line);
  } catch (const CLI::ParseError& e) {
    throw InputError(e.what());
  }
  return parse_run(f);
}

}  // namespace ringsim::proc
