// `ringsim minblock`: the smallest block whose compute hides its transfer.
// Reproduces Ring Attention Table 2 with the paper's inputs, then the catalog's
// devices x interconnects with each of the paper's assumptions dropped in turn.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/command.hpp"
#include "models/analytic/minblock.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/core/schema.hpp"
#include "proc/resolve.hpp"

namespace ringsim::cli {
namespace {

struct MinblockFlags {
  proc::WorkloadFlags w;
  proc::HardwareFlags hw;
  bool json = false;
};

// One row of the JSON's "rows", the same keys whatever the flags (a pair by
// hand is the row of device and interconnect "custom").
nlohmann::json row_json(const std::string& device, const std::string& interconnect, double flops,
                        double bandwidth, const MinblockColumns& c,
                        const std::string& compute_model) {
  return {{"device", device},
          {"interconnect", interconnect},
          {"flops", flops},
          {"bandwidth", bandwidth},
          {"min_seq_per_device", paper_min_seq(flops, bandwidth)},
          {"compute_model", compute_model},
          {"paper", c.paper},
          {"gqa", c.gqa},
          {"causal", c.causal},
          {"backward", c.backward},
          {"efficiency", c.efficiency},
          {"combined", c.combined > 0 ? nlohmann::json(c.combined) : nlohmann::json(nullptr)},
          {"ring_bytes_per_token", c.ring_bytes_per_token},
          {"ring_bandwidth", c.ring_bandwidth}};
}

// The one JSON shape of `minblock --json`: the paper's table (empty when a
// selection chose rows), the catalog or hand-given rows, what was selected.
// With one row (a pair by hand, or a selection of one device on one link)
// its paper minimum is also at the top, `min_block` and `min_seq_per_device`,
// as the README shows them; null with several rows.
nlohmann::json result_json(const nlohmann::json& paper, const std::string& paper_source,
                           const nlohmann::json& rows, const std::string& assumptions,
                           const nlohmann::json& selection) {
  const bool one = rows.size() == 1;
  return {{"paper_table2", paper},
          {"paper_source", paper_source},
          {"rows", rows},
          {"min_block", one ? rows[0]["paper"] : nlohmann::json(nullptr)},
          {"min_seq_per_device", one ? rows[0]["min_seq_per_device"] : nlohmann::json(nullptr)},
          {"assumptions", assumptions},
          {"selection", selection},
          {"schema_version", kJsonSchemaVersion}};
}

int run(const MinblockFlags& f) {
  const auto hs = proc::parse_hardware(f.hw);
  auto ws = proc::parse_workload(f.w, false);
  const auto cat = proc::load_catalog(hs);
  const auto dtype = ws.dtype;
  // The workload for the "combined" column: a ring long enough that its steps
  // 0 and 1 stand for every step, as in `run` (on 2 devices only step 0
  // sends, and zigzag's backward needs more there: 4738 tokens on H100 and
  // NDR, not 4226). 8 ring ranks, times the Ulysses degree for hybrid.
  // Ulysses and all-gather send no block during a ring step: run prints their
  // minimum block as n/a, so there is no column to compute.
  if (ws.layout == Layout::Ulysses || ws.layout == Layout::Allgather)
    throw InputError(fmt::format(
        "--layout: {} has no ring step for a transfer to hide behind (run prints its minimum "
        "block as n/a); choose ring, striped, zigzag or hybrid",
        to_string(ws.layout)));
  ws.devices = 8 * std::max(1, ws.ulysses_degree.value_or(8));
  ws.block = 1024;
  Hardware base;
  base.flops = 1;  // validated below per row
  base.gpus_per_node = 8;
  auto w = proc::resolve_workload(ws, base);
  const std::string assumptions = minblock_assumptions(w, !hs.profile.empty());

  // Nothing is silently ignored: the minimum block depends on one device's
  // compute and one link, never on how the ring is laid out.
  for (const auto& [flag, set] : {std::pair{"--platform", hs.platform.has_value()},
                                  {"--gpus-per-node", hs.gpus_per_node.has_value()}})
    if (set)
      throw InputError(fmt::format(
          "{}: does not apply to minblock (the minimum block depends on one device and one "
          "link; choose them with --gpu, --cluster, --intra/--inter or --flops/--bandwidth)",
          flag));

  // One pair given by hand.
  if (hs.flops || hs.bandwidth) {
    if (!hs.flops || !hs.bandwidth)
      throw InputError(
          "--flops/--bandwidth: give both for a single pair (FLOP/s and bytes/s per direction)");
    for (const auto& [flag, set] : {std::pair{"--gpu", !hs.gpu.empty()},
                                    {"--cluster", !hs.cluster.empty()},
                                    {"--intra", !hs.intra.empty()},
                                    {"--inter", !hs.inter.empty()},
                                    {"--power-limit", hs.power_limit.has_value()}})
      if (set)
        throw InputError(fmt::format(
            "{}: --flops/--bandwidth give the pair by hand; leave {} out, or drop --flops and "
            "--bandwidth to use the catalog",
            flag, flag));
    const double F = *hs.flops, B = *hs.bandwidth;
    // The kernel fraction and the link latency are run's for the same flags
    // (the catalog's default device and link unless --efficiency/--latency
    // are given), so `combined` is the minimum block `run` prints.
    Hardware hw = proc::resolve_hardware(hs, cat, dtype);
    const double lat = hs.latency.value_or(hw.intra_lat);
    hw.flops = F;
    hw.efficiency = hs.efficiency.value_or(hw.efficiency);
    hw.platform = Platform::Flat;
    hw.bandwidth_override = true;
    hw.intra_bw = hw.inter_bw = B;
    hw.intra_lat = hw.inter_lat = lat;
    const auto cm = proc::make_implementation(hs, cat, hw, dtype);
    const auto c = minblock_columns(hw, w, *cm);
    if (f.json) {
      const nlohmann::json sel{{"gpu", nullptr},
                               {"links", nlohmann::json::array()},
                               {"by_hand", true},
                               {"power_w", nullptr},
                               {"hbm_bandwidth", nullptr}};
      std::cout << result_json(
                       nlohmann::json::array(), cat.paper_table2_source(),
                       nlohmann::json::array({row_json("custom", "custom", F, B, c, cm->name())}),
                       assumptions, sel)
                       .dump(2)
                << "\n";
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

  if (hs.efficiency || hs.latency)
    throw InputError(
        "--efficiency/--latency: apply to a pair given by hand with --flops and --bandwidth; "
        "the catalog rows use each device's and link's own");
  // --cluster, --gpu and --intra/--inter choose the rows.
  std::string only_device = hs.gpu;
  std::vector<std::string> links;
  if (!hs.cluster.empty()) {
    const auto& c = cat.cluster(hs.cluster);
    if (only_device.empty()) only_device = c.gpu;
    links = {hs.intra.empty() ? c.intra : hs.intra, hs.inter.empty() ? c.inter : hs.inter};
  } else {
    if (!hs.intra.empty()) links.push_back(hs.intra);
    if (!hs.inter.empty()) links.push_back(hs.inter);
  }

  // A selection shows only the rows it chose: the paper's table is the
  // whole catalog's preface, left out when rows were picked.
  const bool selected =
      !hs.gpu.empty() || !hs.cluster.empty() || !hs.intra.empty() || !hs.inter.empty();
  nlohmann::json jpaper = nlohmann::json::array(), jrows = nlohmann::json::array();
  std::string text;
  if (!selected) {
    text =
        "Ring Attention Table 2, reproduced with the paper's inputs (c = F/B, min seq = 6c; "
        "decimal "
        "K = 1000 as the paper prints it):\n";
    text += fmt::format("  {:<16} {:>8} {:>9} {:>10} {:>10} {:>7} {:>10} {:>10} {:>7}\n", "host",
                        "F TF/s", "B GB/s", "min block", "published", "diff", "min seq",
                        "published", "diff");
    for (const auto& r : cat.paper_table2()) {
      const double c = paper_min_block(r.flops, r.bandwidth),
                   s = paper_min_seq(r.flops, r.bandwidth);
      const double dc = (c - r.published_min_block) / r.published_min_block,
                   ds = (s - r.published_min_seq) / r.published_min_seq;
      text += fmt::format(
          "  {:<16} {:>8.0f} {:>9.1f} {:>10} {:>10} {:>+6.1f}% {:>10} {:>10} {:>+6.1f}%\n", r.host,
          r.flops / 1e12, r.bandwidth / 1e9, decimal_tokens(c),
          decimal_tokens(r.published_min_block), 100 * dc, decimal_tokens(s),
          decimal_tokens(r.published_min_seq), 100 * ds);
      jpaper.push_back({{"host", r.host},
                        {"flops", r.flops},
                        {"bandwidth", r.bandwidth},
                        {"min_block", c},
                        {"published_min_block", r.published_min_block},
                        {"min_seq_per_device", s},
                        {"published_min_seq", r.published_min_seq}});
    }
    text += "  (the paper prints 24.5K for A100 InfiniBand, where its own F/B gives 24.96K)\n\n";
  }
  text += fmt::format(
      "Catalog devices x interconnects, minimum block in tokens (binary K = 1024, as blocks); "
      "each column drops one assumption:\n");
  text += fmt::format("  {:<13} {:<12} {:>8} {:>8} {:>8} {:>9} {:>10} {:>9}\n", "device", "link",
                      "paper", "gqa", "causal", "backward", "efficiency", "combined");
  // A power limit and an HBM rate are one device's (the catalog's devices
  // differ in both): refused for the whole catalog, never applied to some rows.
  for (const auto& [flag, set] : {std::pair{"--power-limit", hs.power_limit.has_value()},
                                  {"--hbm-bandwidth", hs.hbm_bandwidth.has_value()}})
    if (set && only_device.empty())
      throw InputError(
          fmt::format("{}: applies to one device; choose it with --gpu or --cluster", flag));
  const double watts = only_device.empty() ? 0 : proc::deployed_watts(hs, cat.device(only_device));
  // The one device's HBM rate as its rows run it (--hbm-bandwidth, else the
  // catalog's; 0, no override, for the whole catalog).
  const double hbm =
      hs.hbm_bandwidth.value_or(only_device.empty() ? 0 : cat.device(only_device).hbm_bandwidth);
  const auto rows = minblock_rows(
      cat, w, dtype,
      [&](const Hardware& hw) { return proc::make_implementation(hs, cat, hw, dtype); },
      only_device, links, watts, hbm);
  for (const auto& row : rows) {
    const auto& c = row.columns;
    text +=
        fmt::format("  {:<13} {:<12} {:>8} {:>8} {:>8} {:>9} {:>10} {:>9}\n", row.device,
                    row.interconnect, human_tokens(c.paper), human_tokens(c.gqa),
                    human_tokens(c.causal), human_tokens(c.backward), human_tokens(c.efficiency),
                    c.combined > 0 ? human_tokens(static_cast<double>(c.combined)) : "never");
    jrows.push_back(
        row_json(row.device, row.interconnect, row.flops, row.bandwidth, c, row.compute_model));
  }
  text += "  " + assumptions + "\n";
  if (f.json) {
    // The one device's power and HBM rate as its rows ran them (null for the
    // whole catalog, whose devices each run as deployed).
    auto one = [&](double v) {
      return only_device.empty() ? nlohmann::json(nullptr) : nlohmann::json(v);
    };
    const nlohmann::json sel{
        {"gpu", only_device.empty() ? nlohmann::json(nullptr) : nlohmann::json(only_device)},
        {"links", links},
        {"by_hand", false},
        {"power_w", one(watts)},
        {"hbm_bandwidth", one(hbm)}};
    std::cout << result_json(jpaper, cat.paper_table2_source(), jrows, assumptions, sel).dump(2)
              << "\n";
  } else {
    std::cout << text;
  }
  return 0;
}

}  // namespace

Command minblock_command() {
  return {"minblock", [](CLI::App& app, int* code) {
            auto f = std::make_shared<MinblockFlags>();
            // One line in `ringsim --help`; the selection rules and the JSON
            // shape in `ringsim minblock --help` (its footer).
            auto* sub = app.add_subcommand(
                "minblock",
                "Minimum block size for transfers to hide behind compute (the paper's Table 2, "
                "or the catalog rows you choose)");
            sub->footer(
                "--gpu, --cluster, --intra/--inter choose the catalog rows (then only those, "
                "without the paper's table); --flops/--bandwidth give one pair by hand (device "
                "and interconnect \"custom\"). --json prints one shape whatever the flags: "
                "paper_table2 (empty when rows were chosen), paper_source, rows (device, "
                "interconnect, flops, bandwidth, min_seq_per_device, compute_model, paper, gqa, "
                "causal, backward, efficiency, combined, ring_bytes_per_token, ring_bandwidth), "
                "assumptions, selection (gpu, links, by_hand), schema_version (docs/json.md)");
            proc::add_workload_flags(sub, f->w, false);
            proc::add_hardware_flags(sub, f->hw);
            sub->add_flag("--json", f->json, "Print one JSON object");
            sub->callback([f, code] { *code = run(*f); });
            return sub;
          }};
}

}  // namespace ringsim::cli
