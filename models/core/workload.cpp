#include "models/core/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/core/suggest.hpp"
#include "models/core/torus.hpp"

namespace ringsim {
namespace embedded {
extern const char* const models_json;
}

namespace {
template <typename E>
E parse_enum(const std::string& flag, const std::string& s, const std::vector<std::string>& names) {
  auto v = parse_choice(flag, s, names);
  return static_cast<E>(std::find(names.begin(), names.end(), v) - names.begin());
}
}  // namespace

const std::vector<std::string>& layout_names() {
  static const std::vector<std::string> n{"ring",    "striped",   "zigzag",
                                          "ulysses", "allgather", "hybrid"};
  return n;
}
const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> n{"fwd", "bwd", "fwdbwd"};
  return n;
}
const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> n{"bf16", "fp16", "fp32"};
  return n;
}
const std::vector<std::string>& platform_names() {
  static const std::vector<std::string> n{"flat", "nodes", "torus2d", "torus3d", "fattree"};
  return n;
}
const std::vector<std::string>& pack_names() {
  static const std::vector<std::string> n{"sequence", "document"};
  return n;
}
std::string to_string(Pack p) {
  return pack_names()[static_cast<int>(p)];
}
Pack parse_pack(const std::string& f, const std::string& s) {
  return parse_enum<Pack>(f, s, pack_names());
}
std::string to_string(Layout l) {
  return layout_names()[static_cast<int>(l)];
}
std::string to_string(Pass p) {
  return pass_names()[static_cast<int>(p)];
}
std::string to_string(DType d) {
  return dtype_names()[static_cast<int>(d)];
}
std::string to_string(Platform p) {
  return platform_names()[static_cast<int>(p)];
}
Layout parse_layout(const std::string& f, const std::string& s) {
  return parse_enum<Layout>(f, s, layout_names());
}
Pass parse_pass(const std::string& f, const std::string& s) {
  return parse_enum<Pass>(f, s, pass_names());
}
DType parse_dtype(const std::string& f, const std::string& s) {
  return parse_enum<DType>(f, s, dtype_names());
}
Platform parse_platform(const std::string& f, const std::string& s) {
  return parse_enum<Platform>(f, s, platform_names());
}
int dtype_bytes(DType d) {
  return d == DType::FP32 ? 4 : 2;
}

const std::vector<std::string>& mlp_names() {
  static const std::vector<std::string> names{"swiglu", "geglu", "gelu", "relu2"};
  return names;
}

bool mlp_gated(const ModelShape& s) {
  return s.mlp == "swiglu" || s.mlp == "geglu";
}

double residual_stream_bytes_per_token(const ModelShape& s) {
  return 20.0 * s.d_model;
}

double pointwise_bytes_per_token(const ModelShape& s) {
  const double d = s.head_dim, H = s.heads, kvh = s.kv_heads, F = s.ffn;
  return residual_stream_bytes_per_token(s) + 4 * d * (H + kvh) + (mlp_gated(s) ? 6 : 4) * F;
}

double tp_rank_pointwise_bytes(double all, double residual, double tp, bool sequence_parallel) {
  return sequence_parallel ? all / tp : (all - residual) / tp + residual;
}

int mlp_up_matrices(const ModelShape& s) {
  return mlp_gated(s) ? 2 : 1;
}

namespace {
// models.json "mla": DeepSeek's multi-head latent attention dimensions.
void read_mla(const nlohmann::json& m, ModelShape& s) {
  s.q_lora_rank = m.value("q_lora_rank", 0);
  s.kv_lora_rank = m.at("kv_lora_rank");
  s.qk_rope_head_dim = m.at("qk_rope_head_dim");
  s.qk_head_dim = m.at("qk_head_dim");
  s.v_head_dim = m.at("v_head_dim");
  if (s.kv_lora_rank < 1 || s.qk_rope_head_dim < 1 || s.qk_head_dim <= s.qk_rope_head_dim ||
      s.v_head_dim < 1 || 2 * s.head_dim != s.qk_head_dim + s.v_head_dim || s.kv_heads != s.heads)
    throw std::logic_error("models.json: bad mla of " + s.name +
                           " (head_dim must be the mean of qk_head_dim and v_head_dim)");
}
}  // namespace

namespace {

// A MoE model's layers' mean MLP width (what activations and pointwise see):
// the routed layers' (top-k + shared) x expert_ffn and the dense ones' dense_ffn.
int mean_mlp_width(const ModelShape& s) {
  const auto routed = static_cast<std::int64_t>(s.layers - s.dense_layers) *
                      (s.experts_per_token + s.shared_experts) * s.expert_ffn;
  return static_cast<int>((routed + std::int64_t{s.dense_layers} * s.dense_ffn) / s.layers);
}

}  // namespace

void set_layers(ModelShape& s, int n) {
  const int was = s.layers;
  s.layers = std::max(1, n);
  if (!is_moe(s) || s.dense_layers == 0 || was <= 0) return;
  const int dense =
      static_cast<int>(std::lround(static_cast<double>(s.dense_layers) * s.layers / was));
  s.dense_layers = std::clamp(dense, 0, s.layers - 1);
  s.ffn = mean_mlp_width(s);
}

const std::vector<ModelShape>& model_shapes() {
  static const std::vector<ModelShape> shapes = [] {
    std::vector<ModelShape> out;
    auto j = nlohmann::json::parse(embedded::models_json);
    for (const auto& m : j.at("models")) {
      ModelShape s;
      s.name = m.at("name");
      s.layers = m.at("layers");
      s.d_model = m.at("d_model");
      s.heads = m.at("heads");
      s.kv_heads = m.at("kv_heads");
      s.head_dim = m.at("head_dim");
      s.experts = m.value("experts", 0);
      if (s.experts > 0) {
        s.experts_per_token = m.at("experts_per_token");
        s.shared_experts = m.value("shared_experts", 0);
        s.expert_ffn = m.at("expert_ffn");
        if (s.experts_per_token < 1 || s.experts_per_token > s.experts || s.expert_ffn < 1)
          throw std::logic_error("models.json: bad experts of " + s.name);
        s.ffn = (s.experts_per_token + s.shared_experts) * s.expert_ffn;
        s.expert_groups = m.value("expert_groups", 0);
        s.groups_per_token = m.value("groups_per_token", 0);
        if ((s.expert_groups > 0) != (s.groups_per_token > 0) ||
            (s.expert_groups > 0 &&
             (s.experts % s.expert_groups != 0 || s.groups_per_token > s.expert_groups ||
              s.groups_per_token * (s.experts / s.expert_groups) < s.experts_per_token)))
          throw std::logic_error("models.json: bad expert groups of " + s.name);
        s.dense_layers = m.value("dense_layers", 0);
        if (s.dense_layers > 0) {
          s.dense_ffn = m.at("dense_ffn");
          if (s.dense_layers >= s.layers || s.dense_ffn < 1)
            throw std::logic_error("models.json: bad dense layers of " + s.name);
          s.ffn = mean_mlp_width(s);
        }
      } else {
        s.ffn = m.at("ffn");
      }
      if (m.contains("mla")) read_mla(m.at("mla"), s);
      s.attention_chunk = m.value("attention_chunk", 0);
      s.global_every = m.value("global_every", 0);
      if (s.attention_chunk < 0 || s.global_every < 0 ||
          (s.global_every > 0 && (s.attention_chunk == 0 || s.global_every > s.layers)))
        throw std::logic_error("models.json: bad chunked attention of " + s.name);
      s.vocab = m.at("vocab");
      s.mlp = m.value("mlp", std::string("swiglu"));
      if (std::find(mlp_names().begin(), mlp_names().end(), s.mlp) == mlp_names().end())
        throw std::logic_error("models.json: unknown mlp '" + s.mlp + "' of " + s.name);
      s.source = m.at("source");
      s.global_batch_tokens = m.value("global_batch_tokens", std::int64_t{0});
      s.global_batch_source = m.value("global_batch_source", std::string());
      out.push_back(s);
    }
    return out;
  }();
  return shapes;
}

const ModelShape& find_model(const std::string& flag, const std::string& name) {
  std::vector<std::string> names;
  for (const auto& m : model_shapes()) {
    if (m.name == name) return m;
    names.push_back(m.name);
  }
  throw InputError(
      fmt::format("{}: unknown model '{}';{} choose one of: {} (or give --d-model --heads "
                  "--kv-heads --head-dim --ffn)",
                  flag, name, did_you_mean(name, names), join(names, ", ")));
}

std::int64_t Workload::ulysses() const {
  if (layout == Layout::Ulysses) return devices;
  if (layout == Layout::Hybrid) return ulysses_degree;
  return 1;
}

int auto_ulysses_degree(std::int64_t devices, int kv_heads, int gpus_per_node) {
  int u = 1;
  while (devices % (2 * u) == 0 && kv_heads % (2 * u) == 0 && 2 * u <= gpus_per_node) u *= 2;
  return u;
}

int Hardware::gpus_per_nic() const {
  return nics_per_node > 0 ? std::max(1, gpus_per_node / nics_per_node) : 1;
}

int Hardware::nvlink_group() const {
  return std::max(nvlink_domain, gpus_per_node);
}

bool Hardware::ring_crosses_spine(std::int64_t devices, std::int64_t stride) const {
  // sim/topology.cpp's leaves: one per NIC rail and group of leaf_ports nodes
  // (rail), or one per leaf_ports NICs in order (fat-tree; the fattree
  // platform has one NIC per device). The ring's closing hop (last device ->
  // device 0) lands on leaf 0 from the last leaf, so any second leaf is
  // crossed; on rails, a hop that changes NIC rank changes leaf too.
  if (platform == Platform::FatTree) return devices > leaf_ports;
  if (platform != Platform::Nodes || devices <= nvlink_group()) return false;
  const std::int64_t g = gpus_per_node;
  const std::int64_t k = nics_per_node > 0 ? nics_per_node : g;
  const std::int64_t nodes = (devices + g - 1) / g;
  if (inter_fattree) return nodes * k > leaf_ports;
  const bool changes_rail = k > 1 && stride % g != 0;
  return changes_rail || nodes > leaf_ports;
}

double GemmFill::factor(double k) const {
  if (fill_k <= 0 || best_k <= 0 || k >= best_k) return 1.0;
  return (k / (k + fill_k)) / (best_k / (best_k + fill_k));
}

double Hardware::ring_bandwidth(std::int64_t devices, std::int64_t stride) const {
  if (bandwidth_override || platform == Platform::Flat) return intra_bw;
  if (platform == Platform::Torus2D || platform == Platform::Torus3D) return intra_bw;
  // Across the spine a flow gets the uplink's 1/R of a NIC (docs/models.md).
  const double spine = ring_crosses_spine(devices, stride) ? oversubscription : 1.0;
  if (platform == Platform::FatTree) return inter_bw / spine;
  // nodes: a ring that leaves the NVLink domain crosses a NIC once per domain
  // boundary; `stride` flows leave at once, and those behind one NIC share it
  // (and, routed by destination port, the same uplink).
  if (devices <= nvlink_group()) return intra_bw;
  const double sharing = static_cast<double>(
      std::max<std::int64_t>(1, std::min<std::int64_t>(stride, gpus_per_nic())));
  return std::min(intra_bw, inter_bw / (sharing * spine));
}

double Hardware::ring_latency(std::int64_t devices) const {
  if (bandwidth_override || platform == Platform::Flat) return intra_lat;
  if (platform == Platform::Torus2D || platform == Platform::Torus3D) {
    // The slowest hop is the ring's closing one: one wrap-around link when
    // the snake ends next to its start, several across a mesh (no wrap-around)
    // or an odd torus. Every link carries one transfer each way, so only the
    // latency grows.
    const int rank = platform == Platform::Torus2D ? 2 : 3;
    std::int64_t n = 1;
    for (int d : torus_dims) n *= d;
    const auto dims =
        !torus_dims.empty() && n == devices ? torus_dims : auto_torus_dims(devices, rank);
    return closing_hops(dims, torus_wraparound) * intra_lat;
  }
  if (platform == Platform::FatTree) return inter_lat;
  return devices > nvlink_group() ? std::max(intra_lat, inter_lat) : intra_lat;
}

std::string Hardware::ring_link_kind(std::int64_t devices) const {
  if (bandwidth_override || platform == Platform::Flat) return intra_kind;
  if (platform == Platform::Torus2D || platform == Platform::Torus3D) return intra_kind;
  if (platform == Platform::FatTree) return inter_kind;
  if (devices <= nvlink_group()) return intra_kind;
  const double spine = ring_crosses_spine(devices) ? oversubscription : 1.0;
  return inter_bw / spine <= intra_bw ? inter_kind : intra_kind;
}

std::string Hardware::peak_text() const {
  // A power-limited device says so: its peak follows the clock at that power.
  const bool capped = clock_scale != 1 && power_limit_w > 0;
  return fmt::format("{:.0f} TFLOP/s peak{}", flops / 1e12,
                     capped ? fmt::format(" at {:.0f} W", power_limit_w) : std::string());
}

std::string Hardware::describe() const {
  if (bandwidth_override)
    return fmt::format("{} ({}), ring links {:.1f} GB/s/dir", gpu_name, peak_text(),
                       intra_bw / 1e9);
  if (platform == Platform::Nodes)
    return fmt::format("{} ({}), {} per node on {}, nodes on {}", gpu_name, peak_text(),
                       gpus_per_node, intra_name, inter_name);
  const bool mesh =
      !torus_wraparound && (platform == Platform::Torus2D || platform == Platform::Torus3D);
  return fmt::format("{} ({}), {} platform{} on {}", gpu_name, peak_text(), to_string(platform),
                     mesh ? " without wrap-around (a mesh)" : "", intra_name);
}

std::vector<int> passes_of(const Workload& w) {
  std::vector<int> p;
  if (w.pass != Pass::Bwd) p.push_back(0);
  if (w.pass != Pass::Fwd) p.push_back(1);
  return p;
}

Workload tp_rank_workload(const Workload& w) {
  Workload l = w;
  if (w.tp > 1) {
    l.shape.heads = w.shape.heads / w.tp;
    l.shape.kv_heads = w.shape.kv_heads / w.tp;
    l.shape.ffn = w.shape.ffn / w.tp;
  }
  if (l.expert_tp <= 0) l.expert_tp = std::max(1, w.tp);
  if (w.tp > 1) l.residual_shard = w.sequence_parallel ? w.tp : 1;
  l.tp = 1;
  return l;
}

Hardware group_hardware(const Hardware& hw, std::int64_t tp) {
  Hardware g = hw;
  if (tp > 1) {
    g.gpus_per_node = static_cast<int>(std::max<std::int64_t>(1, hw.gpus_per_node / tp));
    // One CP rank per TP group: the node, its NICs and the NVLink domain hold
    // 1/tp as many of them (GPUs per NIC kept where it divides).
    if (hw.nvlink_domain > 0)
      g.nvlink_domain = static_cast<int>(std::max<std::int64_t>(1, hw.nvlink_domain / tp));
    if (hw.nics_per_node > 0) {
      const auto k = std::max<std::int64_t>(1, hw.nics_per_node / tp);
      g.nics_per_node = g.gpus_per_node % k == 0 ? static_cast<int>(k) : 0;
    }
  }
  return g;
}

namespace {
// --tp: a TP group lives inside one node and splits heads, KV heads and the
// MLP evenly (Megatron's column/row split needs whole heads per GPU).
void validate_tp(const Workload& w, const Hardware& hw) {
  const auto& s = w.shape;
  if (w.tp < 1) throw InputError(fmt::format("--tp: must be at least 1, got {}", w.tp));
  if (w.tp == 1) return;
  if (hw.platform != Platform::Nodes && hw.platform != Platform::Flat)
    throw InputError(fmt::format(
        "--tp: needs GPUs grouped in nodes (--platform nodes or flat), got --platform {}",
        to_string(hw.platform)));
  if (hw.gpus_per_node % w.tp != 0)
    throw InputError(
        fmt::format("--tp: must divide the GPUs per node ({}), got {}", hw.gpus_per_node, w.tp));
  if (s.heads % w.tp != 0 || s.kv_heads % w.tp != 0)
    throw InputError(fmt::format("--tp: must divide the heads ({}) and KV heads ({}), got {}",
                                 s.heads, s.kv_heads, w.tp));
  if (s.ffn % w.tp != 0)
    throw InputError(
        fmt::format("--tp: must divide the MLP width (--ffn {}), got {}", s.ffn, w.tp));
}
}  // namespace

void validate(const Workload& w, const Hardware& hw) {
  validate_tp(w, hw);
  // The layout's rules hold for what one GPU of a TP group runs.
  if (w.tp > 1) return validate(tp_rank_workload(w), group_hardware(hw, w.tp));
  const auto& s = w.shape;
  if (s.heads % s.kv_heads != 0)
    throw InputError(
        fmt::format("--kv-heads: must divide --heads ({}), got {}", s.heads, s.kv_heads));
  // allgather shards its queries as zigzag chunks too (models/core/work.hpp); an odd
  // block would drop a token from every count.
  if ((w.layout == Layout::Zigzag || w.layout == Layout::Allgather) && w.block % 2 != 0)
    throw InputError(
        fmt::format("--block: {} splits each block into two chunks, so it must be even, got {}",
                    to_string(w.layout), w.block));
  if (w.layout == Layout::Ulysses) {
    if (w.devices > s.kv_heads || s.kv_heads % w.devices != 0)
      throw InputError(
          fmt::format("--devices: ulysses needs the degree to divide the KV heads ({}), got {}; "
                      "use hybrid for more devices",
                      s.kv_heads, w.devices));
  }
  if (w.layout == Layout::Hybrid) {
    const auto u = w.ulysses_degree;
    if (u < 1 || w.devices % u != 0 || s.kv_heads % u != 0)
      throw InputError(
          fmt::format("--ulysses-degree: must divide --devices ({}) and the KV heads ({}), got {}",
                      w.devices, s.kv_heads, u));
    if ((w.block * u) % 2 != 0)
      throw InputError(fmt::format(
          "--block: hybrid's zigzag ring needs an even group block, got {} x {}", w.block, u));
  }
  if (hw.flops <= 0)
    throw InputError(
        fmt::format("--dtype: {} is not supported by {} (no peak FLOP/s in the catalog)",
                    to_string(w.dtype), hw.gpu_name));
}

}  // namespace ringsim
