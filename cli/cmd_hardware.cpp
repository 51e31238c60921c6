// `ringsim hardware`: the catalog (devices, interconnects, clusters, models), with sources.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/nccl_import.hpp"
#include "models/core/errors.hpp"
#include "models/core/flag_types.hpp"
#include "models/core/parse.hpp"
#include "models/core/schema.hpp"
#include "proc/resolve.hpp"

namespace ringsim::cli {
namespace {

// A device as every command runs it by default (Device::deploy at its power
// as deployed): the clock that power leaves and the dense peaks at it.
nlohmann::json deployed_json(const Device& d) {
  Hardware hw;
  d.deploy(hw, DType::BF16, d.deployed_power_w());
  auto at = [&](DType t) { return d.peak(t) * hw.clock_scale; };  // deploy's flops, per dtype
  return {{"power_w", hw.power_limit_w},
          {"clock_scale", hw.clock_scale},
          {"peak_flops",
           {{"bf16", at(DType::BF16)}, {"fp16", at(DType::FP16)}, {"fp32", at(DType::FP32)}}}};
}

// One line per device that runs below its rated power as deployed (the
// catalog's default_power_w), so the table's datasheet peak is not read as
// the rate run, plan, infer and minblock charge.
void print_deployed(const Catalog& cat, bool after_sources) {
  bool first = true;
  for (const auto& d : cat.devices()) {
    if (!d.power.present() || d.deployed_power_w() >= d.power.tdp_w) continue;
    // Under --sources the table's last lines are a device's sources: a blank
    // line keeps these from reading as that device's.
    if (first && after_sources) std::cout << "\n";
    first = false;
    Hardware hw;
    d.deploy(hw, DType::BF16, d.deployed_power_w());
    std::cout << fmt::format(
        "  as deployed: {} at {:g} W of its rated {:g} W, clock x{:.3f}, {:.1f} TF bf16: every "
        "command's default (--power-limit moves it; docs/models.md, 'Hardware as deployed')\n",
        d.name, hw.power_limit_w, d.power.tdp_w, hw.clock_scale, hw.flops / 1e12);
  }
}

struct HardwareListFlags {
  proc::HardwareFlags hw;
  bool json = false, sources = false;
  NcclImportFlags import;
};

// A measured curve's bus bandwidth at a size, GB/s.
double curve_busbw(const MeasuredCurve& m, double bytes) {
  return bus_factor(m.kind, m.ranks) * bytes / m.seconds(bytes, m.ranks) / 1e9;
}

// The user's nccl-tests curves beside the datasheet (docs/own-cluster.md).
void print_measured(const Interconnect& n) {
  for (const auto& m : n.measured) {
    std::string at;
    for (double b = 1 << 16; b <= m.points.back().first; b *= 16)
      if (b >= m.points.front().first)
        at += fmt::format("{}{} {:.1f}", at.empty() ? "" : ", ", human_bytes(b), curve_busbw(m, b));
    std::cout << fmt::format(
        "      measured {} ({} GPUs, {} host(s)): busbw GB/s at {}; {:.1f} at {}; floor "
        "{:.1f} us (datasheet {:.1f} GB/s per link; {})\n",
        to_string(m.kind), m.ranks, m.nodes, at.empty() ? "-" : at,
        curve_busbw(m, m.points.back().first), human_bytes(m.points.back().first),
        m.floor_seconds(m.ranks) * 1e6, n.bandwidth / 1e9, m.source);
  }
}

nlohmann::json measured_json(const Interconnect& n) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& m : n.measured) {
    nlohmann::json pts = nlohmann::json::array();
    for (std::size_t i = 0; i < m.points.size(); ++i)
      pts.push_back({m.points[i].first, m.points[i].second * 1e6, m.busbw(i) / 1e9});
    a.push_back({{"collective", to_string(m.kind)},
                 {"ranks", m.ranks},
                 {"nodes", m.nodes},
                 {"gpu", m.gpu},
                 {"source", m.source},
                 {"columns", {"bytes", "time_us", "busbw_GBps"}},
                 {"points", pts}});
  }
  return a;
}

int run(const HardwareListFlags& f) {
  const auto cat = proc::load_catalog(proc::parse_hardware(f.hw));
  if (!f.import.files.empty()) {
    auto import = f.import;
    import.catalog = f.hw.catalog;
    return import_nccl_tests(import, cat);
  }
  if (!f.import.cluster.empty() || !f.import.out.empty())
    throw InputError("--cluster and --out: only with --import-nccl-tests FILE...");
  if (f.json) {
    // Every field as a value of its own (numbers as numbers, names as names);
    // docs/models.md says what each means.
    nlohmann::json j;
    j["schema_version"] = kJsonSchemaVersion;
    // What each memory figure is and in which unit (docs/models.md, "Device memory").
    j["units"] = {
        {"hbm_bytes",
         "bytes, as the device's own tool reports its memory (hbm_reported_by: nvidia-smi's "
         "total in MiB x 2^20, rocm-smi's bytes, JAX's bytes_limit); hbm_gib = hbm_bytes / 2^30"},
        {"hbm_bandwidth", "bytes/s"},
        {"bandwidth", "bytes/s per direction"},
        {"latency", "s"},
        {"peak_flops", "FLOP/s, dense"}};
    for (const auto& d : cat.devices())
      j["devices"].push_back(
          {{"name", d.name},
           {"display", d.display},
           {"kind", d.kind},
           {"peak_flops", {{"bf16", d.peak_bf16}, {"fp16", d.peak_fp16}, {"fp32", d.peak_fp32}}},
           {"deployed", deployed_json(d)},
           {"hbm_bytes", d.hbm_bytes},
           {"hbm_gib", d.hbm_bytes / 1073741824.0},
           {"hbm_reported_by", d.hbm_reported_by},
           {"hbm_source", d.hbm_source},
           {"hbm_driver_reserved_bytes", d.hbm_driver_reserved_bytes},
           {"hbm_driver_reserved_source", d.hbm_driver_reserved_source},
           {"context_bytes", d.context_bytes},
           {"context_source", d.context_source},
           {"blas_workspace_bytes", d.blas_workspace_bytes},
           {"blas_workspace_source", d.blas_workspace_source},
           {"hbm_bandwidth", d.hbm_bandwidth},
           {"attention_efficiency", d.attention_efficiency},
           {"gemm_efficiency", d.gemm_efficiency},
           {"sm_count", d.sm_count},
           {"default_kernel", d.default_kernel},
           {"default_platform", d.default_platform},
           {"default_intra", d.default_intra},
           {"default_inter", d.default_inter},
           {"default_gpus_per_node", d.default_gpus_per_node},
           {"source", d.source},
           {"sm_source", d.sm_source},
           {"efficiency_source", d.efficiency_source},
           {"gemm_source", d.gemm_source},
           {"default_kernel_source", d.default_kernel_source}});
    for (const auto& n : cat.interconnects())
      j["interconnects"].push_back({{"name", n.name},
                                    {"display", n.display},
                                    {"bandwidth", n.bandwidth},
                                    {"latency", n.latency},
                                    {"kind", n.kind},
                                    {"duplex", n.duplex},
                                    {"p2p_efficiency", n.p2p_efficiency},
                                    {"collective_efficiency", n.collective_efficiency},
                                    {"measured", measured_json(n)},
                                    {"source", n.source},
                                    {"latency_source", n.latency_source}});
    for (const auto& c : cat.clusters())
      j["clusters"].push_back({{"name", c.name},
                               {"gpu", c.gpu},
                               {"platform", c.platform},
                               {"gpus_per_node", c.gpus_per_node},
                               // 0: one NIC per GPU / one NVLink switch per node
                               {"nics_per_node", c.nics_per_node},
                               {"nvlink_domain", c.nvlink_domain},
                               {"inter_topology", c.inter_topology},
                               {"oversubscription", c.oversubscription},
                               // tori: the slice ([] = any size) and its wrap-around links
                               {"slice", c.slice},
                               {"wraparound", c.wraparound},
                               {"intra", c.intra},
                               {"inter", c.inter},
                               {"source", c.source}});
    for (const auto& k : cat.kernels()) {
      std::vector<std::string> devices;
      for (const auto& c : k.curves)
        if (std::find(devices.begin(), devices.end(), c.device) == devices.end())
          devices.push_back(c.device);
      j["kernels"].push_back({{"name", k.name},
                              {"display", k.display},
                              {"rates", k.rates},
                              {"curve_devices", devices},
                              {"curves_from_kernel", k.curves_from_kernel},
                              {"merge", k.merge},
                              {"launch_s", k.launch_s},
                              {"comm_library", k.comm_library},
                              {"grad_bytes", k.grad_bytes},
                              {"source", k.source}});
    }
    for (const auto& m : model_shapes())
      j["models"].push_back({{"name", m.name},
                             {"layers", m.layers},
                             {"d_model", m.d_model},
                             {"heads", m.heads},
                             {"kv_heads", m.kv_heads},
                             {"head_dim", m.head_dim},
                             {"ffn", m.ffn},
                             {"mlp", m.mlp},
                             {"vocab", m.vocab},
                             {"experts", m.experts},
                             {"experts_per_token", m.experts_per_token},
                             {"shared_experts", m.shared_experts},
                             {"expert_ffn", m.expert_ffn},
                             {"dense_layers", m.dense_layers},
                             {"dense_ffn", m.dense_ffn},
                             {"kv_lora_rank", m.kv_lora_rank},
                             {"attention_chunk", m.attention_chunk},
                             {"global_every", m.global_every},
                             {"source", m.source}});
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "Devices (dense peak FLOP/s; 0 = unsupported; HBM in GiB = 2^30 bytes as the "
               "device's own tool reports it (nvidia-smi, rocm-smi, JAX's bytes_limit; --sources "
               "names each), bandwidth in decimal TB/s and GB/s as datasheets quote it):\n";
  std::cout << fmt::format("  {:<11} {:>9} {:>9} {:>9} {:>9} {:>10} {:>6}  {}\n", "name", "bf16 TF",
                           "fp16 TF", "fp32 TF", "HBM GiB", "HBM TB/s", "eff", "default fabric");
  for (const auto& d : cat.devices()) {
    std::cout << fmt::format(
        "  {:<11} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>10.3f} {:>6.2f}  {} / {} ({})\n", d.name,
        d.peak_bf16 / 1e12, d.peak_fp16 / 1e12, d.peak_fp32 / 1e12, to_gib(d.hbm_bytes),
        d.hbm_bandwidth / 1e12, d.attention_efficiency, d.default_intra, d.default_inter,
        d.default_platform);
    if (f.sources)
      std::cout << "      source: " << d.source << "\n      efficiency: " << d.efficiency_source
                << "\n      memory (" << d.hbm_reported_by << "): " << d.hbm_source
                << "\n      driver's reserve: " << d.hbm_driver_reserved_source << "\n";
  }
  print_deployed(cat, f.sources);
  std::cout << "\nInterconnects (per direction):\n";
  for (const auto& n : cat.interconnects()) {
    std::cout << fmt::format("  {:<12} {:>8.1f} GB/s {:>6.1f} us  {}\n", n.name, n.bandwidth / 1e9,
                             n.latency * 1e6, n.display);
    print_measured(n);
    if (f.sources)
      std::cout << "      source: " << n.source << "\n      latency: " << n.latency_source << "\n";
  }
  std::cout << "\nAttention implementations (--kernel; docs/models.md):\n";
  for (const auto& k : cat.kernels()) {
    std::string devs;
    for (const auto& c : k.curves)
      if (devs.find(c.device) == std::string::npos) devs += (devs.empty() ? "" : ", ") + c.device;
    if (!k.curves_from_kernel.empty()) devs = k.curves_from_kernel + "'s";
    const std::string rates =
        k.rates == "curves"
            ? (devs.empty() ? "the device's prior (no published curve)"
                            : "published curves: " + devs)
            : (k.rates == "profile" ? "a measured profile" : "the catalog's efficiency x peak");
    std::cout << fmt::format("  {:<12} {}\n  {:<12} rates: {}; merge: {}\n", k.name, k.display, "",
                             rates, k.merge);
    if (f.sources) std::cout << "      source: " << k.source << "\n";
  }
  std::cout << "  default per device:";
  for (const auto& d : cat.devices()) std::cout << " " << d.name << "=" << d.default_kernel;
  std::cout << "\n";
  std::cout << "\nCluster presets (--cluster):\n";
  for (const auto& c : cat.clusters()) {
    std::string extra;
    if (c.nics_per_node > 0 && c.nics_per_node != c.gpus_per_node)
      extra += fmt::format(", {} NICs per node", c.nics_per_node);
    if (c.nvlink_domain > c.gpus_per_node)
      extra += fmt::format(", NVLink domain {}", c.nvlink_domain);
    if (c.inter_topology != "rail") extra += ", " + c.inter_topology + " leaves";
    if (c.oversubscription != 1) extra += fmt::format(", {}:1 oversubscribed", c.oversubscription);
    if (!c.slice.empty()) {
      std::vector<std::string> d;
      for (int x : c.slice) d.push_back(std::to_string(x));
      extra += fmt::format(", slice {}", join(d, "x"));
    }
    if (!c.wraparound) extra += ", no wrap-around (a mesh)";
    std::cout << fmt::format("  {:<12} {} x{} per node, {} / {}, {}{}\n", c.name, c.gpu,
                             c.gpus_per_node, c.intra, c.inter, c.platform, extra);
  }
  std::cout << "\nModels (--model):\n";
  for (const auto& m : model_shapes()) {
    const auto mlp =
        is_moe(m)
            ? fmt::format(
                  "{} experts of {}, top-{}{} ({})", m.experts, m.expert_ffn, m.experts_per_token,
                  m.shared_experts ? fmt::format(" + {} shared", m.shared_experts) : std::string(),
                  m.mlp)
            : fmt::format("FFN {} ({})", m.ffn, m.mlp);
    std::string extra;
    if (m.dense_layers > 0)
      extra += fmt::format(", {} dense layers of {}", m.dense_layers, m.dense_ffn);
    if (is_mla(m)) extra += fmt::format(", MLA (KV rank {})", m.kv_lora_rank);
    if (m.attention_chunk > 0)
      extra += fmt::format(", attention in chunks of {} ({} of {} layers global)",
                           m.attention_chunk, global_attention_layers(m), m.layers);
    std::cout << fmt::format(
        "  {:<15} {} layers, d_model {}, {} heads, {} KV heads, head dim {}, {}{}\n", m.name,
        m.layers, m.d_model, m.heads, m.kv_heads, m.head_dim, mlp, extra);
  }
  if (!f.sources) std::cout << "\n(--sources prints where every number comes from)\n";
  return 0;
}

}  // namespace

Command hardware_command() {
  return {"hardware", [](CLI::App& app, int* code) {
            auto f = std::make_shared<HardwareListFlags>();
            auto* sub = app.add_subcommand(
                "hardware", "List the hardware catalog, cluster presets and model shapes");
            sub->add_option("--catalog", f->hw.catalog,
                            "Extra catalog JSON (adds or replaces entries by name)")
                ->type_name(flag_type::kFile);
            sub->add_option("--set", f->hw.sets,
                            "Move one catalog field, repeatable: SECTION.NAME.FIELD=VALUE "
                            "(docs/models.md, 'Moving an assumption')")
                ->type_name(flag_type::kKeyValue);
            sub->add_flag("--sources", f->sources, "Print the source of every number");
            sub->add_flag("--json", f->json, "Print one JSON object");
            sub->add_option("--import-nccl-tests", f->import.files,
                            "nccl-tests outputs (all_reduce_perf, all_gather_perf, "
                            "reduce_scatter_perf, alltoall_perf, sendrecv_perf; KIND=FILE names "
                            "the collective) to a catalog overlay (docs/own-cluster.md)")
                ->type_name(flag_type::kFile)
                ->expected(1, -1);
            sub->add_option("--cluster", f->import.cluster,
                            "With --import-nccl-tests: the cluster preset whose interconnects the "
                            "measurements replace")
                ->type_name(flag_type::kName);
            sub->add_option("--out", f->import.out,
                            "With --import-nccl-tests: the overlay file to write (then --catalog "
                            "FILE on any command)")
                ->type_name(flag_type::kFile);
            sub->callback([f, code] {
              f->import.json = f->json;
              *code = run(*f);
            });
            return sub;
          }};
}

}  // namespace ringsim::cli
