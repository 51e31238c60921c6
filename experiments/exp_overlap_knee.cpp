// overlap-knee: exposed communication vs block size per interconnect. Below
// the minimum block a ring step waits for its K/V transfer; above it the
// transfer hides and the exposed share drops to zero: the knee is the minimum
// block (Ring Attention sec. 3, c >= F/B). Simulated (SimGrid, one process per
// point) and analytic side by side, on a flat 8-device ring of one link type,
// in the paper's setting (MHA, full mask, forward, bf16).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "experiments/list.hpp"
#include "experiments/markdown.hpp"
#include "experiments/runner.hpp"
#include "models/core/catalog.hpp"
#include "models/core/parse.hpp"

namespace ringsim::exp {

namespace {

constexpr const char* kGpu = "a100-80gb";
constexpr const char* kModel = "llama2-7b";  // MHA, as the paper's derivation
constexpr std::int64_t kDevices = 8;
// Below this share a step is counted as hidden (latency rounding, not waiting).
constexpr double kHidden = 1e-3;

struct Sweep {
  std::string link, label, efficiency;  // efficiency "" = catalog value
  double published = 0;                 // Table 2 min block, 0 = none
};

struct Pt {
  std::size_t sweep;
  std::int64_t block;
  std::string engine;
};

void run(const Context& ctx, Output& out) {
  std::vector<Sweep> sweeps{{"nvlink3", "NVLink 3, 300 GB/s", "", 0},
                            {"ib-ndr", "IB NDR, 50 GB/s", "", 0},
                            {"ib-hdr", "IB HDR, 25 GB/s", "", 0},
                            {"ib-edr", "IB EDR, 12.5 GB/s", "", 0}};
  // The paper's assumption (peak FLOP/s): Table 2's A100 rows as published.
  const auto& cat = Catalog::embedded();
  for (const auto& r : cat.paper_table2()) {
    if (r.host == "A100 NVLink")
      sweeps.push_back({"nvlink3", "A100 NVLink at peak (Table 2)", "1", r.published_min_block});
    if (r.host == "A100 InfiniBand")
      sweeps.push_back({"ib-edr", "A100 InfiniBand at peak (Table 2)", "1", r.published_min_block});
  }
  std::vector<std::int64_t> blocks;
  if (ctx.quick) {
    sweeps = {sweeps[0], sweeps[3]};
    blocks = {512, 2048, 8192, 32768};
  } else {
    for (std::int64_t b = 256; b <= 131072; b *= 2) {
      blocks.push_back(b);
      if (b < 131072) blocks.push_back(b + b / 2);
    }
  }
  std::vector<std::string> engines{"analytic"};
  if (ctx.engine == "simgrid") engines.push_back("simgrid");

  std::vector<Pt> pts;
  std::vector<proc::RunSpec> specs;
  for (std::size_t s = 0; s < sweeps.size(); ++s)
    for (auto b : blocks)
      for (const auto& e : engines) {
        pts.push_back({s, b, e});
        proc::RunSpec spec;
        spec.hardware.gpu = kGpu;
        spec.hardware.platform = Platform::Flat;
        spec.hardware.intra = sweeps[s].link;
        // The law c >= F/B is about a kernel at a fixed rate with free
        // overlap: the roofline. A real kernel's launch, merge and overlap
        // interference (layouts, causal-balance) move the knee's height,
        // not where it is.
        spec.hardware.kernel = "roofline";
        if (!sweeps[s].efficiency.empty())
          spec.hardware.efficiency = parse_real("efficiency", sweeps[s].efficiency, 1e-3, 1);
        spec.workload.devices = kDevices;
        spec.workload.block = b;
        spec.workload.model = kModel;
        spec.workload.causal = false;
        spec.workload.pass = Pass::Fwd;
        spec.sim.engine = engine_of(e);
        specs.push_back(std::move(spec));
      }
  if (ctx.log)
    *ctx.log << fmt::format("  {} run(s), engines: {}\n", specs.size(), join(engines, ", "));
  const auto runs = run_points(ctx, out, specs, 600);

  out.data.set_columns({"link", "label", "efficiency_override", "block", "engine", "time_s",
                        "compute_only_s", "exposed_comm_s", "exposed_share", "comm_s_per_step",
                        "compute_s_per_step", "min_block", "published_min_block"});
  struct Knee {
    double min_block = 0;
    std::int64_t hidden_from = 0, exposed_below = 0;  // from the sweep (analytic)
  };
  std::vector<Knee> knees(sweeps.size());
  std::map<std::pair<std::size_t, std::int64_t>, std::map<std::string, double>> times;
  bool side_ok = true, agree = true;
  std::string side_detail, agree_detail;
  double worst_gap = 0;
  Panel main, paper;
  main.title = "Catalog efficiency (A100 at 0.70 of peak): exposed share vs block";
  paper.title = "Paper's assumption (peak FLOP/s) vs Table 2's published minimum block";
  main.x = paper.x = unit_axis("block c (tokens per device, K = 1024)", "tokens", true, 2);
  main.y = paper.y =
      make_axis("exposed communication / total time (fraction)", false, 10, 0.0, 1.0);
  main.legend = paper.legend = "bottom";
  std::map<std::size_t, Series> an, sim;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const auto& p = pts[i];
    const auto& sw = sweeps[p.sweep];
    if (!runs[i].ok) continue;
    const auto& j = runs[i].s;
    const double t = j.time_s, ex = j.exposed_comm_s, share = t > 0 ? ex / t : 0;
    const double mb = static_cast<double>(j.min_block.value_or(0));
    out.data.add_row()
        .set("link", sw.link)
        .set("label", sw.label)
        .set("efficiency_override", sw.efficiency)
        .set("block", p.block)
        .set("engine", j.engine)
        .set("time_s", t)
        .set("compute_only_s", j.compute_only_s)
        .set("exposed_comm_s", ex)
        .set("exposed_share", share)
        .set("comm_s_per_step", j.comm_s_per_step)
        .set("compute_s_per_step", j.compute_s_per_step)
        .set("min_block", mb)
        .set("published_min_block", sw.published > 0 ? format_number(sw.published) : std::string());
    times[{p.sweep, p.block}][p.engine] = t;
    auto& k = knees[p.sweep];
    k.min_block = mb;
    if (p.engine == "analytic") {
      if (share < kHidden && (k.hidden_from == 0 || p.block < k.hidden_from))
        k.hidden_from = p.block;
      if (share >= kHidden) k.exposed_below = std::max(k.exposed_below, p.block);
    }
    // The knee is the minimum block: hidden from 1.05x above, exposed from
    // 0.8x below (margins for the latency term and rounding to whole tokens).
    if ((p.block >= 1.05 * mb && share >= kHidden) || (p.block <= 0.8 * mb && share < kHidden)) {
      side_ok = false;
      side_detail += fmt::format("{} c={} {}: share {:.4f}, min block {}; ", sw.label, p.block,
                                 p.engine, share, mb);
    }
    if (!an.count(p.sweep)) {
      const std::string c =
          palette_color(sw.efficiency.empty() ? p.sweep : (sw.link == "nvlink3" ? 0 : 3));
      an[p.sweep] = line_series(sw.label + ": analytic", c);
      an[p.sweep].markers = false;
      sim[p.sweep] = scatter_series(sw.label + ": simulated", c, "circle");
      sim[p.sweep].hollow = true;
    }
    (p.engine == "analytic" ? an : sim)[p.sweep].points.push_back(
        {static_cast<double>(p.block), share});
  }
  for (const auto& [key, m] : times)
    if (m.count("analytic") && m.count("simgrid")) {
      const double gap = std::fabs(m.at("simgrid") - m.at("analytic")) / m.at("analytic");
      worst_gap = std::max(worst_gap, gap);
      // A flat ring has one flow per link, so the simulation must match the
      // closed form; 1e-6 leaves room only for floating-point summation order.
      if (gap > 1e-6) {
        agree = false;
        agree_detail += fmt::format("{} c={}: {:.2e}; ", sweeps[key.first].label, key.second, gap);
      }
    }
  out.check("knee at the minimum block", side_ok,
            side_ok ? "exposed share < 0.1% from 1.05x the minimum block, above it below 0.8x, "
                      "every link and engine"
                    : side_detail);
  if (engines.size() > 1)
    out.check("simulated = analytic on a flat ring", agree,
              agree ? fmt::format("largest relative gap {:.1e}", worst_gap) : agree_detail);

  for (std::size_t s = 0; s < sweeps.size(); ++s) {
    if (!an.count(s)) continue;
    Panel& p = sweeps[s].efficiency.empty() ? main : paper;
    p.series.push_back(an[s]);
    if (!sim[s].points.empty()) p.series.push_back(sim[s]);
    Series v = line_series(
        fmt::format("{}: min block {}", sweeps[s].label, human_tokens(knees[s].min_block)),
        an[s].color, true);
    v.width = 1.2;
    v.points = {{knees[s].min_block, 0.0}, {knees[s].min_block, 1.0}};
    p.series.push_back(v);
    if (sweeps[s].published > 0) {
      Series pv = line_series(
          fmt::format("published {} ({})", human_tokens(sweeps[s].published), sweeps[s].label),
          color_for("published", 0), true);
      pv.width = 2.2;
      pv.points = {{sweeps[s].published, 0.0}, {sweeps[s].published, 0.9}};
      p.series.push_back(pv);
    }
  }
  out.plot.panels = {main};
  if (!paper.series.empty()) out.plot.panels.push_back(paper);
  out.plot.columns = static_cast<int>(out.plot.panels.size());
  out.plot.width = out.plot.columns == 2 ? 1900 : 1100;
  out.plot.height = 850;
  out.plot.title = fmt::format(
      "Overlap knee: exposed communication vs block size, {} devices of {}, {} (MHA), full "
      "mask, forward",
      kDevices, kGpu, kModel);
  out.plot.note = fmt::format(
      "Lines: analytic (ringsim run --engine analytic); circles: {} (one process per point). "
      "Dashed verticals: the "
      "minimum block ringsim reports (min_block, with link latency); dark grey dashed: Ring "
      "Attention "
      "Table 2's published "
      "minimum block. Flat ring of one link type (--platform flat --intra LINK).",
      engines.size() > 1 ? "SimGrid (ringsim run --engine simgrid)"
                         : "no simulation (analytic engine only in this run)");

  MdTable knee_tab({"link", "efficiency", "ours: min block", "sweep: exposed up to",
                    "sweep: hidden from", "published (Table 2)", "rel. diff"});
  for (std::size_t s = 0; s < sweeps.size(); ++s) {
    if (!an.count(s)) continue;
    const auto& sw = sweeps[s];
    const double eff =
        sw.efficiency.empty() ? cat.device(kGpu).attention_efficiency : std::stod(sw.efficiency);
    knee_tab.add({sw.label, sig(eff, 2),
                  human_tokens(knees[s].min_block) + fmt::format(" ({:.0f})", knees[s].min_block),
                  knees[s].exposed_below ? std::to_string(knees[s].exposed_below) : "-",
                  knees[s].hidden_from ? std::to_string(knees[s].hidden_from) : "-",
                  sw.published > 0 ? human_tokens(sw.published) : "no published value",
                  sw.published > 0 ? rel_diff(knees[s].min_block, sw.published) : ""});
  }
  auto& rep = out.report;
  rep += "## Comparison with published values\n\n";
  rep +=
      "Ring Attention (arXiv 2310.01889) Table 2 publishes the minimum block for A100 on NVLink "
      "(1.0K) and on "
      "InfiniBand (24.5K), at peak FLOP/s. The rows 'at peak' run the same sweep with "
      "`--efficiency 1` (the "
      "paper's assumption, not a fit); the other rows use the catalog's 0.70 for A100 and have no "
      "published "
      "value. 'sweep' columns: the largest swept block whose exposed share is at least 0.1%, and "
      "the smallest "
      "below it (analytic).\n\n";
  rep += knee_tab.str();
  rep += fmt::format(R"(
## Reading

- Every curve has the knee the paper predicts: the exposed share falls to zero at the minimum block and stays
  there; below it, each step waits for (transfer - compute), which grows as the block shrinks because
  compute falls as c^2 and the transfer only as c.
- At peak FLOP/s our minimum block is Table 2's F/B plus a small latency term (the link's latency must also
  hide); the paper's figures are F/B rounded to 0.1K (A100 InfiniBand printed 24.5K for 24.96K).
- With the catalog's kernel efficiency (0.70 for A100) the knee moves down by that factor: a slower kernel
  hides the same transfer with a smaller block. That is not a faster run; the step takes longer.
- The simulated points lie on the analytic curves (largest relative time gap {:.1e}): on a flat ring every
  link carries one flow per step, so the event simulation has nothing to add. They part where links are
  shared (node boundaries, tori, all-to-all), which the layouts and scale experiments exercise.
)",
                     worst_gap);
}

}  // namespace

Experiment overlap_knee_experiment() {
  return {"overlap-knee", "Overlap knee: exposed communication vs block size",
          "Exposed communication against block size on a flat 8-device A100 ring over NVLink 3 and "
          "InfiniBand "
          "EDR/HDR/NDR, simulated and analytic; the knee sits at the minimum block, and at peak "
          "FLOP/s at the "
          "Ring Attention paper's Table 2 values.",
          run};
}

}  // namespace ringsim::exp
