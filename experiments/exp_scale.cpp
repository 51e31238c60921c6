// scale: from 8 to 4096 devices and sequences up to 16M tokens: predicted
// time and memory per device, and what the prediction costs (the events the
// simulation replays; each point's wall time, measured, goes to timing.csv
// so that the report and data.csv stay byte-identical run to run). Up to 1024 devices the
// simulation replays every device; past that `--symmetry auto` simulates one period of the uniform
// zigzag ring (sim/symmetry.hpp), which the report states. Declared as data (grid_experiment.hpp):
// the block is the sequence over N, so each (sequence, N) pair is a configuration, not a point of
// one product.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "experiments/grid_experiment.hpp"
#include "experiments/list.hpp"
#include "experiments/markdown.hpp"
#include "models/core/parse.hpp"

namespace ringsim::exp {

namespace {

constexpr std::int64_t K = 1024, M = K * K;
constexpr const char* kSym = "simgrid, one period of a symmetric ring (--symmetry auto)";

// One configuration per (sequence, N): the block is seq / N.
std::vector<Config> cases(const std::vector<std::int64_t>& seqs,
                          const std::vector<std::int64_t>& ns) {
  std::vector<Config> c;
  for (auto seq : seqs)
    for (auto n : ns)
      c.push_back({fmt::format("{} tokens, N = {}", tokens_k(seq), n),
                   {{"--devices", std::to_string(n)}, {"--block", std::to_string(seq / n)}},
                   {{"devices", std::to_string(n)},
                    {"seq_len", std::to_string(seq)},
                    {"block", std::to_string(seq / n)}}});
  return c;
}

std::int64_t fact(const GridPoint& p, const std::string& k) {
  return std::stoll(p.config->facts.at(k));
}

// A series colour per sequence length, the same in full and --quick mode.
std::string seq_color(std::int64_t seq) {
  const std::vector<std::int64_t> order{1 * M, 4 * M, 16 * M, 256 * K};
  const auto it = std::find(order.begin(), order.end(), seq);
  return palette_color(static_cast<std::size_t>(it - order.begin()));
}

bool symmetric(const GridPoint& p) {
  const double sim = p.value("simulated_devices");
  return p.engine == "simgrid" && sim > 0 && sim < static_cast<double>(fact(p, "devices"));
}

// Time and memory: the analytic model (the simulation lands on it where it ran: a check).
std::string analytic_by_seq(const GridPoint& p) {
  return p.engine == "analytic" ? tokens_k(fact(p, "seq_len")) + " tokens" : "";
}

std::string wall_series(const GridPoint& p) {
  if (symmetric(p)) return kSym;
  return tokens_k(fact(p, "seq_len")) +
         (p.engine == "analytic" ? ": analytic" : ": simgrid, every device");
}

// The simulated points only: the analytic model replays no events.
std::string cost_series(const GridPoint& p) {
  return p.engine == "analytic" ? "" : wall_series(p);
}

Series wall_make(const std::string& name, const GridPoint& p) {
  if (name == kSym) {
    Series s = scatter_series(name, palette_color(6), "square");
    s.hollow = true;
    return s;
  }
  const bool analytic = p.engine == "analytic";
  Series s = line_series(name, seq_color(fact(p, "seq_len")), analytic);
  s.markers = true;
  return s;
}

Series seq_make(const std::string& name, const GridPoint& p) {
  return line_series(name, seq_color(fact(p, "seq_len")));
}

// Analytic points by (sequence, N), and the simulated ones.
struct Index {
  std::vector<std::int64_t> seqs, ns;
  std::map<std::pair<std::int64_t, std::int64_t>, std::map<std::string, const GridPoint*>> by;
};

Index index(const std::vector<GridPoint>& pts) {
  Index x;
  for (const auto& p : pts) {
    const auto seq = fact(p, "seq_len"), n = fact(p, "devices");
    if (std::find(x.seqs.begin(), x.seqs.end(), seq) == x.seqs.end()) x.seqs.push_back(seq);
    if (std::find(x.ns.begin(), x.ns.end(), n) == x.ns.end()) x.ns.push_back(n);
    if (p.ok) x.by[{seq, n}][p.engine] = &p;
  }
  return x;
}

void memory_check(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  const auto x = index(pts);
  bool ok = true;
  std::string detail;
  for (auto seq : x.seqs) {
    double prev = 0;
    for (auto n : x.ns) {
      const auto it = x.by.find({seq, n});
      if (it == x.by.end() || !it->second.count("analytic")) continue;
      const double mem = it->second.at("analytic")->value("memory_bytes_per_device");
      if (prev > 0 && mem >= prev) {
        ok = false;
        detail += fmt::format("{} N={}; ", tokens_k(seq), n);
      }
      prev = mem;
    }
  }
  out.check("memory per device falls as N grows", ok,
            ok ? "at every sequence length (the block shrinks as 1/N)" : detail);
}

// The largest |simulated / analytic - 1| over the simulated points.
double worst_gap(const std::vector<GridPoint>& pts) {
  double worst = 0;
  for (const auto& p : pts)
    if (p.ok && p.engine == "simgrid")
      worst = std::max(worst, std::fabs(p.value("time_s") / p.value("analytic_time_s") - 1));
  return worst;
}

void sim_check(const std::vector<GridPoint>& pts, const Context& ctx, Output& out) {
  if (ctx.engine != "simgrid") return;
  std::string detail;
  for (const auto& p : pts) {
    if (!p.ok || p.engine != "simgrid") continue;
    const double g = p.value("time_s") / p.value("analytic_time_s") - 1;
    // The ring crosses each NIC once and shares no link, so the simulation
    // must land on the closed form; 1e-6 is summation order.
    if (std::fabs(g) > 1e-6)
      detail +=
          fmt::format("{} N={}: {:+.2e}; ", tokens_k(fact(p, "seq_len")), fact(p, "devices"), g);
  }
  out.check("simulated = analytic where both ran", detail.empty(),
            detail.empty() ? fmt::format("largest relative gap {:.1e}", worst_gap(pts)) : detail);
}

void plot_text(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  const auto x = index(pts);
  out.plot.title = fmt::format(
      "Scale: llama3-8b causal forward, zigzag on dgx-h100 nodes, up to {} devices "
      "and {} tokens",
      x.ns.back(), tokens_k(x.seqs.back()));
  out.plot.note = fmt::format(
      "Time and memory from the analytic model (the simulation agrees to {:.0e} where it ran). "
      "Wall time: one `ringsim run` child process per point on this machine (2 shared cores, 2 "
      "children at a time), so it includes process start-up. The full simulation's cost grows "
      "about as N^2 activities; past 1024 devices the simulator runs one period of the symmetric "
      "ring (--symmetry auto).",
      std::max(worst_gap(pts), 1e-16));
}

// What the prediction cost, in what does not vary run to run: the events the
// simulator replayed (its wall time grows with them; timing.csv holds the
// wall times measured on the machine that ran it).
std::string costs(const Index& x, const std::vector<GridPoint>& pts) {
  const auto n_of = [](const GridPoint& p) { return fact(p, "devices"); };
  std::int64_t full_n = 0, sym_n = 0;
  double full_acts = 0, sym_acts = 0;
  for (const auto& p : pts) {
    if (!p.ok || p.engine != "simgrid") continue;
    auto& n = symmetric(p) ? sym_n : full_n;
    auto& acts = symmetric(p) ? sym_acts : full_acts;
    if (n_of(p) >= n) {
      n = n_of(p);
      acts = std::max(acts, p.value("activities"));
    }
  }
  std::string s = fmt::format(
      "- The analytic model's cost is N x N step entries of closed-form arithmetic (up to {} "
      "devices here, one child process each, mostly start-up).",
      x.ns.back());
  if (full_n > 0)
    s += fmt::format(
        " The full simulation replays every transfer and block as an event, about N^2 "
        "activities: {:.0f} at {} devices.",
        full_acts, full_n);
  if (sym_n > 0)
    s += fmt::format(
        " Past that `--symmetry auto` simulates one period of the uniform zigzag ring (one "
        "node's 8 GPUs for all N steps; sim/symmetry.hpp, checked against the full simulation in "
        "tests/sim): {:.0f} activities at {} devices; the \"devices simulated\" column says which "
        "rows used it.",
        sym_acts, sym_n);
  return s +
         " Each point's wall time on the machine that ran it is in timing.csv (it varies from "
         "run to run, so the report and data.csv leave it out). These runs use `--kernel "
         "roofline`: a kernel model gives zigzag's two chunk shapes different costs, so its "
         "devices are no longer alike and the full ring must be simulated.\n";
}

// The measured wall time of every point, for timing.csv.
void timings(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  out.timing.set_columns(
      {"devices", "seq_len", "engine", "devices_simulated", "activities", "wall_s"});
  for (const auto& p : pts) {
    if (!p.ok || p.wall_s <= 0) continue;  // 0: a row read back on resume
    auto row = out.timing.add_row();
    row.set("devices", fact(p, "devices"))
        .set("seq_len", fact(p, "seq_len"))
        .set("engine", p.engine)
        .set("wall_s", p.wall_s);
    if (p.engine == "simgrid")
      row.set("devices_simulated", p.value("simulated_devices"))
          .set("activities", p.value("activities"));
  }
}

void results(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  const auto x = index(pts);
  MdTable tab({"sequence", "N", "block", "predicted time", "efficiency", "memory/device",
               "simulated time", "sim / analytic - 1", "activities (devices simulated)"});
  double min_block_seen = 0;
  std::string eff_last;
  for (auto seq : x.seqs)
    for (auto n : x.ns) {
      const auto it = x.by.find({seq, n});
      if (it == x.by.end() || !it->second.count("analytic")) continue;
      const GridPoint& a = *it->second.at("analytic");
      const GridPoint* s = it->second.count("simgrid") ? it->second.at("simgrid") : nullptr;
      std::string sim_time = "-", gap = "-", acts = "-";
      if (s) {
        sim_time = human_seconds(s->value("time_s"));
        gap = fmt::format("{:+.1e}", s->value("time_s") / s->value("analytic_time_s") - 1);
        const auto simulated = static_cast<std::int64_t>(s->value("simulated_devices"));
        acts = fmt::format(
            "{:.0f} ({})", s->value("activities"),
            simulated > 0 && simulated < n ? fmt::format("one period of {}", simulated) : "all");
      }
      if (n == x.ns.back())
        eff_last += fmt::format("{}{} tokens {:.2f} (block {})", eff_last.empty() ? "" : ", ",
                                tokens_k(seq), a.value("efficiency"), seq / n);
      if (n > 8 && !std::isnan(a.value("min_block")))
        min_block_seen = std::max(min_block_seen, a.value("min_block"));
      tab.add({tokens_k(seq), std::to_string(n), std::to_string(seq / n),
               human_seconds(a.value("time_s")), fmt::format("{:.2f}", a.value("efficiency")),
               human_bytes(a.value("memory_bytes_per_device")), sim_time, gap, acts});
    }
  auto& rep = out.report;
  rep += "## Comparison with published values\n\n";
  rep +=
      "No published value: no paper this project compares with reports attention step times or "
      "simulator costs at these scales. The inputs are the catalog's H100 (989 TF bf16 x 0.67 "
      "attention efficiency) on DGX H100 nodes (NVLink 4 inside, InfiniBand NDR between) and the "
      "Llama 3 8B shape.\n\n";
  rep += "## Results\n\n";
  rep += tab.str();
  rep += "\n## Reading\n\n";
  rep += fmt::format(
      "- At a fixed sequence length the predicted time falls with N until the block per device "
      "drops below the minimum block of the inter-node link ({} tokens for this GQA model, "
      "causal, on IB NDR; see minblock-table); from there each step waits for its transfer and "
      "adding devices stops helping. Efficiency at {} devices: {}.\n",
      min_block_seen > 0 ? human_tokens(min_block_seen) : std::string("-"), x.ns.back(), eff_last);
  rep +=
      "- Memory per device is the attention working set of one block (query, fp32 accumulator, two "
      "K/V buffers) and falls as 1/N at a fixed sequence: the sequence, not the device, carries "
      "the cost.\n";
  rep += costs(x, pts);
  rep +=
      "- On these rings, which share no link, the simulation lands on the analytic answer to "
      "rounding; the analytic model is the tool for sweeps at this scale, and the simulation for "
      "topologies where flows share links.\n";
}

double nan_unless(bool ok, double v) {
  return ok ? v : std::numeric_limits<double>::quiet_NaN();
}

GridExperiment declaration() {
  GridExperiment g;
  g.name = "scale";
  g.title = "Scale: 8 to 4096 devices, sequences up to 16M tokens";
  g.summary =
      "Predicted time and memory per device of a zigzag causal ring on DGX H100 nodes from 8 to "
      "4096 devices and 1M to 16M tokens, with what the SimGrid simulation replays per point "
      "(its wall time in timing.csv).";
  g.caption =
      "Each point is one `ringsim run` of Llama 3 8B's attention (GQA), causal, forward, zigzag, "
      "on DGX H100 nodes (`--cluster dgx-h100`), at the block = sequence / N, analytic and, when "
      "SimGrid runs, simulated. The simulator's scale on a uniform ring: under a kernel model "
      "zigzag's two chunk shapes cost differently per device, which rules out simulating one "
      "period (sim/symmetry.hpp); `--kernel roofline` keeps every device alike. Measured: the "
      "predicted time, memory per device, the activities the simulation replays, and (timing.csv) "
      "the wall time of each child process.";
  g.base = {{"--cluster", "dgx-h100"},
            {"--kernel", "roofline"},
            {"--layout", "zigzag"},
            {"--model", "llama3-8b"},
            {"--pass", "fwd"}};
  g.configs = cases({1 * M, 4 * M, 16 * M}, {8, 32, 128, 512, 1024, 2048, 4096});
  g.quick_configs = cases({256 * K, 1 * M}, {8, 64});
  g.both_engines = true;
  g.timeout_s = 600;  // per simulated point
  const auto sim_only = [](const char* key) {
    return [key](const GridPoint& p, const std::vector<GridPoint>&) {
      return nan_unless(p.engine == "simgrid", p.value(key));
    };
  };
  g.measures = {{"time_s", "time_s", ""},
                {"analytic_time_s", "", "", sim_only("analytic_time_s")},
                {"sim_vs_analytic", "", "",
                 [](const GridPoint& p, const std::vector<GridPoint>&) {
                   return nan_unless(p.engine == "simgrid",
                                     p.value("time_s") / p.value("analytic_time_s") - 1);
                 }},
                {"efficiency", "efficiency", ""},
                {"exposed_comm_s", "exposed_comm_s", ""},
                {"memory_bytes_per_device", "memory_bytes_per_device", ""},
                {"memory_gb_per_device", "", "",
                 [](const GridPoint& p, const std::vector<GridPoint>&) {
                   return p.value("memory_bytes_per_device") / 1e9;
                 }},
                {"activities", "", "", sim_only("activities")},
                {"simulated_devices", "", "", sim_only("simulated_devices")}};
  const auto x = unit_axis("devices N (count)", "", true, 2);
  g.panels = {
      {"Predicted time of one attention layer (forward)", "--devices", "time_s", "", x,
       unit_axis("predicted time (s)", "s", true, 10), "", analytic_by_seq, seq_make},
      {"Memory per device (attention buffers)", "--devices", "memory_bytes_per_device", "", x,
       unit_axis("memory per device (bytes, binary units)", "bytes", true, 2), "", analytic_by_seq,
       seq_make},
      {"Cost of the prediction: events the simulator replays", "--devices", "activities", "", x,
       unit_axis("simulated activities (count)", "", true, 10), "", cost_series, wall_make}};
  g.plot_columns = 3;
  g.plot_width = 2100;
  g.plot_height = 800;
  g.analyses = {memory_check, sim_check, plot_text, results, timings};
  return g;
}

}  // namespace

Experiment scale_experiment() {
  return declare(declaration());
}

}  // namespace ringsim::exp
