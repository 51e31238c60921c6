#include "proc/resolve.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/analytic/moe.hpp"
#include "models/core/documents.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/plan/basics.hpp"

namespace ringsim::proc {

Catalog load_catalog(const HardwareSpec& h, bool framework_keys) {
  Catalog cat = Catalog::embedded();
  if (!h.catalog.empty()) cat.merge_file(h.catalog);
  for (const auto& [key, value] : h.sets) {
    if (key.rfind("frameworks.", 0) == 0) {
      if (!framework_keys)
        throw InputError(fmt::format(
            "--set {}: a framework's rules apply to training plans (ringsim plan without "
            "--inference); this command models the layout and kernel it is given",
            key));
      continue;
    }
    cat.set(key, value);
  }
  return cat;
}

namespace {

// run's attention kernels take one head width and a global causal mask; its
// MoE layer needs --scope layer, and --ep groups of CP ranks holding whole
// shares of the experts.
void check_run_model(const WorkloadSpec& s, const Workload& w) {
  const auto& m = w.shape;
  if (s.chunked_layer && m.attention_chunk <= 0)
    throw InputError(fmt::format(
        "--layer-kind: {} attends to the whole sequence in every layer; chunked applies to a "
        "chunked-attention model (llama4-scout, llama4-maverick)",
        m.name));
  if (s.chunked_layer && !s.documents.empty())
    throw InputError(
        "--documents: a chunked layer's documents are its chunks (--layer-kind chunked); give one "
        "or the other");
  if (!is_moe(m)) {
    if (s.ep > 1) throw InputError(not_moe_message("--ep", m));
    if (s.routing_seed) throw InputError(not_moe_message("--routing-seed", m));
    return;
  }
  for (const auto& [flag, given] :
       {std::pair{"--ep", s.ep > 1}, {"--routing-seed", s.routing_seed.has_value()}})
    if (given && w.scope != Scope::Layer)
      throw InputError(fmt::format(
          "{}: the experts are the MLP of a layer; give --scope layer (--scope attention runs "
          "attention alone)",
          flag));
  if (w.tp > 1 && !w.sequence_parallel && w.scope == Scope::Layer)
    throw InputError(
        "--sequence-parallel off: a mixture-of-experts layer with --tp above 1 runs sequence "
        "parallel (Megatron-LM: \"When using MoE and tensor parallelism, sequence parallelism "
        "must be used.\")");
  if (m.experts % s.ep != 0)
    throw InputError(
        fmt::format("--ep: must divide the {} experts of {}, got {}", m.experts, m.name, s.ep));
  if (w.devices % s.ep != 0)
    throw InputError(fmt::format("--ep: EP groups of CP ranks; must divide --devices ({}), got {}",
                                 w.devices, s.ep));
}

}  // namespace

ModelShape resolve_shape(const WorkloadSpec& w) {
  ModelShape s = find_model("--model", w.model);
  const bool custom =
      w.d_model || w.heads || w.kv_heads || w.head_dim || w.ffn || (w.mlp && *w.mlp != s.mlp);
  if (custom && is_moe(s))
    throw InputError(fmt::format(
        "--model {}: a mixture-of-experts model keeps its own shape; --d-model, --heads, "
        "--kv-heads, --head-dim, --ffn and --mlp shape a dense model",
        s.name));
  if (w.d_model) s.d_model = *w.d_model;
  if (w.heads) s.heads = *w.heads;
  if (w.kv_heads)
    s.kv_heads = *w.kv_heads;
  else if (w.heads && s.kv_heads > s.heads)
    s.kv_heads = s.heads;
  if (w.head_dim) s.head_dim = *w.head_dim;
  if (w.ffn) s.ffn = *w.ffn;
  if (w.mlp) s.mlp = *w.mlp;
  if (custom) {
    s.name = "custom";
    s.source = "command-line flags";
  }
  if (s.kv_heads > s.heads || s.heads % s.kv_heads != 0)
    throw InputError(
        fmt::format("--kv-heads: must divide --heads ({}), got {}", s.heads, s.kv_heads));
  return s;
}

PlatformFlags platform_flags(Platform p) {
  const bool torus = p == Platform::Torus2D || p == Platform::Torus3D;
  const bool nodes = p == Platform::Nodes;
  return {nodes || torus,
          p != Platform::FatTree,
          nodes || p == Platform::FatTree,
          nodes,
          nodes,
          nodes || p == Platform::FatTree,
          torus};
}

void refuse_flags_not_on(const HardwareSpec& h, Platform p) {
  const auto has = platform_flags(p);
  if (h.gpus_per_node && !has.gpus_per_node)
    throw InputError(fmt::format(
        "--gpus-per-node: the {} platform has no nodes; use --platform nodes, torus2d or torus3d "
        "(for hybrid's head-parallel group, --ulysses-degree)",
        to_string(p)));
  if (!h.inter.empty() && !has.inter)
    throw InputError(
        fmt::format("--inter: the {} platform has one kind of link (--intra, or --bandwidth); use "
                    "--platform nodes for a second",
                    to_string(p)));
  if (h.nics_per_node && !has.nics)
    throw InputError(
        fmt::format("--nics-per-node: the {} platform has no nodes with NICs; use --platform nodes",
                    to_string(p)));
  if (h.nvlink_domain && !has.nvlink_domain)
    throw InputError(
        fmt::format("--nvlink-domain: the {} platform has no NVLink switch; use --platform nodes",
                    to_string(p)));
  if (h.wraparound && !has.wraparound)
    throw InputError(
        fmt::format("--wraparound: the {} platform is no torus; use --platform torus2d or torus3d",
                    to_string(p)));
  if (h.oversubscription && !has.oversubscription)
    throw InputError(fmt::format(
        "--oversubscription: the {} platform has no leaf/spine network; use --platform nodes or "
        "fattree",
        to_string(p)));
  if (!h.intra.empty() && !has.intra)
    throw InputError(
        "--intra: the fattree platform has one kind of link, the network's (--inter, or "
        "--bandwidth); use --platform nodes for NVLink inside a node");
}

// The power the device runs at (docs/models.md, "Hardware as deployed"):
// --power-limit, else the device's as deployed, else its rated power; 0 for a
// device without a power model (it runs at its rated peak).
double deployed_watts(const HardwareSpec& h, const Device& dev) {
  const auto& pm = dev.power;
  if (!h.power_limit) return dev.deployed_power_w();
  if (!pm.present())
    throw InputError(fmt::format(
        "--power-limit: the catalog has no power model for {}; drop it (the rated peak is used)",
        dev.name));
  if (*h.power_limit > pm.tdp_w || *h.power_limit <= pm.static_w)
    throw InputError(
        fmt::format("--power-limit: {} runs between {:g} W (exclusive) and its "
                    "rated {:g} W, got {:g}",
                    dev.name, pm.static_w, pm.tdp_w, *h.power_limit));
  return *h.power_limit;
}

Hardware resolve_hardware(const HardwareSpec& h, const Catalog& cat, DType dtype) {
  Hardware hw;
  std::string gpu = h.gpu, intra = h.intra, inter = h.inter;
  std::optional<Platform> platform = h.platform;
  std::optional<int> gpn = h.gpus_per_node;
  if (!h.cluster.empty()) {
    const auto& c = cat.cluster(h.cluster);
    hw.nics_per_node = c.nics_per_node;
    hw.nvlink_domain = c.nvlink_domain;
    hw.oversubscription = c.oversubscription;
    hw.inter_fattree = c.inter_topology == "fattree";
    hw.torus_dims = c.slice;
    hw.torus_wraparound = c.wraparound;
    if (gpu.empty()) gpu = c.gpu;
    if (!platform) platform = parse_platform("--cluster " + c.name, c.platform);
    if (intra.empty()) intra = c.intra;
    if (inter.empty()) inter = c.inter;
    if (!gpn) gpn = c.gpus_per_node;
  }
  if (gpu.empty()) gpu = "h100-sxm";
  const auto& dev = cat.device(gpu);
  if (intra.empty()) intra = dev.default_intra;
  if (inter.empty()) inter = dev.default_inter;
  dev.deploy(hw, dtype, deployed_watts(h, dev));
  if (h.hbm_bandwidth) hw.hbm_bandwidth = *h.hbm_bandwidth;
  hw.platform = platform ? *platform : parse_platform("--platform", dev.default_platform);
  hw.gpus_per_node = gpn ? *gpn : dev.default_gpus_per_node;
  const auto& a = cat.interconnect(intra);
  const auto& b = cat.interconnect(inter);
  hw.intra_name = a.name;
  hw.inter_name = b.name;
  hw.intra_kind = a.kind;
  hw.inter_kind = b.kind;
  // What a transfer achieves, not the line rate (the catalog's measured
  // fractions; 1 where none is published).
  hw.intra_bw = a.p2p_bandwidth();
  hw.intra_lat = a.latency;
  hw.inter_bw = b.p2p_bandwidth();
  hw.inter_lat = b.latency;
  hw.intra_coll_bw = a.bandwidth * a.collective_efficiency;
  hw.inter_coll_bw = b.bandwidth * b.collective_efficiency;
  hw.intra_measured = a.measured;
  hw.inter_measured = b.measured;
  hw.ici_link_bw = a.kind == "ici" ? a.xla_link_bandwidth : 0;
  if (h.nics_per_node) hw.nics_per_node = *h.nics_per_node;
  if (h.nvlink_domain) hw.nvlink_domain = *h.nvlink_domain;
  if (h.oversubscription) hw.oversubscription = *h.oversubscription;
  if (h.wraparound) hw.torus_wraparound = *h.wraparound;
  // A cluster's shape checked against the node size the flags may have changed.
  if (hw.nics_per_node > 0 && hw.gpus_per_node % hw.nics_per_node != 0)
    throw InputError(fmt::format("--nics-per-node: must divide --gpus-per-node ({}), got {}",
                                 hw.gpus_per_node, hw.nics_per_node));
  if (hw.nvlink_domain > 0 && hw.nvlink_domain % hw.gpus_per_node != 0)
    throw InputError(
        fmt::format("--nvlink-domain: must be a multiple of --gpus-per-node ({}), got {}",
                    hw.gpus_per_node, hw.nvlink_domain));
  if (h.flops) hw.flops = *h.flops;
  if (h.efficiency) hw.efficiency = *h.efficiency;
  if (h.bandwidth) {
    hw.bandwidth_override = true;
    hw.intra_bw = hw.inter_bw = hw.intra_coll_bw = hw.inter_coll_bw = *h.bandwidth;
    hw.intra_measured.clear();  // --bandwidth sets every link: no measured curve applies
    hw.inter_measured.clear();
    if (!h.platform) hw.platform = Platform::Flat;
  }
  if (h.latency) {
    hw.intra_lat = hw.inter_lat = *h.latency;
    if (!h.bandwidth) {
      hw.bandwidth_override = true;
      hw.inter_bw = hw.intra_bw =
          hw.platform == Platform::Nodes ? std::min(hw.intra_bw, hw.inter_bw) : hw.intra_bw;
      hw.inter_coll_bw = hw.intra_coll_bw = hw.intra_bw;
      hw.intra_measured.clear();
      hw.inter_measured.clear();
    }
  }
  if (hw.flops <= 0)
    throw InputError(
        fmt::format("--dtype: {} is not supported by {} (the catalog lists no peak for it)",
                    to_string(dtype), hw.gpu_name));
  return hw;
}

std::shared_ptr<const Implementation> make_implementation(const HardwareSpec& h, const Catalog& cat,
                                                          const Hardware& hw, DType dtype,
                                                          const std::string& choose) {
  ImplementationChoice c;
  c.kernel = h.kernel;
  c.query_chunk = h.query_chunk.value_or(0);
  c.key_chunk = h.key_chunk.value_or(0);
  c.roofline_overrides = h.flops.has_value() || h.efficiency.has_value();
  if (!h.profile.empty())
    c.profile = std::make_shared<ProfileModel>(read_profile(h.profile), to_string(dtype),
                                               "--profile " + h.profile, choose);
  return ringsim::make_implementation(cat, hw, dtype, c);
}

Workload resolve_workload(const WorkloadSpec& s, const Hardware& hw) {
  Workload w;
  w.devices = s.devices;
  w.block = s.block;
  w.layout = s.layout;
  w.causal = s.causal;
  w.pass = s.pass;
  w.dtype = s.dtype;
  w.shape = resolve_shape(s);
  if (s.layers) {
    w.layers = *s.layers;
    if (w.shape.name == "custom") w.shape.layers = w.layers;
  }
  w.scope = s.scope;
  w.tp = s.tp;
  w.sequence_parallel = s.sequence_parallel;
  w.ep = s.ep;
  w.routing_seed = s.routing_seed.value_or(1);
  check_run_model(s, w);
  // With --tp the Ulysses groups are of CP ranks: kv_heads / tp heads each,
  // gpus_per_node / tp ranks per node.
  const int tp = std::max(1, s.tp);
  if (w.layout == Layout::Hybrid)
    w.ulysses_degree = s.ulysses_degree ? *s.ulysses_degree
                                        : auto_ulysses_degree(w.devices, w.shape.kv_heads / tp,
                                                              std::max(1, hw.gpus_per_node / tp));
  w.pack = s.pack;
  // A chunked layer (Llama 4): its chunks over the sequence's positions, as
  // packed documents (the ring still passes every block), as plan and infer
  // time them (attention_chunks).
  w.chunked_layer = s.chunked_layer;
  if (s.chunked_layer) {
    w.documents = attention_chunks(w.shape, w.seq_len());
    check_documents(w);
    if (w.documents.size() == 1) w.documents.clear();
  }
  if (!s.documents.empty()) {
    w.documents = pack_documents("--documents", parse_documents("--documents", s.documents),
                                 w.seq_len(), s.documents_seed);
    // Judged before one whole-sequence document becomes the plain causal run,
    // so --no-causal is refused for every --documents alike.
    check_documents(w);
    // One document of the whole sequence is the causal mask: the run is today's causal run.
    if (w.documents.size() == 1) w.documents.clear();
  }
  validate(w, hw);
  return w;
}

}  // namespace ringsim::proc
