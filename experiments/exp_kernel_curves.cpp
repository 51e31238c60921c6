// `ringsim experiment kernel-curves`: each kernel implementation's
// interpolated throughput against its published points, one panel per device
// and pass (head dim 128), all head dims in data.csv. In-process: the curves
// are catalog data (models/data/kernels.json) and the interpolation is
// models/kernel/curves.hpp, the same code the compute model runs. Declared as
// data (grid_experiment.hpp): each curve is two configurations, its
// interpolated line over a log grid of lengths and its published points (at
// their own lengths).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "experiments/grid_experiment.hpp"
#include "experiments/list.hpp"
#include "experiments/markdown.hpp"
#include "models/core/catalog.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/kernel/curves.hpp"

namespace ringsim::exp {
namespace {

using nlohmann::json;

const char* mask_name(CallMask m) {
  return m == CallMask::Full ? "full" : "causal";
}

// Sequence lengths of the interpolated lines: a log grid past both ends of
// the published range, so the clamping shows.
std::string grid(bool quick) {
  std::string s;
  const int per_octave = quick ? 1 : 4;
  for (int i = 0; i <= 10 * per_octave; ++i)
    s += fmt::format("{}{:.10g}", s.empty() ? "" : ",",
                     256.0 * std::pow(2.0, double(i) / per_octave));
  return s;
}

std::string lengths_of(const KernelCurve& c) {
  std::string s;
  for (double L : c.lengths) s += fmt::format("{}{:.10g}", s.empty() ? "" : ",", L);
  return s;
}

// Devices with at least one published curve (directly or by alias).
std::vector<std::string> devices() {
  const auto& cat = Catalog::embedded();
  std::vector<std::string> v;
  for (const auto& d : cat.devices())
    for (const auto& k : cat.kernels()) {
      const KernelSpec* from =
          k.curves_from_kernel.empty() ? nullptr : &cat.kernel(k.curves_from_kernel);
      if (k.rates == "curves" && KernelCurves(k, from, d.name, 0).published()) {
        v.push_back(d.name);
        break;
      }
    }
  return v;
}

// A device that borrows another's curves (H200: H100's) adds no panel.
bool own_curves(const std::string& dev) {
  for (const auto& k : Catalog::embedded().kernels())
    if (k.rates == "curves" && k.curves_from_kernel.empty() &&
        KernelCurves(k, nullptr, dev, 0).curve_device() == dev)
      return true;
  return false;
}

// Whether every curve published for the device is forward+backward (A100):
// then one rate stands for both passes, and one panel shows it, not two
// identical ones.
bool fwdbwd_only(const std::string& dev) {
  for (const auto& k : Catalog::embedded().kernels()) {
    if (k.rates != "curves" || !k.curves_from_kernel.empty()) continue;
    for (const auto& c : k.curves)
      if (c.device == dev && c.pass != "fwdbwd") return false;
  }
  return true;
}

// The published curve of this pass and mask, and how the pass was obtained.
struct Origin {
  const KernelCurve* direct = nullptr;  // points drawn for this pass
  const KernelCurve *fb = nullptr, *f = nullptr;
  std::string how = "published";
};

Origin origin(const KernelSpec& k, const std::string& curve_dev, const std::string& pass,
              CallMask mask, int hd) {
  Origin o;
  for (const auto& kc : k.curves) {
    if (kc.device != curve_dev || kc.mask != mask || kc.head_dim != hd) continue;
    if (kc.pass == pass) o.direct = &kc;
    if (kc.pass == "fwdbwd") o.fb = &kc;
    if (kc.pass == "fwd") o.f = &kc;
  }
  // Only forward+backward published: that curve is the rate of both passes,
  // and its points are drawn on both.
  const bool fb_only = !o.direct && o.fb && !o.f;
  if (fb_only) {
    o.direct = o.fb;
    o.how = "forward+backward rate for both passes";
  } else if (!o.direct) {
    if (pass == "bwd" && o.fb && o.f)
      o.how = "derived: 2.5 / (3.5/fwd+bwd - 1/fwd)";
    else if (o.fb)
      o.how = "forward+backward rate for both passes";
    else
      o.how = "scaled by the other pass's causal/full ratio";
  } else if (o.direct->reading.find("machine") != std::string::npos) {
    o.how = "published (MT)";
  }
  return o;
}

// Every curve: its interpolated line and, when published, its points.
std::vector<Config> curves() {
  const auto& cat = Catalog::embedded();
  std::vector<Config> v;
  for (const auto& dev : devices())
    for (const std::string pass : {"fwd", "bwd"})
      for (const auto& k : cat.kernels()) {
        if (k.rates != "curves" || !k.curves_from_kernel.empty()) continue;
        const KernelCurves c(k, nullptr, dev, 0);
        if (!c.published()) continue;
        for (CallMask mask : {CallMask::Full, CallMask::Causal})
          for (int hd : c.head_dims()) {
            const auto o = origin(k, c.curve_device(), pass, mask, hd);
            const std::string name = fmt::format("{} {}", k.name, mask_name(mask));
            std::map<std::string, std::string> facts{
                {"kernel", k.name},
                {"device", dev},
                {"curves_of", c.curve_device()},
                {"pass", pass},
                {"mask", mask_name(mask)},
                {"head_dim", std::to_string(hd)},
                {"how", o.how},
                {"panel", hd == 128 && own_curves(dev) && !(pass == "bwd" && fwdbwd_only(dev))
                              ? dev + "/" + pass
                              : "-"}};
            auto interp = facts;
            interp["kind"] = "interpolated";
            v.push_back({name, {}, interp});
            if (!o.direct) continue;
            auto pub = facts;
            pub["kind"] = "published";
            pub["curve_pass"] = o.direct->pass;
            pub["reading"] = o.direct->reading;
            pub["source"] = o.direct->source;
            const auto L = lengths_of(*o.direct);
            v.push_back({name + " published", {}, pub, {{"--length", L, L}}});
          }
      }
  return v;
}

// One point: the interpolated rate at the length; for a published point its
// value too, and whether the curve is clamped past its ends; for a derived
// backward, the forward+backward identity's largest gap.
json evaluate(const Config& c, const std::map<std::string, std::string>& axes) {
  const auto& cat = Catalog::embedded();
  const auto& f = c.facts;
  const auto& k = cat.kernel(f.at("kernel"));
  const KernelCurves curves(k, nullptr, f.at("device"), 0);
  const bool bwd = f.at("pass") == "bwd";
  const CallMask mask = f.at("mask") == "full" ? CallMask::Full : CallMask::Causal;
  const int hd = std::stoi(f.at("head_dim"));
  const double L = parse_real("--length", axes.at("--length"), 1, 1e9);
  const double peak = cat.device(f.at("device")).peak(DType::BF16);
  const double rate = curves.rate(bwd, mask, hd, L);
  json j{{"interpolated_tflops", rate / 1e12}};
  const auto o = origin(k, curves.curve_device(), f.at("pass"), mask, hd);
  if (f.at("kind") == "published") {
    const auto& d = *o.direct;
    const auto it = std::find_if(d.lengths.begin(), d.lengths.end(),
                                 [&](double x) { return std::fabs(x - L) <= 1e-9 * L; });
    if (it == d.lengths.end())
      throw InputError("kernel-curves: no published point at " + axes.at("--length"));
    const double t = d.tflops[static_cast<std::size_t>(it - d.lengths.begin())];
    const bool clamped =
        curves.rate(bwd, mask, hd, d.lengths.front() / 4) / 1e12 == d.tflops.front() &&
        curves.rate(bwd, mask, hd, d.lengths.back() * 4) / 1e12 == d.tflops.back();
    j.update({{"tflops", t}, {"fraction_of_peak", t * 1e12 / peak}, {"clamped", clamped ? 1 : 0}});
    return j;
  }
  j.update({{"tflops", rate / 1e12}, {"fraction_of_peak", rate / peak}});
  if (bwd && !o.direct && o.fb && o.f) {
    double gap = 0;
    for (std::size_t i = 0; i < o.fb->lengths.size(); ++i) {
      const double x = o.fb->lengths[i], rfb = 1e12 * o.fb->tflops[i];
      const double rb = curves.rate(true, mask, hd, x), rf = curves.rate(false, mask, hd, x);
      gap = std::max(gap, std::fabs(3.5 / rfb - (1 / rf + 2.5 / rb)) / (3.5 / rfb));
    }
    j["identity_gap"] = gap;
  }
  return j;
}

bool published(const GridPoint& p) {
  return p.config->facts.at("kind") == "published";
}

void checks(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  bool through = true, identity = true, clamped = true, sourced = true;
  std::string through_detail, identity_detail;
  std::set<std::string> seen;
  for (const auto& p : pts) {
    if (!p.ok) continue;
    const auto& f = p.config->facts;
    const auto where = fmt::format("{} {} {} {} {}", f.at("kernel"), f.at("device"), f.at("pass"),
                                   f.at("mask"), f.at("head_dim"));
    if (published(p)) {
      const double t = p.value("tflops"), got = p.value("interpolated_tflops");
      if (std::fabs(got - t) > 1e-9 * t) {
        through = false;
        through_detail += fmt::format("{} L={}; ", where, p.axes.at("--length"));
      }
      clamped = clamped && p.value("clamped") == 1;
      sourced = sourced && !f.at("source").empty();
    } else if (p.value("identity_gap") > 1e-9 && seen.insert(where).second) {
      identity = false;
      identity_detail += where + "; ";
    }
  }
  out.check("interpolated curves pass through every published point", through,
            through ? "log-linear interpolation reproduces each point exactly" : through_detail);
  out.check("derived backward rates satisfy fwd+bwd = 3.5x forward FLOPs", identity,
            identity ? "3.5/r_fb = 1/r_f + 2.5/r_b at every published length" : identity_detail);
  out.check("outside the published range the rate is clamped", clamped,
            "a quarter below the shortest and 4x past the longest length read the end points");
  out.check("every published point names its source", sourced,
            "kernels.json 'source' and 'reading'");
}

// Lines without markers (dashed: causal), one colour per kernel and mask;
// the published points as hollow circles in their line's colour.
void style(const std::vector<GridPoint>&, const Context&, Output& out) {
  for (auto& panel : out.plot.panels) {
    std::map<std::string, std::string> colour;
    std::vector<Series> lines, points;
    for (auto& s : panel.series) {
      const auto pub = s.name.find(" published");
      if (pub != std::string::npos) {
        Series x = scatter_series(s.name, "", "circle");
        x.points = s.points;
        x.hollow = true;
        x.legend = false;
        points.push_back(x);
        continue;
      }
      s.color = colour[s.name] = palette_color(colour.size());
      s.markers = false;
      s.dash = s.name.find(" causal") != std::string::npos;
      lines.push_back(s);
    }
    for (auto& x : points) x.color = colour[x.name.substr(0, x.name.find(" published"))];
    // Published points first, as before: lines drawn over them.
    panel.series = points;
    panel.series.insert(panel.series.end(), lines.begin(), lines.end());
  }
}

void table(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  const auto& cat = Catalog::embedded();
  MdTable tab({"device", "kernel", "pass", "mask", "head dim", "TFLOP/s at 512", "at 4K", "at 16K",
               "of peak at 16K", "how"});
  std::map<const Config*, std::map<double, const GridPoint*>> by;
  std::vector<const Config*> order;
  for (const auto& p : pts)
    if (p.ok && !published(p)) {
      if (!by.count(p.config)) order.push_back(p.config);
      by[p.config][p.axis("--length")] = &p;
    }
  auto at = [&](const Config* c, double L) {
    const auto it = by[c].find(L);
    return it == by[c].end() ? std::string("-") : sig(it->second->value("tflops"));
  };
  for (const auto* c : order) {
    const auto& f = c->facts;
    const auto it = by[c].find(16384);
    tab.add({f.at("device"), f.at("kernel"), f.at("pass"), f.at("mask"), f.at("head_dim"),
             at(c, 512), at(c, 4096), at(c, 16384),
             it == by[c].end()
                 ? "-"
                 : fmt::format("{:.0f}%", 100 * it->second->value("fraction_of_peak")),
             f.at("how")});
  }
  std::string& rep = out.report;
  rep += "## Comparison with published values: the kernels' benchmark curves\n\n";
  rep +=
      "Every throughput is useful TFLOP/s (4 x head_dim per visible pair forward, 2.5x that "
      "backward) of a square call, as the benchmarks count it. `how` says whether a pass and "
      "mask is published, a machine transcription (MT, unverified), or derived by a rule "
      "(docs/models.md, \"Interpolation rules\").\n\n";
  rep += tab.str();
  rep += "\n## Sources\n\n";
  std::set<std::string> srcs;
  for (const auto& k : cat.kernels())
    for (const auto& c : k.curves) srcs.insert(c.source);
  for (const auto& s : srcs) rep += "- " + s + "\n";
}

// A kernel's interpolated rate at length L (head dim 128) on a device.
double rate_at(const std::vector<GridPoint>& pts, const std::string& kernel, const std::string& dev,
               const std::string& pass, const std::string& mask, double L) {
  for (const auto& p : pts) {
    const auto& f = p.config->facts;
    if (p.ok && !published(p) && f.at("kernel") == kernel && f.at("device") == dev &&
        f.at("pass") == pass && f.at("mask") == mask && f.at("head_dim") == "128" &&
        p.axis("--length") == L)
      return p.value("tflops");
  }
  return std::nan("");
}

void reading(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  const auto& cat = Catalog::embedded();
  const double peak = cat.device("h100-sxm").peak(DType::BF16) / 1e12;
  const double fa2 = rate_at(pts, "fa2", "h100-sxm", "fwd", "full", 16384),
               cudnn = rate_at(pts, "cudnn", "h100-sxm", "fwd", "full", 16384),
               fa3 = rate_at(pts, "fa3", "h100-sxm", "fwd", "full", 16384);
  const double fa3_causal_512 = rate_at(pts, "fa3", "h100-sxm", "fwd", "causal", 512),
               fa3_full_512 = rate_at(pts, "fa3", "h100-sxm", "fwd", "full", 512);
  out.report += fmt::format(
      R"(
## Reading

- On H100 the three kernels a PyTorch or TransformerEngine user meets differ by up to {:.1f}x at head
  dim 128: FlashAttention-2 stays near {:.0f} TFLOP/s forward (about {:.0f}% of the {:.0f} TFLOP/s
  peak), cuDNN reaches about {:.0f} and FlashAttention-3 about {:.0f} (at 16K). One efficiency constant
  per device cannot stand for all three; `--kernel` picks the implementation, and the device's default
  is what PyTorch runs on it.
- Causal calls run slower than full ones at every length, most at short lengths (FA3 forward at 512:
  {:.0f} vs {:.0f}), where the diagonal tiles are a large share of the work; short chunks also run below
  their long-sequence rate. Both matter to ring attention, whose steps are chunks of c or c/2 tokens.
- The backward curves of FlashAttention-3 and cuDNN are machine transcriptions of the paper's figure
  (marked MT); FlashAttention-2's backward on A100 is published only as forward+backward, so that rate
  stands for both passes there.
- Devices without a published curve (B200, MI300X, TPUs) run at the catalog's prior fraction of peak,
  stated in the catalog as an assumption; a measured profile (`ringsim profile`) replaces it.
)",
      std::max(cudnn, fa3) / fa2, fa2, 100 * fa2 / peak, peak, cudnn, fa3, fa3_causal_512,
      fa3_full_512);
}

GridExperiment declaration() {
  GridExperiment g;
  g.name = "kernel-curves";
  g.title = "Attention kernels: interpolated curves against published points";
  g.summary =
      "Each kernel implementation in the catalog (FlashAttention-2, FlashAttention-3, cuDNN, ...) "
      "on "
      "each device with published throughput: the interpolation the compute model uses, drawn "
      "through the published points, forward and backward, causal and full.";
  g.caption =
      "Each curve is a kernel on a device, pass, mask and head dim (models/data/kernels.json): "
      "its interpolated rate (models/kernel/curves.hpp, evaluated in process) over lengths from "
      "256 to 256K, past both ends of the published range, and its published points at their own "
      "lengths.";
  g.configs = curves();
  g.axes = {{"--length", grid(false), grid(true)}};
  g.measures = {{"tflops", "tflops", ""},
                {"fraction_of_peak", "fraction_of_peak", ""},
                {"interpolated_tflops", "interpolated_tflops", ""}};
  const auto& cat = Catalog::embedded();
  for (const auto& dev : devices()) {
    if (!own_curves(dev)) continue;
    for (const std::string pass : {"fwd", "bwd"}) {
      const bool both = fwdbwd_only(dev);
      if (both && pass == "bwd") continue;
      PanelDecl p{fmt::format("{}: {} (head dim 128)", cat.device(dev).display,
                              both            ? "forward + backward (one published rate)"
                              : pass == "fwd" ? "forward"
                                              : "backward"),
                  "--length",
                  "tflops",
                  dev + "/" + pass,
                  unit_axis("sequence length L (tokens, K = 1024; square call, batch x L = 16K)",
                            "tokens", true, 2),
                  unit_axis("throughput (TFLOP/s of useful FLOPs)", "")};
      p.legend = "right";
      g.panels.push_back(p);
    }
  }
  g.plot_title = "Attention kernels: interpolated throughput vs published points (head dim 128)";
  g.plot_note =
      "Lines: ringsim's interpolation (log-linear in L, clamped outside; dashed: causal). Hollow "
      "markers: the published points (FlashAttention-2/-3 papers, the flash-attention "
      "repository's benchmark charts, cudnn-frontend's SDPA benchmark files for Blackwell). "
      "Backward lines without markers are derived (see report).";
  g.plot_width = 1600;
  g.plot_height = 900;
  g.list_points = false;
  g.evaluate = evaluate;
  g.analyses = {checks, style, table, reading};
  return g;
}

}  // namespace

Experiment kernel_curves_experiment() {
  return declare(declaration());
}

}  // namespace ringsim::exp
