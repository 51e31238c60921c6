// seed-reproduction: the Ring Attention paper's own configurations run with
// the seed's own implementation (`--kernel ringattention-jax`: the authors'
// JAX blockwise scan, K/V by ppermute), beside what the papers print:
//  - Table 2 (minimum block): the paper's c = F/B against the block the
//    implementation's real per-step costs need (chunk scan at TF32 or bf16,
//    fp32 K on the ring, loop control), and those costs at c = F/B;
//  - Table 3 (longest context with FSDP): the planner's JAX/XLA memory rules
//    (`plan --max-context --framework jax-xla`), ring and no-CP (BPT);
//  - Striped Attention's Tables 3-5 (striped over ring, end-to-end training
//    speedup against the block, 8 A100 and 16 TPU v4): one layer, causal,
//    forward + backward, the paper's tiles as the scan's chunks; each point
//    is a `ringsim validate` case (seed_striped.hpp) and runs its commands.
// Every point is a closed form evaluated in process (the analytic engine as
// `ringsim run --engine analytic` runs it, the planner, the minimum block).
// Declared as data (grid_experiment.hpp); the report is seed_report.cpp.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <map>

#include "experiments/grid_experiment.hpp"
#include "experiments/list.hpp"
#include "experiments/markdown.hpp"
#include "experiments/seed_published.hpp"
#include "experiments/seed_report.hpp"
#include "experiments/seed_striped.hpp"
#include "models/analytic/analytic.hpp"
#include "models/analytic/minblock.hpp"
#include "models/analytic/report.hpp"
#include "models/core/catalog.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/plan/plan.hpp"
#include "proc/child.hpp"
#include "proc/resolve.hpp"
#include "proc/run_spec.hpp"

namespace ringsim::exp {

namespace {

using nlohmann::json;
using seed::seed_models;
using seed::SeedModel;

constexpr const char* kKernel = "ringattention-jax";
// Table 3 prints contexts "(x1e3)", but every entry is a power-of-two count of
// thousands (512, 4096, 16384): read as K = 1024 tokens, as its sequences are built.
constexpr double kK = 1024;
constexpr std::int64_t kContextLimit = std::int64_t{1} << 30;  // the planner's own limit

// Ring Attention Table 2's hosts on the catalog's devices and links: each
// link's bandwidth is the paper's B (A100 InfiniBand: 12.5 GB/s, EDR).
struct Host {
  std::string host, device, link;
};
const std::vector<Host>& hosts() {
  static const std::vector<Host> h{{"A100 NVLink", "a100-80gb", "nvlink3"},
                                   {"A100 InfiniBand", "a100-80gb", "ib-edr"},
                                   {"TPU v3", "tpu-v3", "ici-v3"},
                                   {"TPU v4", "tpu-v4", "ici-v4"},
                                   {"TPU v5e", "tpu-v5e", "ici-v5e"}};
  return h;
}

const SeedModel& seed_model(const std::string& name) {
  for (const auto& m : seed_models())
    if (m.name == name) return m;
  throw InputError("seed-reproduction: no seed model " + name);
}

ModelShape shape_of(const SeedModel& m) {
  ModelShape s;
  s.name = "seed-" + m.name;
  s.layers = m.layers;
  s.d_model = m.d_model;
  s.heads = s.kv_heads = m.heads;
  s.head_dim = m.d_model / m.heads;
  s.ffn = m.ffn;
  s.vocab = seed::kSeedVocab;
  return s;
}

void set_shape(proc::WorkloadSpec& w, const SeedModel& m) {
  const auto s = shape_of(m);
  w.d_model = s.d_model;
  w.heads = s.heads;
  w.kv_heads = s.kv_heads;
  w.head_dim = s.head_dim;
  w.ffn = s.ffn;
}

// `ringsim run --engine analytic --json` in this process (cli/cmd_run.cpp's steps).
json run_analytic(const proc::HardwareSpec& h, const proc::WorkloadSpec& ws) {
  const auto cat = proc::load_catalog(h);
  const auto hw = proc::resolve_hardware(h, cat, ws.dtype);
  const auto w = proc::resolve_workload(ws, hw);
  const auto im = proc::make_implementation(h, cat, hw, w.dtype);
  return summary_json(analyze(w, hw, *im));
}

// ---- Table 2 -----------------------------------------------------------------

json evaluate_table2(const Config& c) {
  const auto& host = c.facts.at("host");
  for (const auto& r : Catalog::embedded().paper_table2()) {
    if (r.host != host) continue;
    const double cp = paper_min_block(r.flops, r.bandwidth);
    proc::HardwareSpec h;
    h.gpu = c.facts.at("device");
    h.platform = Platform::Flat;
    h.intra = c.facts.at("link");
    h.kernel = kKernel;
    // The paper's derivation: MHA (the seed's 7B), no mask, forward, one
    // step of a ring at c = F/B.
    proc::WorkloadSpec ws;
    ws.devices = 8;
    ws.block = std::llround(cp);
    ws.causal = false;
    ws.pass = Pass::Fwd;
    set_shape(ws, seed_model("7B"));
    const auto s = run_analytic(h, ws);
    const auto& dev = Catalog::embedded().device(h.gpu);
    const auto& link = Catalog::embedded().interconnect(h.intra);
    const auto m = shape_of(seed_model("7B"));
    // The paper's step at c: 4 d c^2 FLOPs per head at F, and K, V in bf16
    // (4 c d bytes per head) at B; equal at c = F/B.
    const double paper_step = 4.0 * m.head_dim * cp * cp * m.heads / r.flops;
    // What the implementation's ring step moves over the paper's bf16 K and
    // V at one link's rate (the seed's fp32 K: 6 B per K/V pair, not 4).
    const double paper_bytes = 4.0 * m.head_dim * static_cast<double>(ws.block) * m.heads;
    const double bytes_ratio =
        s.at("comm_s_per_step").get<double>() * link.p2p_bandwidth() / paper_bytes;
    return {{"flops_tflops", r.flops / 1e12},
            {"bandwidth_gbs", r.bandwidth / 1e9},
            {"catalog_flops_tflops", dev.peak(DType::BF16) / 1e12},
            {"catalog_bandwidth_gbs", link.bandwidth / 1e9},
            {"ring_bandwidth_gbs", link.p2p_bandwidth() / 1e9},
            {"ring_min_block", paper_min_block(r.flops, link.p2p_bandwidth())},
            {"ring_bytes_ratio", bytes_ratio},
            {"paper_min_block", cp},
            {"published_min_block", r.published_min_block},
            {"jax_min_block", s.at("min_block")},
            {"jax_over_paper", s.at("min_block").get<double>() / cp},
            {"block_at", ws.block},
            {"paper_step_s", paper_step},
            {"jax_compute_s", s.at("compute_s_per_step")},
            {"jax_loop_s", s.at("launch_s_per_step")},
            {"jax_merge_s", s.at("merge_s_per_step")},
            {"jax_comm_s", s.at("comm_s_per_step")},
            {"chunks", s.at("chunk_scan").at("chunk_iterations_per_step")},
            {"matmul_tflops", s.at("chunk_scan").at("matmul_flops").get<double>() / 1e12},
            {"precision", s.at("chunk_scan").at("precision")}};
  }
  throw InputError("seed-reproduction: no Table 2 row " + host);
}

// ---- Table 3 -----------------------------------------------------------------

Hardware plan_hardware(const std::string& device) {
  proc::HardwareSpec h;
  h.gpu = device;
  return proc::resolve_hardware(h, Catalog::embedded(), DType::BF16);
}

// `ringsim plan --max-context --framework jax-xla --tp 1 --pp 1` at one CP degree.
std::pair<double, std::string> longest(const ModelShape& shape, const std::string& device,
                                       std::int64_t chips, std::int64_t cp) {
  PlanRequest r;
  r.shape = shape;
  r.gpus = chips;
  r.cp_degrees = {cp};
  if (cp > 1) r.layouts = {Layout::Ring};
  r.framework = Framework::JaxXla;
  r.tpu = device.rfind("tpu", 0) == 0;
  const auto mc = max_context(r, plan_hardware(device), kContextLimit);
  return {static_cast<double>(mc.tokens),
          mc.by_config.empty() ? std::string() : mc.by_config.front().limited_by};
}

json evaluate_table3(const Config& c) {
  for (const auto& r : seed::ring_table3()) {
    if (r.system != c.facts.at("system") || r.model != c.facts.at("model")) continue;
    const auto shape = shape_of(seed_model(r.model));
    const auto [ring, ring_by] = longest(shape, r.device, r.chips, r.chips);
    const auto [bpt, bpt_by] = longest(shape, r.device, r.chips, 1);
    return {{"chips", r.chips},
            {"published_vanilla", r.vanilla_k * kK},
            {"published_memeff", r.memeff_k * kK},
            {"published_bpt", r.bpt_k * kK},
            {"published_ring", r.ring_k * kK},
            {"published_ring_over_bpt", r.ours_vs_sota},
            {"ours_ring", ring},
            {"ours_ring_limited_by", ring_by},
            {"ours_bpt", bpt},
            {"ours_bpt_limited_by", bpt_by},
            {"ours_ring_over_bpt", bpt > 0 ? ring / bpt : 0.0},
            {"ring_ratio", ring / (r.ring_k * kK)},
            {"bpt_ratio", bpt / (r.bpt_k * kK)}};
  }
  throw InputError("seed-reproduction: no Table 3 row " + c.name);
}

// ---- Striped over ring ---------------------------------------------------------

const seed::StripedSeries& striped_series(const Config& c) {
  for (const auto& s : seed::striped_tables())
    if (s.table == c.facts.at("table") && s.model == c.facts.at("model") &&
        std::to_string(s.sp) == c.facts.at("sp") && std::to_string(s.mp) == c.facts.at("mp"))
      return s;
  throw InputError("seed-reproduction: no Striped Attention series " + c.name);
}

const seed::StripedPoint& striped_point(const seed::StripedSeries& s, std::int64_t block) {
  for (const auto& p : s.points)
    if (p.block == block) return p;
  throw InputError(fmt::format("seed-reproduction: no block {} in {} {}", block, s.table, s.model));
}

json evaluate_trend(const Config& c, const std::map<std::string, std::string>& axes) {
  const auto& s = striped_series(c);
  const auto block = parse_count("--block", axes.at("--block"), 1, std::int64_t{1} << 30);
  const auto& p = striped_point(s, block);
  const auto rs = seed::striped_spec(p, Layout::Ring);
  const auto ss = seed::striped_spec(p, Layout::Striped);
  const auto ring = run_analytic(rs.hardware, rs.workload);
  const auto striped = run_analytic(ss.hardware, ss.workload);
  const double pub = p.speedup, tms = p.tms;
  const double tr = ring.at("time_s"), ts = striped.at("time_s");
  const double ex_r = ring.at("executed_flops"), ex_s = striped.at("executed_flops");
  const double merge_launch = striped.at("verdict").at("losses").at("merge_launch");
  return {
      {"seq_len", striped.at("seq_len")},
      {"time_ring_s", tr},
      {"time_striped_s", ts},
      {"speedup", tr / ts},
      {"published_speedup", pub},
      {"published_tms", tms},
      {"speedup_over_published", tr / ts / pub},
      {"executed_striped_over_ring", ex_s / ex_r},
      {"masked_share_striped", 1 - striped.at("useful_flops").get<double>() / ex_s},
      {"loop_s_per_step", striped.at("chunk_scan").at("loop_s_per_step")},
      {"merge_launch_share_striped", merge_launch / ts},
      {"exposed_share", std::max(ring.at("exposed_comm_s").get<double>() / tr,
                                 striped.at("exposed_comm_s").get<double>() / ts)},
      {"permutation_where", striped.at("permutation").at("where")},
      {"memory_gib_per_device", striped.at("memory_bytes_per_device").get<double>() / 1073741824.0},
      {"query_chunk", ss.hardware.query_chunk.value_or(0)},
      {"key_chunk", s.key_chunk}};
}

// ---- SimGrid re-check ------------------------------------------------------------

// The 7B series' smallest block (and, in full mode, largest) simulated as
// `ringsim run --engine simgrid` children, ring and striped, beside the closed
// forms every point above used.
void simgrid_recheck(const std::vector<GridPoint>& pts, const Context& ctx, Output& out) {
  auto& rep = out.report;
  rep += "\n### SimGrid re-check of the striped-vs-ring points\n\n";
  if (ctx.engine != "simgrid" || ctx.ringsim.empty()) {
    rep += "SKIPPED: the engine for simulated points is " + ctx.engine + " (" + ctx.engine_note +
           "), so the closed forms above are not re-simulated.\n";
    return;
  }
  std::vector<const GridPoint*> chosen;
  std::vector<proc::Command> cmds;
  for (const auto& p : pts) {
    if (!p.ok || p.config->facts.at("kind") != "trend" || p.config->facts.at("model") != "7B")
      continue;
    const auto& s = striped_series(*p.config);
    const auto block = static_cast<std::int64_t>(p.axis("--block"));
    if (block != s.points.front().block && (ctx.quick || block != s.points.back().block)) continue;
    chosen.push_back(&p);
    for (Layout l : {Layout::Ring, Layout::Striped}) {
      auto spec = seed::striped_spec(striped_point(s, block), l);
      spec.sim.engine = proc::Engine::SimGrid;
      spec.json = true;
      proc::Command cmd;
      cmd.argv = proc::to_args(spec);
      cmd.argv.insert(cmd.argv.begin(), ctx.ringsim);
      cmd.timeout_s = 300;
      cmds.push_back(std::move(cmd));
    }
  }
  if (!cmds.empty())
    out.child_examples.push_back(fmt::format("{}", fmt::join(cmds.front().argv, " ")));
  const auto results = proc::run_many(cmds, ctx.jobs, {});
  MdTable t({"series", "block", "speedup: closed forms", "SimGrid", "rel. diff"});
  bool agree = true;
  std::string detail;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const auto& p = *chosen[i];
    double sim[2] = {0, 0};
    bool ok = true;
    for (int k = 0; k < 2; ++k) {
      const auto& r = results[2 * i + k];
      try {
        if (r.exit_code != 0) throw std::runtime_error(r.err);
        sim[k] = json::parse(r.out).at("time_s").get<double>();
      } catch (const std::exception& e) {
        ok = false;
        detail += fmt::format("{} block {}: {}; ", p.config->name, p.axes.at("--block"), e.what());
      }
    }
    if (!ok) {
      agree = false;
      continue;
    }
    const double a = p.value("speedup"), s = sim[0] / sim[1];
    // Both engines play the same schedule; 1e-6 covers summation order.
    if (std::fabs(s / a - 1) > 1e-6) {
      agree = false;
      detail += fmt::format("{} block {}: {} vs {}; ", p.config->name, p.axes.at("--block"), s, a);
    }
    t.add({p.config->name, human_tokens(p.axis("--block")), fmt::format("{:.4f}", a),
           fmt::format("{:.4f}", s), fmt::format("{:+.1e}", s / a - 1)});
  }
  out.check(
      "SimGrid agrees with the closed forms on striped over ring", agree,
      agree ? fmt::format("{} points, ring and striped each simulated, within 1e-6", chosen.size())
            : detail);
  rep +=
      "Each row: two `ringsim run --engine simgrid` children (ring and striped) of a point "
      "above; the ring is uniform (every CP rank's steps cost alike), so the simulated "
      "schedule should equal the closed forms'.\n\n";
  rep += t.str();
}

json evaluate(const Config& c, const std::map<std::string, std::string>& axes) {
  const auto& kind = c.facts.at("kind");
  if (kind == "table2") return evaluate_table2(c);
  if (kind == "table3") return evaluate_table3(c);
  return evaluate_trend(c, axes);
}

// ---- the grid ------------------------------------------------------------------

std::vector<Config> table2_configs() {
  std::vector<Config> c;
  for (const auto& h : hosts())
    c.push_back({h.host,
                 {},
                 {{"kind", "table2"},
                  {"panel", "table2"},
                  {"host", h.host},
                  {"device", h.device},
                  {"link", h.link},
                  {"category", h.host}}});
  return c;
}

std::vector<Config> table3_configs(bool quick) {
  std::vector<Config> c;
  for (const auto& r : seed::ring_table3()) {
    if (quick && r.model != "7B") continue;
    c.push_back({r.system + ", " + r.model,
                 {},
                 {{"kind", "table3"},
                  {"panel", "table3"},
                  {"system", r.system},
                  {"model", r.model},
                  {"category", r.model + "<br>" + r.label}}});
  }
  return c;
}

std::string blocks_of(const seed::StripedSeries& s) {
  std::string b;
  for (const auto& p : s.points) b += (b.empty() ? "" : ",") + std::to_string(p.block);
  return b;
}

std::vector<Config> trend_configs(bool quick) {
  std::vector<Config> c;
  for (const auto& s : seed::striped_tables()) {
    if (quick && s.model != "7B") continue;
    const auto mesh = fmt::format("({}, {})", s.mp, s.sp);
    const auto first = std::to_string(s.points.front().block);
    const auto last = std::to_string(s.points.back().block);
    c.push_back({fmt::format("{} {} mesh {}", s.setting, s.model, mesh),
                 {},
                 {{"kind", "trend"},
                  {"panel", s.table},
                  {"table", s.table},
                  {"setting", s.setting},
                  {"model", s.model},
                  {"mp", std::to_string(s.mp)},
                  {"sp", std::to_string(s.sp)}},
                 {{"--block", blocks_of(s), first + "," + last}}});
  }
  return c;
}

std::vector<Config> configs(bool quick) {
  auto c = table2_configs();
  for (auto& x : table3_configs(quick)) c.push_back(std::move(x));
  for (auto& x : trend_configs(quick)) c.push_back(std::move(x));
  return c;
}

GridExperiment declaration() {
  GridExperiment g;
  g.name = "seed-reproduction";
  g.title = "The Ring Attention paper's configurations with the seed's own JAX implementation";
  g.summary =
      "Ring Attention Tables 2 and 3 and Striped Attention's striped-vs-ring speedups, run with "
      "`--kernel ringattention-jax` (the authors' JAX chunk scan, fp32/TF32 attention, fp32 K on "
      "the ring, lax.scan loop control) and the JAX/XLA memory rules, beside the published "
      "numbers; "
      "where the paper's idealised formula and the implementation differ, and why.";
  g.caption = seed_caption();
  g.configs = configs(false);
  g.quick_configs = configs(true);
  // Each striped series sweeps its own blocks; the tables' rows are not swept ("-").
  g.axes = {{"--block", "-", "-"}};
  g.analyses_simulate = true;
  g.evaluate = evaluate;
  g.measures = seed_measures();
  g.panels = seed_panels();
  g.analyses = seed_analyses(simgrid_recheck);
  g.plot_title = "Ring Attention and Striped Attention with the seed's JAX implementation";
  g.plot_note = seed_plot_note();
  g.plot_columns = 2;
  g.plot_width = 1600;
  g.plot_height = 1400;
  return g;
}

}  // namespace

Experiment seed_reproduction_experiment() {
  return declare(declaration());
}

}  // namespace ringsim::exp
