// `ringsim minblock`: the smallest block whose compute hides its transfer.
// Reproduces Ring Attention Table 2 with the paper's inputs, then the catalog's
// devices x interconnects with each of the paper's assumptions dropped in turn.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "models/errors.hpp"
#include "models/minblock.hpp"
#include "models/parse.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/workload_flags.hpp"

namespace ringsim::cli {
namespace {

struct MinblockFlags {
  WorkloadFlags w;
  HardwareFlags hw;
  bool json = false;
};

struct Columns {
  double paper, gqa, causal, backward, efficiency;
  std::int64_t
      combined;  // this workload: model GQA, layout, mask, pass, dtype, efficiency, latency
};

// Each column drops one of the paper's assumptions (MHA, non-causal ring,
// forward, peak FLOP/s), keeping the others.
Columns columns(double flops, double eff, double bw, double lat, const Workload& w,
                const ComputeModel& cm) {
  const auto& s = w.shape;
  Columns c{};
  c.paper = paper_min_block(flops, bw);
  c.gqa = min_block_closed_form(flops, bw, 0, s.heads, s.kv_heads, s.head_dim, 2, false, 1.0);
  c.causal = min_block_closed_form(flops, bw, 0, s.heads, s.heads, s.head_dim, 2, false, 0.5);
  c.backward = min_block_closed_form(flops, bw, 0, s.heads, s.heads, s.head_dim, 2, true, 1.0);
  c.efficiency =
      min_block_closed_form(flops * eff, bw, 0, s.heads, s.heads, s.head_dim, 2, false, 1.0);
  Hardware hw;
  hw.flops = flops;
  hw.efficiency = eff;
  hw.platform = Platform::Flat;
  hw.bandwidth_override = true;
  hw.intra_bw = hw.inter_bw = bw;
  hw.intra_lat = hw.inter_lat = lat;
  c.combined = min_block_for(w, hw, cm);
  return c;
}

nlohmann::json columns_json(const Columns& c) {
  return {{"paper", c.paper},
          {"gqa", c.gqa},
          {"causal", c.causal},
          {"backward", c.backward},
          {"efficiency", c.efficiency},
          {"combined", c.combined > 0 ? nlohmann::json(c.combined) : nlohmann::json(nullptr)}};
}

int run(const MinblockFlags& f) {
  const auto cat = load_catalog(f.hw);
  const auto dtype = parse_dtype("--dtype", f.w.dtype);
  // The workload for the "combined" column: sizes do not matter for a 2-device ring.
  WorkloadFlags wf = f.w;
  wf.devices = "2";
  wf.block = "1024";
  Hardware base;
  base.flops = 1;  // validated below per row
  base.gpus_per_node = 8;
  auto w = resolve_workload(wf, base);
  const std::string assumptions = fmt::format(
      "paper: MHA, bf16, forward, peak FLOP/s, c >= F/B | gqa: {} ({} of {} KV heads) | causal: a "
      "causal mask "
      "(the lightest step does half a block) | backward: K,V,dK,dV (fp32 grads), 2.5x compute | "
      "efficiency: "
      "catalog kernel fraction | combined: {} layout, {}, {}, {}, GQA, efficiency{}, link latency",
      w.shape.name, w.shape.kv_heads, w.shape.heads, to_string(w.layout),
      w.causal ? "causal" : "non-causal", to_string(w.pass), to_string(w.dtype),
      f.hw.profile.empty() ? "" : " from the profile");

  // One pair given by hand.
  if (!f.hw.flops.empty() || !f.hw.bandwidth.empty()) {
    if (f.hw.flops.empty() || f.hw.bandwidth.empty())
      throw InputError(
          "--flops/--bandwidth: give both for a single pair (FLOP/s and bytes/s per direction)");
    const double F = parse_real("--flops", f.hw.flops, 1e6, 1e18);
    const double B = parse_real("--bandwidth", f.hw.bandwidth, 1e3, 1e15);
    const double eff =
        f.hw.efficiency.empty() ? 1.0 : parse_real("--efficiency", f.hw.efficiency, 1e-3, 1.0);
    const double lat = f.hw.latency.empty() ? 0.0 : parse_real("--latency", f.hw.latency, 0, 1);
    Hardware hw;
    hw.flops = F;
    hw.efficiency = eff;
    auto cm = make_compute_model(f.hw, hw, dtype);
    const auto c = columns(F, eff, B, lat, w, *cm);
    if (f.json) {
      nlohmann::json j{{"flops", F},
                       {"bandwidth", B},
                       {"min_block", c.paper},
                       {"min_seq_per_device", paper_min_seq(F, B)},
                       {"columns", columns_json(c)},
                       {"assumptions", assumptions},
                       {"compute_model", cm->name()}};
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << fmt::format("F = {:g} FLOP/s, B = {:g} B/s per direction\n", F, B);
      std::cout << fmt::format("  min block c = F/B           {:.1f} tokens ({})\n", c.paper,
                               human_tokens(c.paper));
      std::cout << fmt::format("  min sequence per device 6c  {:.1f} tokens ({})\n", 6 * c.paper,
                               human_tokens(6 * c.paper));
      std::cout << fmt::format(
          "  gqa {:.0f} | causal {:.0f} | backward {:.0f} | efficiency {:.0f} | combined {}\n",
          c.gqa, c.causal, c.backward, c.efficiency, c.combined);
      std::cout << "  " << assumptions << "\n";
    }
    return 0;
  }

  nlohmann::json jpaper = nlohmann::json::array(), jrows = nlohmann::json::array();
  std::string text =
      "Ring Attention Table 2, reproduced with the paper's inputs (c = F/B, min seq = 6c):\n";
  text += fmt::format("  {:<16} {:>8} {:>9} {:>10} {:>10} {:>7} {:>10} {:>10} {:>7}\n", "host",
                      "F TF/s", "B GB/s", "min block", "published", "diff", "min seq", "published",
                      "diff");
  for (const auto& r : cat.paper_table2()) {
    const double c = paper_min_block(r.flops, r.bandwidth), s = paper_min_seq(r.flops, r.bandwidth);
    const double dc = (c - r.published_min_block) / r.published_min_block,
                 ds = (s - r.published_min_seq) / r.published_min_seq;
    text += fmt::format(
        "  {:<16} {:>8.0f} {:>9.1f} {:>10} {:>10} {:>+6.1f}% {:>10} {:>10} {:>+6.1f}%\n", r.host,
        r.flops / 1e12, r.bandwidth / 1e9, human_tokens(c), human_tokens(r.published_min_block),
        100 * dc, human_tokens(s), human_tokens(r.published_min_seq), 100 * ds);
    jpaper.push_back({{"host", r.host},
                      {"flops", r.flops},
                      {"bandwidth", r.bandwidth},
                      {"min_block", c},
                      {"published_min_block", r.published_min_block},
                      {"min_seq_per_device", s},
                      {"published_min_seq", r.published_min_seq}});
  }
  text += "  (the paper prints 24.5K for A100 InfiniBand, where its own F/B gives 24.96K)\n\n";
  text += fmt::format(
      "Catalog devices x interconnects, minimum block in tokens; each column drops one "
      "assumption:\n");
  text += fmt::format("  {:<11} {:<12} {:>8} {:>8} {:>8} {:>9} {:>10} {:>9}\n", "device", "link",
                      "paper", "gqa", "causal", "backward", "efficiency", "combined");
  for (const auto& d : cat.devices()) {
    const double F = d.peak(dtype);
    if (F <= 0) continue;
    std::set<std::string> links{d.default_intra, d.default_inter};
    for (const auto& ln : links) {
      const auto& ic = cat.interconnect(ln);
      Hardware hw;
      hw.flops = F;
      hw.efficiency = d.attention_efficiency;
      std::unique_ptr<ComputeModel> cm = make_compute_model(f.hw, hw, dtype);
      const auto c = columns(F, d.attention_efficiency, ic.bandwidth, ic.latency, w, *cm);
      text += fmt::format("  {:<11} {:<12} {:>8} {:>8} {:>8} {:>9} {:>10} {:>9}\n", d.name, ic.name,
                          human_tokens(c.paper), human_tokens(c.gqa), human_tokens(c.causal),
                          human_tokens(c.backward), human_tokens(c.efficiency),
                          c.combined > 0 ? human_tokens(static_cast<double>(c.combined)) : "never");
      auto jr = columns_json(c);
      jr["device"] = d.name;
      jr["interconnect"] = ic.name;
      jr["flops"] = F;
      jr["bandwidth"] = ic.bandwidth;
      jrows.push_back(jr);
    }
  }
  text += "  " + assumptions + "\n";
  if (f.json) {
    nlohmann::json j{{"paper_table2", jpaper},
                     {"paper_source", cat.paper_table2_source()},
                     {"rows", jrows},
                     {"assumptions", assumptions}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << text;
  }
  return 0;
}

const CommandRegistrar reg{{"minblock", 10, [](CLI::App& app, int* code) {
                              auto f = std::make_shared<MinblockFlags>();
                              auto* sub = app.add_subcommand(
                                  "minblock",
                                  "Minimum block size for transfers to hide behind compute");
                              add_workload_flags(sub, f->w, false);
                              add_hardware_flags(sub, f->hw);
                              sub->add_flag("--json", f->json, "Print one JSON object");
                              sub->callback([f, code] { *code = run(*f); });
                              return sub;
                            }}};

}  // namespace
}  // namespace ringsim::cli
