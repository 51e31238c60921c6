// packed-documents: ring, zigzag, striped and all-gather over a packed
// sequence, each in sequence mode (the layout splits the packed sequence) and
// document mode (it splits every document, TransformerEngine's THD), as the
// mean document length goes from 1/16 of the sequence to the whole of it: 8
// H100s, 8K tokens per GPU, Llama 3.1 8B attention (32 heads, 8 KV heads, head
// dim 128), forward + backward, flash-attn 2's kernels (ring-flash-attention's).
// Beside them, the four packings of ring-flash-attention's varlen benchmark,
// whose published shares of the ideal the report sets ringsim's against.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "experiments/grid_experiment.hpp"
#include "experiments/list.hpp"
#include "experiments/markdown.hpp"
#include "models/core/documents.hpp"
#include "models/core/parse.hpp"

namespace ringsim::exp {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kSeq = 8.0 * 8192;  // 8 GPUs x 8K tokens

const char* const kFixed = "Documents of one length: time vs document length";
const char* const kLognormal = "Lognormal lengths (sigma 1): time vs mean document length";

// ring-flash-attention's benchmark (benchmark/benchmark_varlen_kvpacked_func.py):
// every rank holds 8K tokens packed by the same local cu_seqlens, so each
// global document is 8 x a local one, split over the ranks (document mode).
const char* const kLocal = "8192|256,7392,544|4096,4096|3104,3200,1600,160,128";
const char* const kGlobal = "65536|2048,59136,4352|32768,32768|24832,25600,12800,1280,1024";

const std::string& fact(const GridPoint& p, const std::string& k) {
  return p.config->facts.at(k);
}

// The mean document length --documents asks for: L (fixed:L), MEAN
// (lognormal:MEAN,SIGMA, before the last document is cut to fit), a list's mean,
// a dataset histogram's mean (uniform within bins).
double mean_length(const std::string& documents) {
  const auto s = parse_documents("--documents", documents);
  switch (s.kind) {
    case DocumentSpec::Kind::Fixed:
      return static_cast<double>(s.lo);
    case DocumentSpec::Kind::Uniform:
      return 0.5 * static_cast<double>(s.lo + s.hi);
    case DocumentSpec::Kind::Lognormal:
      return s.mean;
    case DocumentSpec::Kind::Dataset:
      return s.histogram->mean();
    case DocumentSpec::Kind::Lengths:
      return std::accumulate(s.lengths.begin(), s.lengths.end(), 0.0) /
             static_cast<double>(s.lengths.size());
  }
  return kNan;
}

double mean_over_seq(const GridPoint& p, const std::vector<GridPoint>&) {
  return mean_length(p.axes.at("--documents")) / p.value("seq_len");
}

std::string label(const GridPoint& p) {
  return p.axes.at("--layout") + " / " + p.axes.at("--pack");
}

// The point with the same configuration and documents under `layout`/`pack`.
const GridPoint* other(const std::vector<GridPoint>& all, const GridPoint& p,
                       const std::string& layout, const std::string& pack) {
  for (const auto& q : all)
    if (q.ok && q.config == p.config && q.engine == p.engine &&
        q.axes.at("--documents") == p.axes.at("--documents") && q.axes.at("--layout") == layout &&
        q.axes.at("--pack") == pack)
      return &q;
  return nullptr;
}

double speedup_over_ring(const GridPoint& p, const std::vector<GridPoint>& all) {
  const auto* r = other(all, p, "ring", "sequence");
  return r ? r->value("time_s") / p.value("time_s") : kNan;
}

std::function<std::string(const GridPoint&)> series_in(std::string sweep) {
  return [sweep](const GridPoint& p) -> std::string {
    return fact(p, "sweep") == sweep ? label(p) : "";
  };
}

// Colour = layout (the one style table); dashed = document mode.
Series layout_series(const std::string& name, const GridPoint& p) {
  const auto& st = style_for(p.axes.at("--layout"));
  Series s = line_series(name, st.color, p.axes.at("--pack") == "document");
  s.markers = true;
  s.marker = st.marker;
  s.width = 2.2;
  return s;
}

// The fastest layout and pack mode at every document length, from the rows.
void winners(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  MdTable tab({"documents", "mean length / sequence", "ring / sequence", "best", "its time",
               "runner-up", "its time", "best vs ring / sequence"});
  std::map<std::string, std::map<std::string, int>> wins;  // sweep -> label -> count
  for (const auto& p : pts) {
    if (!p.ok || fact(p, "sweep") == "rfa" || fact(p, "sweep") == "rfa-1gpu") continue;
    if (p.axes.at("--layout") != "ring" || p.axes.at("--pack") != "sequence") continue;
    std::vector<const GridPoint*> all;
    for (const auto& q : pts)
      if (q.ok && q.config == p.config && q.engine == p.engine &&
          q.axes.at("--documents") == p.axes.at("--documents"))
        all.push_back(&q);
    std::sort(all.begin(), all.end(), [](const GridPoint* a, const GridPoint* b) {
      return a->value("time_s") < b->value("time_s");
    });
    if (all.size() < 2) continue;
    ++wins[fact(p, "sweep")][label(*all[0])];
    tab.add({p.axes.at("--documents"), fmt::format("{:.4g}", mean_over_seq(p, pts)),
             human_seconds(p.value("time_s")), label(*all[0]),
             human_seconds(all[0]->value("time_s")), label(*all[1]),
             human_seconds(all[1]->value("time_s")),
             fmt::format("{:.3f}x", p.value("time_s") / all[0]->value("time_s"))});
  }
  std::string summary;
  for (const auto& [sweep, by] : wins) {
    summary += fmt::format("- {}: ", sweep);
    std::string sep;
    for (const auto& [l, n] : by) {
      summary += fmt::format("{}{} wins {} of the lengths", sep, l, n);
      sep = ", ";
    }
    summary += "\n";
  }
  out.report += "\n## Where each layout wins\n\n" + tab.str() + "\n" + summary;
  out.check("every length has a winner", !wins.empty(),
            wins.empty() ? "no complete set of layouts at any length" : "computed from the rows");
}

// ring-flash-attention's README, "The current performance is" table, varlen
// api, fwd + bwd, iter/sec as a share of the "theoretic flash_attn" (one GPU's
// flash_attn_varlen over its local 8K, x 8 ranks' work).
struct Published {
  std::string layout, implementation;
  double h800, a100;
};
const std::vector<Published>& published() {
  static const std::vector<Published> p{
      {"ring", "ring_flash_attn_varlen_func", 0.511, 0.521},
      {"zigzag", "zigzag_ring_flash_attn_varlen_func", 0.759, 0.802},
      {"allgather", "llama3_flash_attn_varlen_func", 0.581, 0.580}};
  return p;
}

double mean_time(const std::vector<GridPoint>& pts, const std::string& sweep,
                 const std::string& layout) {
  double sum = 0;
  int n = 0;
  for (const auto& p : pts)
    if (p.ok && fact(p, "sweep") == sweep && p.axes.at("--layout") == layout) {
      sum += p.value("time_s");
      ++n;
    }
  return n == 4 ? sum / n : kNan;  // all four packings, or nothing
}

void comparison(const std::vector<GridPoint>& pts, const Context& ctx, Output& out) {
  const double one = mean_time(pts, "rfa-1gpu", "ring");
  MdTable tab({"layout (ring-flash-attention)", "ringsim: mean time (8 H100, fwd+bwd)",
               "ringsim: share of ideal", "published share, 8 x H800", "published share, 8 x A100",
               "rel. diff vs H800"});
  bool any = false;
  for (const auto& r : published()) {
    const double t = mean_time(pts, "rfa", r.layout);
    if (std::isnan(t) || std::isnan(one)) continue;
    any = true;
    const double share = 8 * one / t;
    tab.add({fmt::format("{} (`{}`)", r.layout, r.implementation), human_seconds(t),
             fmt::format("{:.1f}%", 100 * share), fmt::format("{:.1f}%", 100 * r.h800),
             fmt::format("{:.1f}%", 100 * r.a100), rel_diff(share, r.h800)});
  }
  auto& rep = out.report;
  rep += "\n## Comparison with published values\n\n";
  rep +=
      "ring-flash-attention (github.com/zhuzilin/ring-flash-attention, README, \"The current "
      "performance is\", varlen api) publishes iterations per second of its varlen ring, zigzag "
      "and Llama 3 all-gather functions on 8 GPUs, fwd + bwd, Llama 3.1 8B attention, 8K tokens "
      "per GPU, as a share of a \"theoretic flash_attn\": one GPU running flash_attn_varlen over "
      "its local 8K tokens, whose work is 1/8 of the ring's. Its benchmark "
      "(benchmark/benchmark_varlen_kvpacked_func.py) cycles four packings of the local 8K, "
      "`" +
      std::string(kLocal) +
      "` ('|' between packings); each rank holds the same, so each global document is 8 times a "
      "local one split over the ranks: ringsim's `--pack document` with `--documents` `" +
      kGlobal +
      "`. ringsim's share is the same ratio: 8 x the mean time of one GPU over the local packings "
      "(`--devices 1 --block 8192`) over the mean ring time, flash-attn 2's curves on H100 (the "
      "published runs are H800, the same compute die with less NVLink bandwidth, and A100).\n\n";
  rep += any ? tab.str()
             : "No complete set of the benchmark's packings ran here (quick mode runs them in "
               "full mode only), so no published value is compared.\n";
  rep +=
      "\nDifferences in kind: ring-flash-attention's llama3 function gives each rank a contiguous "
      "slice of the global sequence, so under the causal mask the last rank holds the most work "
      "(the ring's imbalance: its published share, 58%, sits near the ring's 51%), while "
      "ringsim's all-gather gives each rank zigzag chunks of every document (Llama 3's paper), "
      "which balance it; ringsim charges flash-attn 2 at its published curves under PyTorch's "
      "eager merge (docs/models.md) and no Python or per-call host overhead, so its shares are "
      "upper bounds. Nothing is fitted.\n";
  out.check("benchmark packings ran", any || ctx.quick,
            any ? "ring, zigzag and all-gather over the four packings, and one GPU"
                : "not in quick mode");
}

void reading(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  // Zigzag's advantage over the ring in each mode at the shortest and longest lengths.
  auto at = [&](const std::string& docs, const std::string& layout, const std::string& pack) {
    for (const auto& p : pts)
      if (p.ok && fact(p, "sweep") == "fixed" && p.axes.at("--documents") == docs &&
          p.axes.at("--layout") == layout && p.axes.at("--pack") == pack)
        return p.value("time_s");
    return kNan;
  };
  std::string facts;
  for (const char* d : {"fixed:4K", "fixed:64K"}) {
    const double rs = at(d, "ring", "sequence"), zs = at(d, "zigzag", "sequence"),
                 zd = at(d, "zigzag", "document"), as = at(d, "allgather", "sequence");
    if (std::isnan(rs) || std::isnan(zs)) continue;
    facts += fmt::format(
        "- `--documents {}`: ring / sequence {}, zigzag / sequence {} ({:.2f}x), zigzag / "
        "document {}, all-gather / sequence {}.\n",
        d, human_seconds(rs), human_seconds(zs), rs / zs, human_seconds(zd), human_seconds(as));
  }
  out.report += "\n## Reading\n\n" + facts;
  out.report += R"(
- One document of the whole sequence is the causal run: zigzag and striped balance it, the
  contiguous ring's last device computes a full block at every step, and pack mode changes
  nothing.
- As documents shorten, most pairs lie inside a device's own block in sequence mode, so every
  layout's work per device evens out and the ring's imbalance disappears; the steps that bring a
  block with no pairs skip their compute and merge.
- Document mode splits every document over all devices, so every device computes, and merges,
  at every step: with short documents that costs a merge per step the sequence mode skips.
)";
}

Config sweep_config(std::string name, std::string sweep, std::string full, std::string quick) {
  return {std::move(name),
          {{"--devices", "8"}, {"--block", "8192"}},
          {{"sweep", sweep}},
          {{"--documents", std::move(full), std::move(quick)}}};
}

GridExperiment declaration() {
  GridExperiment g;
  g.name = "packed-documents";
  g.title = "Packed documents: ring, zigzag, striped and all-gather in sequence and document mode";
  g.summary =
      "Attention time of ring, zigzag, striped and all-gather over packed documents, each layout "
      "splitting the packed sequence or every document, as the mean document length goes from "
      "1/16 of the sequence to all of it (8 H100s, 8K tokens per GPU, Llama 3.1 8B), beside "
      "ring-flash-attention's published varlen benchmark.";
  g.caption =
      "Each point is one `ringsim run` of Llama 3.1 8B's attention (32 heads, 8 KV heads, head "
      "dim 128), causal within each document, forward + backward, on 8 H100s in one node at 8192 "
      "tokens per GPU, with flash-attn 2's kernels (`--kernel fa2`), for ring, zigzag, striped "
      "and all-gather in `--pack sequence` and `--pack document`, with documents of one length "
      "(`fixed:L`) and lognormal lengths (`lognormal:MEAN,1`, seed 1) from 4K (1/16 of the 64K "
      "sequence) to 64K. x: the mean document length over the sequence.";
  g.base = {
      {"--gpu", "h100-sxm"}, {"--model", "llama3-8b"}, {"--pass", "fwdbwd"}, {"--kernel", "fa2"}};
  g.configs = {sweep_config("fixed", "fixed", "fixed:4K|fixed:8K|fixed:16K|fixed:32K|fixed:64K",
                            "fixed:4K|fixed:64K"),
               sweep_config("lognormal", "lognormal",
                            "lognormal:4K,1|lognormal:8K,1|lognormal:16K,1|lognormal:32K,1|"
                            "lognormal:64K,1",
                            "lognormal:4K,1")};
  Config rfa = sweep_config("ring-flash-attention packings", "rfa", kGlobal, "");
  rfa.axes.push_back({"--layout", "ring,zigzag,allgather", ""});
  rfa.axes.push_back({"--pack", "document", ""});
  Config one{"one GPU, local packings",
             {{"--devices", "1"}, {"--block", "8192"}},
             {{"sweep", "rfa-1gpu"}},
             {{"--documents", kLocal, ""}, {"--layout", "ring", ""}, {"--pack", "sequence", ""}}};
  g.configs.push_back(rfa);
  g.configs.push_back(one);
  g.quick_configs = {g.configs[0], g.configs[1]};
  g.axes = {{"--documents", "", ""},
            {"--layout", "ring,zigzag,striped,allgather", "ring,zigzag,striped,allgather"},
            {"--pack", "sequence,document", "sequence,document"}};
  g.measures = {{"time_s", "time_s", ""},
                {"seq_len", "seq_len", ""},
                {"exposed_comm_s", "exposed_comm_s", ""},
                {"merge_s_per_step", "merge_s_per_step", ""},
                {"useful_flops", "useful_flops", ""},
                {"mean_doc_over_seq", "", "", mean_over_seq},
                {"speedup_over_ring_sequence", "", "", speedup_over_ring}};
  const auto x = unit_axis("mean document length / sequence (fraction)", "", true, 2);
  const auto y = unit_axis("time (fwd + bwd, one layer, s)", "s");
  g.panels = {{kFixed, "--documents", "time_s", "", x, y, "mean_doc_over_seq", series_in("fixed"),
               layout_series},
              {kLognormal, "--documents", "time_s", "", x, y, "mean_doc_over_seq",
               series_in("lognormal"), layout_series}};
  g.plot_columns = 2;
  g.plot_title = "Packed documents on 8 H100s (Llama 3.1 8B attention, 8K tokens per GPU)";
  g.plot_note =
      "Colour = layout (the same in every experiment); solid: --pack sequence, dashed: --pack "
      "document. x: mean document length over the 64K sequence (1/16 .. 1).";
  g.analyses = {winners, comparison, reading};
  return g;
}

}  // namespace

Experiment packed_documents_experiment() {
  return declare(declaration());
}

}  // namespace ringsim::exp
