#include "models/plan/assumption_list.hpp"

#include <fmt/format.h>

#include <cmath>

#include "models/core/parse.hpp"
#include "models/plan/basics.hpp"
#include "models/plan/calibration.hpp"
#include "models/plan/execution.hpp"

namespace ringsim {

namespace {

std::string g(double v) {
  return fmt::format("{:.4g}", v);
}
std::string rate(double v, const char* unit) {
  return fmt::format("{:.4g} {}", v / 1e12, unit);
}

// The row's source: "moved by --set" when the user moved its key, else `s`.
AssumptionRow row(const Catalog& cat, std::string what, std::string value, std::string key,
                  std::string flag, const std::string& s) {
  return {std::move(what), std::move(value), key, std::move(flag),
          cat.moved(key) ? std::string("moved by --set") : s};
}

// A saturated device at its settled clock (catalog gemm_sustained, measured):
// the GEMMs' sustained rate, and the share a burst-timed attention curve keeps.
void sustained_rows(const PlanRequest& r, const Hardware& hw, const Catalog& cat,
                    std::vector<AssumptionRow>& out) {
  const auto& d = cat.device(hw.gpu_name);
  const auto k = "devices." + d.name + ".gemm_sustained.";
  const auto& s = d.gemm_sustained_source;
  const bool shown =
      !s.empty() || cat.moved(k + "bf16") || cat.moved(k + "fp8") || cat.moved(k + "burst");
  if (!shown) return;
  const auto at = d.power.present() ? fmt::format(" at {:g} W", d.power.tdp_w) : std::string();
  out.push_back(row(cat, "GEMM sustained" + at,
                    fmt::format("{:.3f} of the best shape's", hw.gemm_throttle), k + "bf16", "",
                    s));
  if (r.precision == Precision::FP8)
    out.push_back(row(cat, "FP8 GEMM sustained" + at,
                      fmt::format("{:.3f} of the best shape's", hw.gemm_throttle_fp8), k + "fp8",
                      "", s));
  out.push_back(row(cat, "attention sustained" + at,
                    fmt::format("{:.3f} of its curve", hw.attention_throttle), k + "burst", "", s));
}

void device_rows(const PlanRequest& r, const Hardware& hw, const Catalog& cat,
                 std::vector<AssumptionRow>& out) {
  const auto& d = cat.device(hw.gpu_name);
  const auto k = "devices." + d.name + ".";
  // --flops / --efficiency replace the catalog's value for this run.
  const bool flops_flag = std::abs(hw.flops - d.peak_bf16 * hw.clock_scale) > 1e-9 * hw.flops;
  out.push_back(row(cat, "peak bf16", rate(hw.flops, "TFLOP/s"), k + "peak_flops.bf16", "--flops",
                    flops_flag ? "--flops" : d.source));
  out.push_back(
      row(cat, "GEMM efficiency", g(d.gemm_efficiency), k + "gemm_efficiency", "", d.gemm_source));
  sustained_rows(r, hw, cat, out);
  if (r.precision == Precision::FP8)
    out.push_back(row(cat, "FP8 GEMM efficiency", g(d.fp8_gemm_efficiency),
                      k + "fp8_gemm_efficiency", "", d.fp8_gemm_source));
  // A tile's fill in K and the best shape's K (models/kernel/gemm.hpp).
  const bool fp8 = r.precision == Precision::FP8;
  const auto& fill = fp8 ? hw.gemm_fill_fp8 : hw.gemm_fill_bf16;
  if (fill.fill_k > 0)
    out.push_back(row(cat, "GEMM tile fill (K)",
                      fmt::format("{:g} of best K {:g}", fill.fill_k, fill.best_k),
                      k + "gemm_fill." + (fp8 ? "fp8" : "bf16"), "", d.gemm_fill_source));
  out.push_back(row(cat, "HBM bandwidth", fmt::format("{:.4g} TB/s", d.hbm_bandwidth / 1e12),
                    k + "hbm_bandwidth", "--hbm-bandwidth", d.source));
  out.push_back(row(cat, "HBM streaming efficiency", g(d.hbm_efficiency), k + "hbm_efficiency", "",
                    d.hbm_efficiency_source));
  out.push_back(
      row(cat, "attention efficiency (no curve)", g(hw.efficiency), k + "attention_efficiency",
          "--efficiency",
          hw.efficiency != d.attention_efficiency ? "--efficiency" : d.efficiency_source));
}

void kernel_rows(const PlanRequest& r, const Catalog& cat, std::vector<AssumptionRow>& out) {
  const auto& ks = cat.kernel(r.kernel);
  const auto k = "kernels." + ks.name + ".";
  out.push_back(row(cat, "attention rate scale", g(ks.rate_scale), k + "rate_scale", "--kernel",
                    "1: the kernel's published curves as measured (" + ks.source + ")"));
  out.push_back(row(cat, "kernel launch (host)", human_seconds(ks.launch_s), k + "launch_s", "",
                    ks.launch_source));
  for (const auto& op : ks.ops)
    out.push_back(row(cat, fmt::format("{} ({} {})", op.name, op.pass, op.when),
                      fmt::format("{:g} B per {}", op.bytes, op.per),
                      k + "ops." + op.name + ".bytes", "", op.source));
  // The key only where the entry has the field (--set moves fields it has).
  if (r.attention_dropout > 0)
    out.push_back(row(cat, fmt::format("attention dropout {:g}", r.attention_dropout),
                      ks.scores == "hbm"
                          ? "5 B a score forward, 5 backward (scores in HBM; with --cp above 1 "
                            "every block's, an upper bound under a balanced causal layout)"
                          : "inside the kernel: not charged",
                      ks.scores == "hbm" ? k + "scores" : std::string(), "--attention-dropout",
                      ks.scores_source));
}

void link_rows(const std::string& name, const Catalog& cat, std::vector<AssumptionRow>& out) {
  const auto& n = cat.interconnect(name);
  const auto k = "interconnects." + n.name + ".";
  out.push_back(row(cat, n.name + " bandwidth", fmt::format("{:.4g} GB/s", n.bandwidth / 1e9),
                    k + "bandwidth", "--bandwidth", n.source));
  out.push_back(row(cat, n.name + " point-to-point efficiency", g(n.p2p_efficiency),
                    k + "p2p_efficiency", "", n.p2p_efficiency_source));
  out.push_back(row(cat, n.name + " collective efficiency", g(n.collective_efficiency),
                    k + "collective_efficiency", "", n.collective_efficiency_source));
  out.push_back(row(cat, n.name + " latency per hop", human_seconds(n.latency), k + "latency",
                    "--latency", n.latency_source));
}

void framework_rows(const PlanRequest& r, std::vector<AssumptionRow>& out) {
  const auto e = execution(r);
  const auto k = "frameworks." + to_string(r.framework) + ".";
  auto add = [&](std::string what, std::string value, const std::string& field, std::string flag,
                 std::string source) {
    out.push_back({std::move(what), std::move(value), k + field, std::move(flag),
                   r.moves.moved(field) ? std::string("moved by --set") : std::move(source)});
  };
  add("host issue per kernel", human_seconds(e.dispatch_s), "dispatch_s", "", e.source);
  add("device gap per kernel", human_seconds(e.gap_s), "gap_s", "", e.source);
  add("kernels per layer, forward", std::to_string(e.kernels_fwd), "kernels_fwd", "", e.source);
  add("kernels per layer, backward", std::to_string(e.kernels_bwd), "kernels_bwd", "", e.source);
  std::string layouts;
  for (auto l : framework_layouts(r)) layouts += (layouts.empty() ? "" : "+") + to_string(l);
  add("layouts implemented", r.any_layout ? "every (--framework any)" : layouts, "layouts",
      "--framework any", framework_layouts_source(r.framework));
  add("calibration factor", fmt::format("x{:.3f}", r.calibration), "calibration",
      "--calibration none", calibration_line(r));
  const auto& fw = framework_profile(r);
  const double reserve = r.moves.allocator_reserve.value_or(fw.allocator_reserve);
  add("allocator reserve (memory)", fmt::format("{:.0f}% of the tensors", 100 * reserve),
      "allocator_reserve", "", fw.allocator_source);
}

}  // namespace

std::vector<AssumptionRow> plan_assumptions(const PlanRequest& r, const Hardware& hw,
                                            const Catalog& cat) {
  std::vector<AssumptionRow> out;
  device_rows(r, hw, cat, out);
  kernel_rows(r, cat, out);
  if (hw.bandwidth_override)
    out.push_back({"every ring link (override)",
                   fmt::format("{:.4g} GB/s, {}", hw.intra_bw / 1e9, human_seconds(hw.intra_lat)),
                   "interconnects.NAME.bandwidth", "--bandwidth | --latency",
                   "--bandwidth/--latency replace the links below"});
  if (!hw.intra_name.empty()) link_rows(hw.intra_name, cat, out);
  if (!hw.inter_name.empty() && hw.inter_name != hw.intra_name && r.gpus > hw.gpus_per_node)
    link_rows(hw.inter_name, cat, out);
  framework_rows(r, out);
  return out;
}

std::string assumptions_text(const std::vector<AssumptionRow>& rows) {
  std::string out =
      "Assumptions (each moved by --set KEY=VALUE, or the flag beside it; --json gives each "
      "source in full)\n";
  for (const auto& a : rows) {
    auto src = a.source;
    if (src.size() > 96) src = src.substr(0, 93) + "...";
    out += fmt::format("    {:<36} {:>16}  --set {}{}\n      source: {}\n", a.what, a.value, a.key,
                       a.flag.empty() ? "" : " | " + a.flag, src);
  }
  return out;
}

nlohmann::json assumptions_json(const std::vector<AssumptionRow>& rows) {
  auto j = nlohmann::json::array();
  for (const auto& a : rows)
    j.push_back({{"what", a.what},
                 {"value", a.value},
                 {"set", a.key},
                 {"flag", a.flag.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.flag)},
                 {"source", a.source}});
  return j;
}

}  // namespace ringsim
