#include "models/core/catalog.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "models/core/errors.hpp"
#include "models/core/input_file.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/parse.hpp"
#include "models/core/suggest.hpp"

namespace ringsim {
namespace embedded {
extern const char* const catalog_json;
extern const char* const kernels_json;
}  // namespace embedded

using nlohmann::json;

double Device::peak(DType d) const {
  switch (d) {
    case DType::BF16:
      return peak_bf16;
    case DType::FP16:
      return peak_fp16;
    case DType::FP32:
      return peak_fp32;
  }
  return 0;
}

double Device::deployed_power_w() const {
  if (default_power_w > 0) return default_power_w;
  return power.present() ? power.tdp_w : 0;
}

void Device::deploy(Hardware& hw, DType dtype, double watts) const {
  hw.gpu_name = name;
  hw.gpu_display = display;
  hw.power_limit_w = power.present() ? (watts > 0 ? watts : power.tdp_w) : 0;
  hw.clock_scale = power.clock_scale(hw.power_limit_w);
  // A saturated device runs at its settled clock (catalog gemm_sustained): a
  // dense GEMM at its measured sustained rate, a kernel timed in a burst at
  // the share it keeps; under a cap both follow the peak's clock from there.
  hw.gemm_throttle = gemm_sustained_bf16;
  hw.gemm_throttle_fp8 = gemm_sustained_fp8;
  hw.attention_throttle = burst_sustained;
  hw.flops = peak(dtype) * hw.clock_scale;
  hw.sm_count = sm_count;
  hw.gemm_tiles = gemm_tiles;
  hw.gemm_fill_bf16 = gemm_fill_bf16;
  hw.gemm_fill_fp8 = gemm_fill_fp8;
  hw.hbm_efficiency = hbm_efficiency;
  hw.efficiency = attention_efficiency;
  hw.gemm_efficiency = gemm_efficiency;
  hw.hbm_bytes = hbm_bytes;
  hw.hbm_driver_reserved = hbm_driver_reserved_bytes;
  hw.context_bytes = context_bytes;
  hw.blas_workspace_bytes = blas_workspace_bytes;
  hw.tpu = kind == "tpu";
  hw.hbm_bandwidth = hbm_bandwidth;
}

double PowerModel::clock_scale(double watts) const {
  if (!present() || watts >= tdp_w) return 1;
  return std::cbrt((watts - static_w) / (tdp_w - static_w));
}

namespace {

using Reader = JsonReader;

// "gemm_fill": {"bf16": [fill_k, best_k], "fp8": [fill_k, best_k], "source"}.
void read_gemm_fill(const Reader& r, Device& d) {
  if (!r.has("gemm_fill")) return;
  Reader g{r.origin, r.where + " gemm_fill", r.object("gemm_fill")};
  auto pair = [&](const char* key, GemmFill& f) {
    if (!g.has(key)) return;
    const auto& a = g.array(key);
    if (a.size() != 2 || !a[0].is_number() || !a[1].is_number() || a[0].get<double>() < 0 ||
        a[0].get<double>() > 1e5 || a[1].get<double>() < 1 || a[1].get<double>() > 1e6)
      throw g.error(fmt::format("'{}' must be [fill_k in 0..1e5, best_k in 1..1e6]", key));
    f.fill_k = a[0].get<double>();
    f.best_k = a[1].get<double>();
  };
  pair("bf16", d.gemm_fill_bf16);
  pair("fp8", d.gemm_fill_fp8);
  d.gemm_fill_source = g.str("source");
}

// "gemm_sustained": {"bf16": f, "fp8": f, "burst": f, "source"}: what a
// saturated device holds at its rated power once the clock has settled.
void read_gemm_sustained(const Reader& r, Device& d) {
  if (!r.has("gemm_sustained")) return;
  Reader g{r.origin, r.where + " gemm_sustained", r.object("gemm_sustained")};
  d.gemm_sustained_bf16 = g.num("bf16", 0.3, 1.0);
  d.gemm_sustained_fp8 = g.num_or("fp8", 0.3, 1.0, d.gemm_sustained_bf16);
  d.burst_sustained = g.num_or("burst", 0.3, 1.0, d.gemm_sustained_bf16);
  d.gemm_sustained_source = g.str("source");
}

// The static power: at least 0 and below tdp_w.
double static_power(const Reader& p, double tdp) {
  const double x = p.num("static_w", 0, 1e5);
  if (x >= tdp)
    throw p.error(fmt::format("'static_w' must be below 'tdp_w' ({:g} W), got {:g}", tdp, x));
  return x;
}

void read_deployment(const Reader& r, Device& d) {
  if (r.has("power")) {
    Reader p{r.origin, r.where + " power", r.object("power")};
    d.power.tdp_w = p.num("tdp_w", 1, 1e5);
    d.power.static_w = static_power(p, d.power.tdp_w);
    d.power.source = p.str("source");
    if (p.has("gemm_static_w"))
      throw p.error(
          "'gemm_static_w' is no longer read: a GEMM's settled clock is the device's "
          "'gemm_sustained' (docs/models.md, 'Hardware as deployed')");
  }
  if (r.has("default_power_w")) {
    if (!d.power.present()) throw r.error("'default_power_w' needs a 'power' model");
    d.default_power_w = r.num("default_power_w", 1, d.power.tdp_w);
    if (d.default_power_w <= d.power.static_w)
      throw r.error(fmt::format("'default_power_w' ({:g} W) must be above 'static_w' ({:g} W)",
                                d.default_power_w, d.power.static_w));
    d.default_power_source = r.str("default_power_source");
  }
  d.same_compute_as = r.str_or("same_compute_as", "");
  d.hbm_efficiency = r.num_or("hbm_efficiency", 0.05, 1.0, 1.0);
  d.hbm_efficiency_source =
      r.str_or("hbm_efficiency_source", "no achievable fraction given: the nominal HBM bandwidth");
  if (r.has("gemm_tiles")) {
    for (const auto& t : r.array("gemm_tiles")) {
      if (!t.is_array() || t.size() != 2 || !t[0].is_number_integer() ||
          !t[1].is_number_integer() || t[0].get<int>() < 1 || t[1].get<int>() < 1 ||
          t[0].get<int>() > 4096 || t[1].get<int>() > 4096)
        throw r.error("'gemm_tiles' must hold [rows, columns] pairs of integers in 1..4096");
      d.gemm_tiles.emplace_back(t[0].get<int>(), t[1].get<int>());
    }
    d.gemm_tiles_source = r.str("gemm_tiles_source");
  }
  read_gemm_fill(r, d);
  read_gemm_sustained(r, d);
}

// The device's memory as its tools report it and what the runtime takes
// out of it (docs/models.md, "Device memory"): optional for a --catalog
// device, each default saying what it assumes.
void read_memory(const Reader& r, Device& d) {
  d.hbm_reported_by = r.str_or("hbm_reported_by", "the catalog file's hbm_bytes");
  d.hbm_source = r.str_or("hbm_source", "not given");
  d.hbm_driver_reserved_bytes = r.num_or("hbm_driver_reserved_bytes", 0, 1e12, 0);
  d.hbm_driver_reserved_source = r.str_or("hbm_driver_reserved_source", "not given: none charged");
  const bool gpu = d.kind != "tpu";
  d.context_bytes = r.num_or("context_bytes", 0, 1e11, gpu ? kDefaultContextBytes : 0);
  d.context_source = r.str_or(
      "context_source", gpu ? "assumption: PyTorch's maintainers' ~400 MB CUDA context with lazy "
                              "module loading (pytorch/pytorch issue 109888)"
                            : "none: the runtime's reserve is outside the reported limit");
  d.blas_workspace_bytes = r.num_or("blas_workspace_bytes", 0, 1e10, 0);
  d.blas_workspace_source = r.str_or("blas_workspace_source", "not given: none charged");
}

// "measured": [{"collective", "ranks", "nodes", "gpu", "source", "points":
// [[bytes, time_us, busbw_GBps], ...]}] (the busbw column is for the reader
// of the file; the time is what the model uses).
MeasuredCurve read_curve(const Reader& r) {
  MeasuredCurve c;
  const auto name = r.str("collective");
  const auto kind = parse_measured_kind(name);
  if (!kind)
    throw r.error(fmt::format("'collective' must be one of {}, got '{}'",
                              join(measured_kind_names(), ", "), one_line(name)));
  c.kind = *kind;
  c.ranks = static_cast<int>(r.integer("ranks", 2, 1e7));
  c.nodes = static_cast<int>(r.integer("nodes", 1, c.ranks));
  c.gpu = r.str_or("gpu", "");
  c.source = r.str("source");
  std::size_t i = 0;
  for (const auto& p : r.array("points")) {
    const auto where = fmt::format("'points'[{}]", i++);
    if (!p.is_array() || p.size() < 2)
      throw r.error(where + " must be [bytes, time_us, busbw_GBps]");
    const double bytes = r.number(p[0], where + " bytes", 1, 1e15);
    const double us = r.number(p[1], where + " time_us", 1e-3, 1e12);
    if (!c.points.empty() && bytes <= c.points.back().first)
      throw r.error(where + ": sizes must ascend");
    c.points.emplace_back(bytes, us * 1e-6);
  }
  if (c.points.size() < 2) throw r.error("'points' needs at least 2 message sizes");
  return c;
}

void read_measured(const Reader& r, Interconnect& n) {
  if (!r.has("measured")) return;
  std::size_t i = 0;
  for (const auto& e : r.array("measured")) {
    Reader cr{r.origin, fmt::format("{} measured[{}]", r.where, i++), e};
    auto c = read_curve(cr);
    if (find_curve(n.measured, c.kind))
      throw cr.error(fmt::format("a second {} curve (one per collective)", to_string(c.kind)));
    n.measured.push_back(std::move(c));
  }
}

void read_efficiencies(const Reader& r, Interconnect& n) {
  read_measured(r, n);
  n.p2p_efficiency = r.num_or("p2p_efficiency", 0.01, 1.0, 1.0);
  n.p2p_efficiency_source =
      r.str_or("p2p_efficiency_source", "no measured fraction given: the nominal bandwidth");
  n.collective_efficiency = r.num_or("collective_efficiency", 0.01, 1.0, 1.0);
  n.collective_efficiency_source =
      r.str_or("collective_efficiency_source", "no measured fraction given: the nominal bandwidth");
  if (r.has("xla_link_bandwidth")) {
    n.xla_link_bandwidth = r.num("xla_link_bandwidth", 1e3, 1e15);
    n.xla_link_bandwidth_source = r.str("xla_link_bandwidth_source");
  }
}

template <typename T>
void upsert(std::vector<T>& items, T item) {
  for (auto& it : items)
    if (it.name == item.name) {
      it = std::move(item);
      return;
    }
  items.push_back(std::move(item));
}

template <typename T>
const T& find(const std::vector<T>& items, const std::string& name, const char* flag,
              const char* what) {
  std::vector<std::string> names;
  for (const auto& it : items) {
    if (it.name == name) return it;
    names.push_back(it.name);
  }
  throw InputError(fmt::format("{}: unknown {} '{}';{} choose one of: {}", flag, what, name,
                               did_you_mean(name, names), join(names, ", ")));
}

template <typename T>
std::vector<std::string> names_of(const std::vector<T>& items) {
  std::vector<std::string> n;
  for (const auto& it : items) n.push_back(it.name);
  return n;
}

// "<field>_range": [low, high] and its "<field>_range_source", beside an
// assumed field (its source starts with "assumption:"): appended to `out`.
void read_range(const Reader& r, const std::string& owner, const std::string& field, double value,
                const std::string& source, double lo_bound, double hi_bound,
                std::vector<Assumption>& out) {
  const std::string key = field + "_range";
  if (!r.has(key.c_str())) return;
  if (source.rfind("assumption:", 0) != 0)
    throw r.error(
        fmt::format("'{}' is for an assumed value; its source must start with "
                    "'assumption:'",
                    key));
  const auto& a = r.at(key.c_str());
  if (!a.is_array() || a.size() != 2) throw r.error(fmt::format("'{}' must be [low, high]", key));
  const double lo = r.number(a[0], key, lo_bound, hi_bound);
  const double hi = r.number(a[1], key, lo_bound, hi_bound);
  if (!(lo <= value && value <= hi))
    throw r.error(
        fmt::format("'{}' must hold the value {:g} (low <= value <= high), got [{:g}, {:g}]", key,
                    value, lo, hi));
  out.push_back(
      {owner + " " + field, owner, field, value, lo, hi, source, r.str((key + "_source").c_str())});
}

// Each entry of each section: a patch entry ("patch": true) becomes the entry
// it names with its fields merged in (JSON merge patch, RFC 7386); every
// entry's JSON is kept in `raw` for the next patch or --set.
void resolve_patches(json& j, std::map<std::string, std::string>& raw, const std::string& origin) {
  for (const auto& section : catalog_sections()) {
    if (!j.contains(section) || !j[section].is_array()) continue;
    std::size_t i = 0;
    for (auto& e : j[section]) {
      const auto where = fmt::format("{}[{}]", section, i++);
      if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) continue;
      const auto key = section + "/" + e["name"].get<std::string>();
      if (e.contains("patch")) {
        if (!e["patch"].is_boolean())
          throw InputError(fmt::format("{}: {}: 'patch' must be true or false", origin, where));
        const bool patch = e["patch"].get<bool>();
        e.erase("patch");
        if (patch) {
          if (!raw.count(key))
            throw InputError(fmt::format(
                "{}: {}: a patch (\"patch\": true) names no {} entry '{}' to patch; drop \"patch\" "
                "to add it whole",
                origin, where, section, e["name"].get<std::string>()));
          json base = json::parse(raw.at(key));
          base.merge_patch(e);
          e = std::move(base);
        }
      }
      raw[key] = e.dump();
    }
  }
}

}  // namespace

const std::vector<std::string>& catalog_sections() {
  static const std::vector<std::string> s{"devices", "interconnects", "clusters", "kernels",
                                          "comm_libraries"};
  return s;
}

const Catalog& Catalog::embedded() {
  static const Catalog c = [] {
    Catalog k;
    k.merge_json_text(embedded::kernels_json, "embedded kernels (models/data/kernels.json)");
    k.merge_json_text(embedded::catalog_json, "embedded catalog");
    return k;
  }();
  return c;
}

void Catalog::merge_file(const std::string& path) {
  // 64 MiB: the embedded catalog is 13 KB; anything near this is not a catalog.
  merge_json_text(read_input_file("--catalog", path, 64u << 20), "--catalog " + path);
}

void Catalog::merge_json_text(const std::string& text, const std::string& origin) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON (byte {})", origin, e.byte));
  } catch (const json::out_of_range&) {
    // nlohmann reports a number beyond double's range (1e999) this way, not as a parse error.
    throw InputError(
        fmt::format("{}: not valid JSON (a number is beyond the range of a double)", origin));
  }
  if (!j.is_object()) throw InputError(fmt::format("{}: top level must be a JSON object", origin));
  // Parse into copies first so a bad file leaves the catalog unchanged.
  Catalog next = *this;
  resolve_patches(j, next.raw_, origin);
  auto array = [&](const char* key) -> const json* {
    if (!j.contains(key)) return nullptr;
    if (!j[key].is_array()) throw InputError(fmt::format("{}: '{}' must be an array", origin, key));
    return &j[key];
  };
  if (auto* a = array("devices")) {
    size_t i = 0;
    for (const auto& e : *a) {
      Reader r{origin, fmt::format("devices[{}]", i++), e};
      Device d;
      d.name = r.str("name");
      r.where = "device '" + d.name + "'";
      d.display = r.str_or("display", d.name);
      d.kind = r.str_or("kind", "gpu");
      d.family = r.str_or("family", d.name);
      Reader pf{origin, r.where + " peak_flops", r.at("peak_flops")};
      d.peak_bf16 = pf.zero_or_num("bf16", 1e6, 1e18);
      d.peak_fp16 = pf.zero_or_num("fp16", 1e6, 1e18);
      d.peak_fp32 = pf.zero_or_num("fp32", 1e6, 1e18);
      if (d.peak_bf16 <= 0 && d.peak_fp16 <= 0 && d.peak_fp32 <= 0)
        throw InputError(fmt::format("{}: {}: peak_flops has no positive entry", origin, r.where));
      d.hbm_bytes = r.num("hbm_bytes", 1e6, 1e15);
      d.hbm_bandwidth = r.num("hbm_bandwidth", 1e6, 1e15);
      d.attention_efficiency = r.num("attention_efficiency", 1e-3, 1.0);
      // Optional for a --catalog device; each default says what it assumes.
      d.gemm_efficiency = r.num_or("gemm_efficiency", 1e-3, 1.0, d.attention_efficiency);
      d.gemm_source = r.str_or("gemm_source",
                               "assumption: the attention efficiency (no gemm_efficiency given)");
      // FP8: optional (0 = unsupported); a positive peak needs its source,
      // and the FP8 GEMM fraction defaults to the bf16 one, said so.
      d.peak_fp8 = pf.has("fp8") ? pf.zero_or_num("fp8", 1e6, 1e18) : 0;
      d.fp8_source = r.str_or("fp8_source", "");
      if (d.peak_fp8 > 0 && d.fp8_source.empty())
        throw r.error("'fp8_source' must say where peak_flops.fp8 comes from");
      d.fp8_gemm_efficiency = r.num_or("fp8_gemm_efficiency", 1e-3, 1.0, d.gemm_efficiency);
      d.fp8_gemm_source = r.str_or(
          "fp8_gemm_source", "assumption: the bf16 gemm_efficiency (no fp8_gemm_efficiency given)");
      d.dcn_bandwidth_per_chip = r.num_or("dcn_bandwidth_per_chip", 1e6, 1e13, 0);
      d.dcn_latency = r.num_or("dcn_latency", 0, 1, 0);
      d.dcn_source = r.str_or("dcn_source", "");
      if (d.dcn_bandwidth_per_chip > 0 && d.dcn_source.empty())
        throw r.error("'dcn_source' must say where dcn_bandwidth_per_chip comes from");
      d.sm_count = static_cast<int>(r.has("sm_count") ? r.integer("sm_count", 0, 100000) : 0);
      d.sm_source = r.str_or("sm_source", "");
      if (d.sm_count > 0 && d.sm_source.empty())
        throw r.error("'sm_source' must say where sm_count comes from");
      d.default_kernel = r.str_or("default_kernel", "roofline");
      d.default_kernel_source =
          r.str_or("default_kernel_source", "no default_kernel given: the roofline");
      d.default_platform = r.str_or("default_platform", "nodes");
      parse_platform(origin + ": " + r.where + " default_platform", d.default_platform);
      d.default_intra = r.str_or("default_intra", "nvlink4");
      d.default_inter = r.str_or("default_inter", "ib-ndr");
      d.default_gpus_per_node = static_cast<int>(
          r.has("default_gpus_per_node") ? r.integer("default_gpus_per_node", 1, 1024) : 8);
      d.source = r.str("source");
      d.efficiency_source = r.str("efficiency_source");
      read_range(r, d.name, "gemm_efficiency", d.gemm_efficiency, d.gemm_source, 1e-3, 1.0,
                 d.assumptions);
      read_range(r, d.name, "attention_efficiency", d.attention_efficiency, d.efficiency_source,
                 1e-3, 1.0, d.assumptions);
      read_deployment(r, d);
      read_memory(r, d);
      upsert(next.devices_, d);
    }
  }
  if (auto* a = array("interconnects")) {
    size_t i = 0;
    for (const auto& e : *a) {
      Reader r{origin, fmt::format("interconnects[{}]", i++), e};
      Interconnect n;
      n.name = r.str("name");
      r.where = "interconnect '" + n.name + "'";
      n.display = r.str_or("display", n.name);
      n.bandwidth = r.num("bandwidth", 1e3, 1e15);
      n.latency = r.num("latency", 0, 1);
      n.kind = r.str_or("kind", "network");
      if (n.kind != "nvlink" && n.kind != "network" && n.kind != "pcie" && n.kind != "xgmi" &&
          n.kind != "ici")
        throw r.error("'kind' must be nvlink, network, pcie, xgmi or ici");
      n.duplex = r.str_or("duplex", "full");
      if (n.duplex != "full" && n.duplex != "half")
        throw InputError(fmt::format("{}: {}: 'duplex' must be full or half", origin, r.where));
      n.source = r.str("source");
      n.latency_source = r.str("latency_source");
      read_range(r, n.name, "latency", n.latency, n.latency_source, 0, 1, n.assumptions);
      read_efficiencies(r, n);
      upsert(next.interconnects_, n);
    }
  }
  if (auto* a = array("clusters")) {
    size_t i = 0;
    for (const auto& e : *a) {
      Reader r{origin, fmt::format("clusters[{}]", i++), e};
      ClusterPreset c;
      c.name = r.str("name");
      r.where = "cluster '" + c.name + "'";
      c.gpu = r.str("gpu");
      c.platform = r.str("platform");
      parse_platform(origin + ": " + r.where + " platform", c.platform);
      c.gpus_per_node = static_cast<int>(r.integer("gpus_per_node", 1, 1024));
      c.intra = r.str("intra");
      c.inter = r.str("inter");
      c.source = r.str("source");
      if (r.has("nics_per_node")) {
        c.nics_per_node = static_cast<int>(r.integer("nics_per_node", 1, 1024));
        if (c.gpus_per_node % c.nics_per_node != 0)
          throw r.error(fmt::format("'nics_per_node' must divide gpus_per_node ({}), got {}",
                                    c.gpus_per_node, c.nics_per_node));
      }
      c.inter_topology = r.str_or("inter_topology", "rail");
      if (c.inter_topology != "rail" && c.inter_topology != "fattree")
        throw r.error("'inter_topology' must be rail or fattree");
      c.oversubscription = r.num_or("oversubscription", 1, 64, 1);
      if (r.has("nvlink_domain")) {
        c.nvlink_domain = static_cast<int>(r.integer("nvlink_domain", 1, 1 << 20));
        if (c.nvlink_domain % c.gpus_per_node != 0)
          throw r.error(
              fmt::format("'nvlink_domain' must be a multiple of gpus_per_node ({}), got {}",
                          c.gpus_per_node, c.nvlink_domain));
      }
      if (r.has("wraparound")) {
        if (!r.at("wraparound").is_boolean()) throw r.error("'wraparound' must be true or false");
        c.wraparound = r.at("wraparound").get<bool>();
      }
      if (r.has("slice")) {
        // "4x4x4": the torus the slice forms, one size per dimension.
        const auto text = r.str("slice");
        std::int64_t cells = 1;
        for (std::size_t a = 0; a <= text.size();) {
          const auto b = std::min(text.find('x', a), text.size());
          const auto part = text.substr(a, b - a);
          if (part.empty() || part.size() > 7 ||
              part.find_first_not_of("0123456789") != std::string::npos || std::stoi(part) < 1)
            throw r.error(
                fmt::format("'slice' must be sizes joined by 'x' (4x4x4), got '{}'", text));
          c.slice.push_back(std::stoi(part));
          cells *= c.slice.back();
          a = b + 1;
        }
        const std::size_t rank = c.platform == "torus2d" ? 2 : c.platform == "torus3d" ? 3 : 0;
        if (rank == 0 || c.slice.size() != rank)
          throw r.error(fmt::format(
              "'slice' needs platform torus2d (two sizes) or torus3d (three), got '{}' on {}", text,
              c.platform));
        if (cells > (1 << 20)) throw r.error("'slice' has more than 2^20 chips");
      }
      upsert(next.clusters_, c);
    }
  }
  if (auto* a = array("kernels")) {
    std::size_t i = 0;
    for (const auto& e : *a) upsert(next.kernels_, parse_kernel_spec(e, origin, i++));
  }
  if (auto* a = array("comm_libraries")) {
    std::size_t i = 0;
    for (const auto& e : *a) upsert(next.comm_libraries_, parse_comm_library(e, origin, i++));
  }
  if (j.contains("paper_table2")) {
    Reader t{origin, "paper_table2", j["paper_table2"]};
    next.paper_source_ = t.str("source");
    next.paper_.clear();
    size_t i = 0;
    for (const auto& e : t.at("rows")) {
      Reader r{origin, fmt::format("paper_table2.rows[{}]", i++), e};
      next.paper_.push_back({r.str("host"), r.num("flops", 1, 1e18), r.num("hbm_gb", 0, 1e6),
                             r.num("bandwidth", 1, 1e15), r.num("published_min_block", 0, 1e12),
                             r.num("published_min_seq", 0, 1e12)});
    }
  }
  // Cross references must resolve.
  for (const auto& d : next.devices_) {
    find(next.interconnects_, d.default_intra, origin.c_str(), "interconnect");
    find(next.interconnects_, d.default_inter, origin.c_str(), "interconnect");
    if (!d.same_compute_as.empty()) {
      const auto& die = find(next.devices_, d.same_compute_as, origin.c_str(), "device");
      if (!die.same_compute_as.empty())
        throw InputError(fmt::format(
            "{}: device '{}': same_compute_as '{}' names a device that names another itself; name "
            "that one",
            origin, d.name, die.name));
    }
  }
  // Kernels come before the devices that name them (the embedded kernels are
  // merged first), so a device's default is checked once both are in.
  for (const auto& d : next.devices_)
    if (!next.kernels_.empty()) find(next.kernels_, d.default_kernel, origin.c_str(), "kernel");
  for (const auto& k : next.kernels_) {
    if (!next.comm_libraries_.empty())
      find(next.comm_libraries_, k.comm_library, origin.c_str(), "comm library");
    if (!k.curves_from_kernel.empty()) {
      const auto& from = find(next.kernels_, k.curves_from_kernel, origin.c_str(), "kernel");
      if (!from.curves_from_kernel.empty())
        throw InputError(
            fmt::format("{}: kernel '{}': curves_from_kernel '{}' takes its curves from "
                        "another kernel itself; name that one",
                        origin, k.name, from.name));
    }
  }
  for (const auto& c : next.clusters_) {
    find(next.devices_, c.gpu, origin.c_str(), "device");
    find(next.interconnects_, c.intra, origin.c_str(), "interconnect");
    find(next.interconnects_, c.inter, origin.c_str(), "interconnect");
  }
  *this = std::move(next);
}

const Device& Catalog::device(const std::string& name) const {
  return find(devices_, name, "--gpu", "device");
}
const Interconnect& Catalog::interconnect(const std::string& name) const {
  return find(interconnects_, name, "--intra/--inter", "interconnect");
}
const ClusterPreset& Catalog::cluster(const std::string& name) const {
  return find(clusters_, name, "--cluster", "cluster");
}
const KernelSpec& Catalog::kernel(const std::string& name) const {
  return find(kernels_, name, "--kernel", "kernel");
}
const CommLibrary& Catalog::comm_library(const std::string& name) const {
  return find(comm_libraries_, name, "--catalog", "comm library");
}
std::vector<Assumption> Catalog::assumptions(const Hardware& hw) const {
  std::vector<Assumption> out;
  for (const auto& d : devices_) {
    if (d.name != hw.gpu_name) continue;
    for (const auto& a : d.assumptions)
      if ((a.field == "gemm_efficiency" ? hw.gemm_efficiency : hw.efficiency) == a.value)
        out.push_back(a);
  }
  // One entry per link, even when it serves as both intra and inter (TPU ICI).
  for (const auto& n : interconnects_) {
    for (const auto& a : n.assumptions) {
      const bool intra = n.name == hw.intra_name && hw.intra_lat == a.value;
      const bool inter = n.name == hw.inter_name && hw.inter_lat == a.value;
      if (intra || inter) out.push_back(a);
    }
  }
  return out;
}

std::vector<std::string> Catalog::kernel_names() const {
  return names_of(kernels_);
}
std::vector<std::string> Catalog::device_names() const {
  return names_of(devices_);
}
std::vector<std::string> Catalog::interconnect_names() const {
  return names_of(interconnects_);
}
std::vector<std::string> Catalog::cluster_names() const {
  return names_of(clusters_);
}

}  // namespace ringsim
