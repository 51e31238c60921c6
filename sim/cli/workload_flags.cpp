#include "sim/cli/workload_flags.hpp"

#include <fmt/format.h>

#include "models/errors.hpp"
#include "models/parse.hpp"

namespace ringsim::cli {

namespace {
constexpr std::int64_t kMaxDevices = 1 << 20;               // 1M devices
constexpr std::int64_t kMaxTokens = std::int64_t{1} << 40;  // 2^40 tokens
}  // namespace

void add_model_flags(CLI::App* app, WorkloadFlags& f) {
  app->add_option("--model", f.model, "Transformer shape preset (see `ringsim hardware`)")
      ->capture_default_str();
  app->add_option("--d-model", f.d_model, "Custom shape: model width (overrides the preset)");
  app->add_option("--heads", f.heads, "Custom shape: query heads");
  app->add_option("--kv-heads", f.kv_heads, "Custom shape: key/value heads (GQA; = heads for MHA)");
  app->add_option("--head-dim", f.head_dim, "Custom shape: head dimension");
  app->add_option("--ffn", f.ffn, "Custom shape: MLP hidden size");
}

void add_workload_flags(CLI::App* app, WorkloadFlags& f, bool with_sizes) {
  if (with_sizes) {
    app->add_option("--devices", f.devices, "Devices in the ring, N (1 .. 1M)")
        ->capture_default_str();
    app->add_option("--block", f.block,
                    "Tokens per device block, c (sequence = N x c; K/M suffix ok)")
        ->capture_default_str();
  }
  app->add_option("--layout", f.layout, "ring|striped|zigzag|ulysses|allgather|hybrid")
      ->capture_default_str();
  app->add_flag("--causal,!--no-causal", f.causal, "Causal mask (default) or full attention");
  app->add_option("--pass", f.pass, "fwd|bwd|fwdbwd")->capture_default_str();
  app->add_option("--dtype", f.dtype, "bf16|fp16|fp32 (bytes moved and peak FLOP/s)")
      ->capture_default_str();
  add_model_flags(app, f);
  app->add_option(
      "--layers", f.layers,
      "Transformer layers this run covers (default 1; with a custom shape also its depth)");
  app->add_option("--ulysses-degree", f.ulysses_degree,
                  "hybrid: head-parallel degree inside each group (default: largest power of two "
                  "dividing devices and KV heads within a node)");
  app->add_option("--scope", f.scope,
                  "attention|layer (layer adds projections and MLP by roofline)")
      ->capture_default_str();
}

void add_hardware_flags(CLI::App* app, HardwareFlags& f) {
  app->add_option("--gpu", f.gpu, "Device from the catalog (default h100-sxm)");
  app->add_option("--cluster", f.cluster,
                  "Cluster preset: sets --gpu, --platform, --gpus-per-node, --intra, --inter");
  app->add_option("--platform", f.platform,
                  "flat|nodes|torus2d|torus3d|fattree (default: the device's)");
  app->add_option("--gpus-per-node", f.gpus_per_node, "GPUs per node on `nodes` (default 8)");
  app->add_option("--intra", f.intra, "Interconnect inside a node (default nvlink4 for H100)");
  app->add_option("--inter", f.inter, "Interconnect between nodes (default ib-ndr for H100)");
  app->add_option("--flops", f.flops, "Override: device peak FLOP/s (e.g. 1e15)");
  app->add_option("--efficiency", f.efficiency,
                  "Override: fraction of peak the attention kernel reaches (0..1]");
  app->add_option("--bandwidth", f.bandwidth,
                  "Override: bytes/s per direction of every ring link (flat ring)");
  app->add_option("--latency", f.latency, "Override: seconds per link hop");
  app->add_option("--catalog", f.catalog, "Extra catalog JSON (adds or replaces entries by name)");
  app->add_option("--profile", f.profile,
                  "Kernel profile JSON (models/profiles): compute time from measurements");
}

Catalog load_catalog(const HardwareFlags& f) {
  Catalog cat = Catalog::embedded();
  if (!f.catalog.empty()) cat.merge_file(f.catalog);
  return cat;
}

ModelShape resolve_shape(const WorkloadFlags& f) {
  ModelShape s = find_model("--model", f.model);
  const bool custom = !f.d_model.empty() || !f.heads.empty() || !f.kv_heads.empty() ||
                      !f.head_dim.empty() || !f.ffn.empty();
  if (!f.d_model.empty())
    s.d_model = static_cast<int>(parse_count("--d-model", f.d_model, 1, 1 << 20));
  if (!f.heads.empty()) s.heads = static_cast<int>(parse_count("--heads", f.heads, 1, 4096));
  if (!f.kv_heads.empty())
    s.kv_heads = static_cast<int>(parse_count("--kv-heads", f.kv_heads, 1, 4096));
  else if (!f.heads.empty() && s.kv_heads > s.heads)
    s.kv_heads = s.heads;
  if (!f.head_dim.empty())
    s.head_dim = static_cast<int>(parse_count("--head-dim", f.head_dim, 1, 1024));
  if (!f.ffn.empty()) s.ffn = static_cast<int>(parse_count("--ffn", f.ffn, 1, 1 << 22));
  if (custom) {
    s.name = "custom";
    s.source = "command-line flags";
  }
  if (s.kv_heads > s.heads || s.heads % s.kv_heads != 0)
    throw InputError(
        fmt::format("--kv-heads: must divide --heads ({}), got {}", s.heads, s.kv_heads));
  return s;
}

Hardware resolve_hardware(const HardwareFlags& f, const Catalog& cat, DType dtype) {
  Hardware hw;
  std::string gpu = f.gpu, platform = f.platform, intra = f.intra, inter = f.inter,
              gpn = f.gpus_per_node;
  if (!f.cluster.empty()) {
    const auto& c = cat.cluster(f.cluster);
    if (gpu.empty()) gpu = c.gpu;
    if (platform.empty()) platform = c.platform;
    if (intra.empty()) intra = c.intra;
    if (inter.empty()) inter = c.inter;
    if (gpn.empty()) gpn = std::to_string(c.gpus_per_node);
  }
  if (gpu.empty()) gpu = "h100-sxm";
  const auto& dev = cat.device(gpu);
  if (platform.empty()) platform = dev.default_platform;
  if (intra.empty()) intra = dev.default_intra;
  if (inter.empty()) inter = dev.default_inter;
  hw.gpu_name = dev.name;
  hw.gpu_display = dev.display;
  hw.flops = dev.peak(dtype);
  hw.efficiency = dev.attention_efficiency;
  hw.hbm_bytes = dev.hbm_bytes;
  hw.hbm_bandwidth = dev.hbm_bandwidth;
  hw.platform = parse_platform("--platform", platform);
  hw.gpus_per_node = gpn.empty() ? dev.default_gpus_per_node
                                 : static_cast<int>(parse_count("--gpus-per-node", gpn, 1, 1024));
  const auto& a = cat.interconnect(intra);
  const auto& b = cat.interconnect(inter);
  hw.intra_name = a.name;
  hw.inter_name = b.name;
  hw.intra_bw = a.bandwidth;
  hw.intra_lat = a.latency;
  hw.inter_bw = b.bandwidth;
  hw.inter_lat = b.latency;
  if (!f.flops.empty()) hw.flops = parse_real("--flops", f.flops, 1e6, 1e18);
  if (!f.efficiency.empty()) hw.efficiency = parse_real("--efficiency", f.efficiency, 1e-3, 1.0);
  if (!f.bandwidth.empty()) {
    const double bw = parse_real("--bandwidth", f.bandwidth, 1e3, 1e15);
    hw.bandwidth_override = true;
    hw.intra_bw = hw.inter_bw = bw;
    if (f.platform.empty()) hw.platform = Platform::Flat;
  }
  if (!f.latency.empty()) {
    const double l = parse_real("--latency", f.latency, 0, 1);
    hw.intra_lat = hw.inter_lat = l;
    if (f.bandwidth.empty()) {
      hw.bandwidth_override = true;
      hw.inter_bw = hw.intra_bw =
          hw.platform == Platform::Nodes ? std::min(hw.intra_bw, hw.inter_bw) : hw.intra_bw;
    }
  }
  if (hw.flops <= 0)
    throw InputError(
        fmt::format("--dtype: {} is not supported by {} (the catalog lists no peak for it)",
                    to_string(dtype), hw.gpu_name));
  return hw;
}

std::unique_ptr<ComputeModel> make_compute_model(const HardwareFlags& f, const Hardware& hw,
                                                 DType dtype) {
  if (f.profile.empty()) return std::make_unique<RooflineModel>(hw.effective_flops());
  return std::make_unique<ProfileModel>(read_profile(f.profile), to_string(dtype),
                                        "--profile " + f.profile);
}

Workload resolve_workload(const WorkloadFlags& f, const Hardware& hw) {
  Workload w;
  w.devices = parse_count("--devices", f.devices, 1, kMaxDevices);
  w.block = parse_count("--block", f.block, 1, kMaxTokens);
  if (w.block > kMaxTokens / w.devices)
    throw InputError(fmt::format(
        "--block: devices x block must be at most 2^40 tokens, got {} x {}", w.devices, w.block));
  w.layout = parse_layout("--layout", f.layout);
  w.causal = f.causal;
  w.pass = parse_pass("--pass", f.pass);
  w.dtype = parse_dtype("--dtype", f.dtype);
  w.shape = resolve_shape(f);
  if (!f.layers.empty()) {
    w.layers = static_cast<int>(parse_count("--layers", f.layers, 1, 100000));
    if (w.shape.name == "custom") w.shape.layers = w.layers;
  }
  w.scope = parse_choice("--scope", f.scope, {"attention", "layer"}) == "layer" ? Scope::Layer
                                                                                : Scope::Attention;
  w.batch = parse_count("--batch", f.batch, 1, 1 << 20);
  if (w.layout == Layout::Hybrid) {
    w.ulysses_degree =
        f.ulysses_degree.empty()
            ? auto_ulysses_degree(w.devices, w.shape.kv_heads, hw.gpus_per_node)
            : static_cast<int>(parse_count("--ulysses-degree", f.ulysses_degree, 1, 4096));
  } else if (!f.ulysses_degree.empty()) {
    throw InputError("--ulysses-degree: only applies to --layout hybrid");
  }
  validate(w, hw);
  return w;
}

}  // namespace ringsim::cli
