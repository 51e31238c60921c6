// minblock-table: Ring Attention Table 2 (minimum block c = F/B and minimum
// sequence per device 6c) reproduced from the paper's own inputs, then the
// catalog's devices and links with each of the paper's assumptions dropped.
// The numbers come from the library `ringsim minblock` prints
// (models/analytic/minblock.hpp), called here in-process: no simulation.
#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "experiments/list.hpp"
#include "experiments/markdown.hpp"
#include "models/analytic/minblock.hpp"
#include "models/core/catalog.hpp"
#include "models/core/parse.hpp"
#include "models/core/workload.hpp"

namespace ringsim::exp {

namespace {

constexpr const char* kModel = "llama3-8b";  // GQA column: 8 of 32 KV heads

// The paper prints tokens to 0.1K, so a value within half of that (50 tokens)
// of ours is the same number; 2% covers the A100 InfiniBand row, printed as
// 24.5K where the paper's own F/B is 24.96K.
bool matches_print(double ours, double published) {
  return std::fabs(ours - published) <= std::max(50.0, 0.02 * published);
}

// "h100-sxm" -> "H100", "tpu-v5p" -> "TPU v5p": short enough for an axis label.
std::string short_device(const std::string& name) {
  if (name.rfind("tpu-", 0) == 0) return "TPU " + name.substr(4);
  std::string s = name.substr(0, name.find('-'));
  for (auto& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

void run(const Context& ctx, Output& out) {
  (void)ctx;
  const auto& cat = Catalog::embedded();
  // The workload of the "combined" column: sizes do not matter for a 2-device ring.
  Workload w;
  w.devices = 2;
  w.block = 1024;
  w.shape = find_model("--model", kModel);
  // "combined": each device's default implementation (its kernel's rates,
  // merge, launch and interference), as `ringsim minblock` prints it.
  const auto rows = minblock_rows(cat, w, DType::BF16, [&](const Hardware& hw) {
    return make_implementation(cat, hw, DType::BF16, {});
  });
  ++out.points;
  out.data.set_columns({"kind", "host", "device", "interconnect", "flops_tflops", "bandwidth_gbs",
                        "min_block_paper", "published_min_block", "rel_diff_min_block",
                        "min_seq_paper", "published_min_seq", "rel_diff_min_seq", "min_block_gqa",
                        "min_block_causal", "min_block_backward", "min_block_efficiency",
                        "min_block_combined"});
  const auto& shape = w.shape;

  // Table 2, reproduced.
  MdTable t2({"host", "F (TFLOP/s)", "B (GB/s)", "min block: ours (F/B)", "published", "rel. diff",
              "min seq/device: ours (6c)", "published", "rel. diff"});
  Panel p1;
  p1.title = "Ring Attention Table 2: published vs reproduced (c = F/B, s = 6c)";
  p1.x.label = "host (Table 2 row)";
  p1.y = make_axis("tokens per device (K = 1024)", true, 2, 400.0, 400e3);
  p1.y.unit = "tokens";
  Series pub_c = scatter_series("published min block", color_for("published", 0), "square");
  Series our_c = scatter_series("ours: min block F/B", palette_color(0), "circle");
  Series pub_s = scatter_series("published min seq/device", palette_color(7), "diamond");
  Series our_s = scatter_series("ours: min seq/device 6F/B", palette_color(1), "triangle");
  pub_c.hollow = pub_s.hollow = true;
  bool within_fb = true, within_print = true;
  std::string worst;
  double x = 0;
  for (const auto& r : cat.paper_table2()) {
    const double F = r.flops, B = r.bandwidth, c = paper_min_block(F, B), s = paper_min_seq(F, B);
    const double pc = r.published_min_block, ps = r.published_min_seq;
    const std::string& host = r.host;
    out.data.add_row()
        .set("kind", "paper_table2")
        .set("host", host)
        .set("flops_tflops", F / 1e12)
        .set("bandwidth_gbs", B / 1e9)
        .set("min_block_paper", c)
        .set("published_min_block", pc)
        .set("rel_diff_min_block", rel_diff_value(c, pc))
        .set("min_seq_paper", s)
        .set("published_min_seq", ps)
        .set("rel_diff_min_seq", rel_diff_value(s, ps));
    // Decimal K, as the paper prints its table (24.5K = 24,500 tokens).
    t2.add({host, sig(F / 1e12), sig(B / 1e9), decimal_tokens(c) + fmt::format(" ({:.0f})", c),
            decimal_tokens(pc), rel_diff(c, pc), decimal_tokens(s), decimal_tokens(ps),
            rel_diff(s, ps)});
    within_fb = within_fb && std::fabs(c - F / B) <= 0.01 * F / B &&
                std::fabs(s - 6 * F / B) <= 0.06 * F / B;
    if (!matches_print(c, pc) || !matches_print(s, ps)) {
      within_print = false;
      worst += host + " ";
    }
    p1.x.categories.push_back(host);
    pub_c.points.push_back({x, pc});
    our_c.points.push_back({x, c});
    pub_s.points.push_back({x, ps});
    our_s.points.push_back({x, s});
    x += 1;
  }
  p1.series = {pub_s, our_s, pub_c, our_c};
  out.check("Table 2: ours is F/B and 6F/B within 1%", within_fb,
            "min block and min sequence per device from the paper's F and B");
  out.check("Table 2: ours matches the printed values", within_print,
            within_print
                ? "within the paper's 0.1K print precision (50 tokens), or 2% (A100 InfiniBand: "
                  "printed 24.5K, F/B = 24.96K)"
                : "mismatch: " + worst);

  // Extension: the catalog's devices x their default links.
  MdTable ext({"device", "link", "F (TFLOP/s)", "B (GB/s/dir)", "paper F/B", "GQA", "causal",
               "backward", "efficiency", "combined"});
  Panel p2;
  p2.title = fmt::format(
      "Extension: minimum block per device and link, one assumption dropped at a time ({})",
      kModel);
  p2.x.label = "device / link (catalog)";
  p2.y = make_axis("minimum block c (tokens per device, K = 1024)", true, 2, 100.0, 200e3);
  p2.y.unit = "tokens";
  const std::vector<std::pair<std::string, std::string>> cols{
      {"paper", "paper: F/B (MHA, fwd, full, peak)"},
      {"gqa", "GQA (KV heads 8/32)"},
      {"causal", "causal mask"},
      {"backward", "backward pass"},
      {"efficiency", "kernel efficiency"},
      {"combined", "all combined + latency"}};
  std::vector<Series> ser;
  const std::vector<std::string> markers{"circle",  "square", "triangle",
                                         "diamond", "star",   "pentagon"};
  for (std::size_t i = 0; i < cols.size(); ++i) {
    ser.push_back(scatter_series(cols[i].second, palette_color(i), markers[i]));
  }
  bool ratios_ok = true;
  std::string ratio_detail;
  x = 0;
  for (const auto& r : rows) {
    const std::string& dev = r.device;
    const std::string& link = r.interconnect;
    const double F = r.flops, B = r.bandwidth;
    const auto& col = r.columns;
    const double paper = col.paper, gqa = col.gqa, causal = col.causal;
    const double bwd = col.backward, eff = col.efficiency;
    const bool has_comb = col.combined > 0;
    const double comb = static_cast<double>(col.combined);
    auto row = out.data.add_row();
    row.set("kind", "extension")
        .set("device", dev)
        .set("interconnect", link)
        .set("flops_tflops", F / 1e12)
        .set("bandwidth_gbs", B / 1e9)
        .set("min_block_paper", paper)
        .set("min_seq_paper", 6 * paper)
        .set("min_block_gqa", gqa)
        .set("min_block_causal", causal)
        .set("min_block_backward", bwd)
        .set("min_block_efficiency", eff);
    if (has_comb) row.set("min_block_combined", comb);
    ext.add({dev, link, sig(F / 1e12), sig(B / 1e9), human_tokens(paper), human_tokens(gqa),
             human_tokens(causal), human_tokens(bwd), human_tokens(eff),
             has_comb ? human_tokens(comb) : "never"});
    // Each column changes one factor of c = (bytes per token / B) / (work per
    // token / F): GQA scales bytes by kv/heads, a causal mask halves the
    // lightest step's work, backward moves 2x2 + 2x4 bytes for 2x2 (x2.5 work),
    // and a kernel at a fraction e of peak computes longer, hiding a transfer
    // with e times fewer tokens.
    const double eff_frac = cat.device(dev).attention_efficiency;
    const double want_gqa = paper * shape.kv_heads / shape.heads, want_causal = 2 * paper,
                 want_bwd = paper * (4.0 + 8.0) / 4.0 / 2.5, want_eff = paper * eff_frac;
    auto near = [](double a, double b) { return std::fabs(a - b) <= 1e-6 * std::fabs(b); };
    if (!near(gqa, want_gqa) || !near(causal, want_causal) || !near(bwd, want_bwd) ||
        !near(eff, want_eff)) {
      ratios_ok = false;
      ratio_detail += dev + "/" + link + " ";
    }
    p2.x.categories.push_back(short_device(dev) + "<br>" +
                              (link.rfind("xgmi", 0) == 0 ? std::string("xgmi") : link));
    const double vals[] = {paper, gqa, causal, bwd, eff, comb};
    for (std::size_t i = 0; i < cols.size(); ++i)
      if (i + 1 < cols.size() || has_comb) ser[i].points.push_back({x, vals[i]});
    x += 1;
  }
  p2.series = ser;
  out.check("extension: each column moves c by its closed-form factor", ratios_ok,
            ratios_ok ? fmt::format("GQA x{}/{}, causal x2, backward x1.2, efficiency x e",
                                    shape.kv_heads, shape.heads)
                      : "off: " + ratio_detail);

  out.plot.title = "Minimum block size for ring attention to hide its transfers (log scale)";
  out.plot.columns = 1;
  out.plot.width = 1500;
  out.plot.height = 1250;
  p1.legend = "right";
  p2.legend = "right";
  out.plot.panels = {p1, p2};
  out.plot.note =
      "Top: Ring Attention (arXiv 2310.01889) Table 2 with the paper's F and B. Bottom: catalog "
      "devices on their "
      "default intra-node and inter-node links (B per direction); 'combined' = ring layout, "
      "causal, forward, bf16, "
      "Llama 3 8B GQA, the catalog's kernel efficiency and link latency.";

  // Numbers quoted in the reading come from this run's rows.
  std::string reading_tail;
  {
    double fast_max = 0, slow_min = 1e300, slow_max = 0;
    std::string slow_list;
    int smaller = 0, total = 0;
    for (const auto& r : rows) {
      const std::string& link = r.interconnect;
      const double paper = r.columns.paper;
      const bool fabric = link.rfind("nvlink", 0) == 0 || link.rfind("ici", 0) == 0;
      if (fabric) {
        fast_max = std::max(fast_max, paper);
      } else if (link.rfind("ib-", 0) == 0 || link.rfind("roce", 0) == 0) {
        slow_min = std::min(slow_min, paper);
        slow_max = std::max(slow_max, paper);
        slow_list += fmt::format("{}{} on {} {}", slow_list.empty() ? "" : ", ", r.device, link,
                                 human_tokens(paper));
      }
      if (r.columns.combined > 0) {
        ++total;
        if (static_cast<double>(r.columns.combined) < paper) ++smaller;
      }
    }
    reading_tail += fmt::format(
        "- Across the catalog, F grows faster than the network between nodes: under the paper's "
        "assumptions the "
        "minimum block on NICs ranges from {} to {} tokens per device ({}), while inside NVLink or "
        "ICI domains it "
        "stays at or below {}.\n",
        human_tokens(slow_min), human_tokens(slow_max), slow_list, human_tokens(fast_max));
    reading_tail += fmt::format(
        "- \"combined\" (Llama 3 8B, causal, forward, catalog efficiency and latency) is below the "
        "paper's F/B on "
        "{} of {} rows: GQA's 4x fewer K/V bytes and the kernel efficiency e (0.4-0.7) outweigh "
        "the causal mask's 2x.\n",
        smaller, total);
  }

  std::string& rep = out.report;
  rep += "## Comparison with published values: Ring Attention Table 2\n\n";
  rep += "Source: " + cat.paper_table2_source() +
         ". Inputs F and B are the paper's (models/data/catalog.json `paper_table2`).\n\n";
  rep += t2.str();
  rep += "\n## Extension: catalog devices and links, one assumption dropped at a time\n\n";
  rep += "Minimum block c in tokens per device (binary K = 1024, as ringsim prints blocks). " +
         minblock_assumptions(w, false) + "\n\n";
  rep += ext.str();
  rep += R"(
## Reading

- Table 2 is the closed form c = F/B with the paper's own F and B, so it reproduces exactly; the relative
  differences are the paper's rounding to 0.1K (at 1K tokens that is up to 5%). The one visible gap, A100
  InfiniBand, is the paper's print: 312 TF / 12.5 GB/s = 24.96K, printed 24.5K (its min sequence 149.5K is
  6 x 24.9K).
- The paper's derivation assumes MHA, no mask, forward only and peak FLOP/s. Dropping each assumption moves
  the minimum block by a fixed factor: GQA divides the K/V bytes by heads/KV heads (4x smaller for Llama 3 8B),
  a causal mask halves the work of the lightest step (2x larger, since every step must hide its transfer),
  the backward pass sends K, V and fp32 dK, dV (3x the bytes) for 2.5x the work (1.2x larger), and a kernel at
  a fraction e of peak needs e times smaller blocks (slower compute hides the same transfer with fewer
  tokens).
)";
  rep += reading_tail;
}

}  // namespace

Experiment minblock_table_experiment() {
  return {"minblock-table", "Ring Attention Table 2 (minimum block), reproduced and extended",
          "Minimum block size c for transfers to hide behind compute (c >= F/B) and minimum "
          "sequence per device "
          "(6c): the paper's Table 2 from its own inputs, then H100, H200, B200, MI300X, TPU v5p "
          "and the other "
          "catalog devices, with GQA, a causal mask, the backward pass and kernel efficiency each "
          "dropped in turn.",
          run};
}

}  // namespace ringsim::exp
