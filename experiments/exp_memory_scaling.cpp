// memory-scaling: the Ring Attention paper's "near-infinite context" claim.
// Per-device memory and the longest trainable context vs the number of
// devices, for Llama 2 7B and 13B shapes on A100 80GB and TPU v4 (32 GiB),
// two ways:
//  - the paper's Table 1 view: one layer's activations (vanilla 2bhs^2,
//    memory-efficient 8bsh, blockwise 2bsh, ring 6bch with c = s/N) against
//    what HBM leaves after the sharded model state;
//  - the planner's full training memory (`ringsim plan --max-context`,
//    models/plan/plan.hpp): checkpointed layer inputs, loss, FSDP buffers, overheads.
// Declared as data (grid_experiment.hpp): one configuration per model and
// device, the device count swept; every point's closed forms in process.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "experiments/grid_experiment.hpp"
#include "experiments/list.hpp"
#include "experiments/markdown.hpp"
#include "models/analytic/memory.hpp"
#include "models/core/catalog.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/core/profile.hpp"
#include "models/plan/plan.hpp"
#include "proc/resolve.hpp"

namespace ringsim::exp {

namespace {

using nlohmann::json;

// Ring Attention (arXiv 2310.01889) Table 1, activation bytes of one layer;
// b batch, h hidden size, s sequence, c block.
double vanilla_bytes(double b, double h, double s) {
  return 2 * b * h * s * s;
}
double mem_eff_bytes(double b, double h, double s) {
  return 8 * b * s * h;
}
double blockwise_bytes(double b, double h, double s) {
  return 2 * b * s * h;
}
double ring_bytes(double b, double h, double c) {
  return 6 * b * c * h;
}

// Largest s with bytes(s) <= budget for each Table 1 row (closed forms).
double vanilla_max(double budget, double h) {
  return std::sqrt(budget / (2 * h));
}
double mem_eff_max(double budget, double h) {
  return budget / (8 * h);
}
double blockwise_max(double budget, double h) {
  return budget / (2 * h);
}
double ring_max(double budget, double h, double n) {
  return n * budget / (6 * h);
}

constexpr double kState =
    PlanConstants::kParamBytes + PlanConstants::kGradBytes + PlanConstants::kOptimizerBytes;

constexpr std::int64_t kFixedContext = std::int64_t{1} << 20;  // panel 1: 1M tokens
// The planner's own search limit (`ringsim plan --max-context`).
constexpr std::int64_t kContextLimit = std::int64_t{1} << 30;

Hardware hardware(const std::string& gpu) {
  proc::HardwareSpec h;
  h.gpu = gpu;
  return proc::resolve_hardware(h, Catalog::embedded(), DType::BF16);
}

PlanRequest request(const ModelShape& shape, std::int64_t n, std::int64_t cp, LossImpl loss) {
  PlanRequest r;
  r.shape = shape;
  r.gpus = n;
  r.cp_degrees = {cp};
  if (cp > 1) r.layouts = {Layout::Ring};
  r.loss = loss;
  return r;
}

// `ringsim plan --max-context` in process: the longest context and what
// stops one step longer.
std::pair<double, std::string> longest(const ModelShape& shape, const Hardware& hw, std::int64_t n,
                                       std::int64_t cp, LossImpl loss) {
  const auto mc = max_context(request(shape, n, cp, loss), hw, kContextLimit);
  return {static_cast<double>(mc.tokens),
          mc.by_config.empty() ? std::string() : mc.by_config.front().limited_by};
}

// At 1M tokens (the left panel's configuration): one layer's activations by
// Table 1's rows, ours, and the planner's training total.
void at_1m(const ModelShape& shape, const Hardware& hw, std::int64_t n, json& j) {
  const double h = shape.d_model, s = static_cast<double>(kFixedContext);
  const double c = s / static_cast<double>(n);
  Workload w;
  w.devices = n;
  w.block = kFixedContext / n;
  w.layout = Layout::Ring;
  w.causal = true;
  w.pass = Pass::Fwd;
  w.shape = shape;
  const double ours = static_cast<double>(attention_memory(w).total());
  j.update({{"vanilla_bytes_at_1m", vanilla_bytes(1, h, s)},
            {"memeff_bytes_at_1m", mem_eff_bytes(1, h, s)},
            {"blockwise_bytes_at_1m", blockwise_bytes(1, h, s)},
            {"table1_ring_bytes_at_1m", ring_bytes(1, h, c)},
            {"table1_ring_gb_at_1m", ring_bytes(1, h, c) / 1e9},
            {"ours_ring_attention_bytes_at_1m", ours},
            {"ours_ring_attention_gb_at_1m", ours / 1e9}});
  auto r = request(shape, n, n, LossImpl::Chunked);
  r.context = kFixedContext;
  const RooflineModel cm(hw.effective_flops());
  const auto configs = search(r, hw, cm);
  if (!configs.empty() && configs.front().evaluated) {
    j["planner_ring_total_bytes_at_1m"] = configs.front().memory.total;
    j["planner_ring_total_gb_at_1m"] = configs.front().memory.total / 1e9;
  }
}

json evaluate(const Config& c, const std::map<std::string, std::string>& axes) {
  const auto& shape = find_model("--model", c.facts.at("model"));
  const auto& dev = Catalog::embedded().device(c.facts.at("hardware"));
  const auto hw = hardware(c.facts.at("hardware"));
  const auto n = parse_count("--devices", axes.at("--devices"), 1, 1 << 20);
  const double h = shape.d_model, hbm = dev.hbm_bytes;
  const double params = static_cast<double>(total_params(shape));
  // FSDP shards the 16 B/param model state over all N devices.
  const double state = kState * params / static_cast<double>(n);
  const double budget = std::max(0.0, hbm - state);
  const auto [ring, ring_lim] = longest(shape, hw, n, n, LossImpl::Chunked);
  const auto [nocp, nocp_lim] = longest(shape, hw, n, 1, LossImpl::Chunked);
  const auto [eager, eager_lim] = longest(shape, hw, n, n, LossImpl::Eager);
  json j{{"hbm_bytes", hbm},
         {"hbm_gb", hbm / 1e9},
         {"params", params},
         {"state_bytes_per_device", state},
         {"state_gb_per_device", state / 1e9},
         {"table1_budget_gb", budget / 1e9},
         {"table1_vanilla_max_context", vanilla_max(budget, h)},
         {"table1_memeff_max_context", mem_eff_max(budget, h)},
         {"table1_blockwise_max_context", blockwise_max(budget, h)},
         {"table1_ring_max_context", ring_max(budget, h, static_cast<double>(n))},
         {"planner_ring_max_context", ring},
         {"planner_ring_limited_by", ring_lim},
         {"planner_nocp_max_context", nocp},
         {"planner_nocp_limited_by", nocp_lim},
         {"planner_eager_max_context", eager},
         {"planner_eager_limited_by", eager_lim}};
  if (c.facts.at("panel") == "1m") at_1m(shape, hw, n, j);
  return j;
}

// Llama 2 7B and 13B on A100 80GB and TPU v4; the 7B rows are drawn in the
// Table 1 view, 7B on A100 also at 1M tokens (left panel).
std::vector<Config> combos() {
  auto combo = [](const std::string& model, const std::string& gpu, const std::string& label,
                  const std::string& panel) {
    const bool seven = model == "llama2-7b";
    return Config{label,
                  {},
                  {{"model", model},
                   {"hardware", gpu},
                   {"panel", panel},
                   {"family", gpu.rfind("tpu", 0) == 0 ? "TPU v4" : "A100"},
                   {"table1_view", seven ? "1" : "0"}}};
  };
  return {combo("llama2-7b", "a100-80gb", "7B, A100 80GB", "1m"),
          combo("llama2-13b", "a100-80gb", "13B, A100 80GB", "-"),
          combo("llama2-7b", "tpu-v4", "7B, TPU v4", "-"),
          combo("llama2-13b", "tpu-v4", "13B, TPU v4", "-")};
}

// One configuration's points in device order.
std::vector<const GridPoint*> of(const std::vector<GridPoint>& pts, const std::string& name) {
  std::vector<const GridPoint*> v;
  for (const auto& p : pts)
    if (p.ok && p.config->name == name) v.push_back(&p);
  std::sort(v.begin(), v.end(), [](const GridPoint* a, const GridPoint* b) {
    return a->axis("--devices") < b->axis("--devices");
  });
  return v;
}

// The Table 1 view (middle panel): four rows per 7B configuration, colour by
// row, line style by device family; the no-CP lines beside the planner's;
// names carrying their one value; log axes where the data spans decades.
void panels(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  Panel p2;
  p2.title = "Longest context, Table 1 view: one layer's activations in what HBM leaves";
  p2.x = unit_axis("devices N (count)", "", true, 2);
  p2.y = unit_axis("longest context s (tokens, K = 1024)", "tokens", false, 2);
  const std::vector<std::tuple<std::string, std::string, std::string>> rows{
      {"vanilla", "table1_vanilla_max_context", palette_color(4)},
      {"memory-efficient", "table1_memeff_max_context", palette_color(1)},
      {"blockwise", "table1_blockwise_max_context", palette_color(2)},
      {"ring", "table1_ring_max_context", color_for("ring", 0)}};
  std::vector<Series> nocp;
  for (const auto& c : combos()) {
    if (c.facts.at("table1_view") != "1") continue;
    const Style& fam = style_for(c.facts.at("family"));
    const auto v = of(pts, c.name);
    for (const auto& [kind, key, colour] : rows) {
      Series s = line_series(c.name + ": " + kind, colour, fam.dash);
      s.marker = fam.marker;
      s.markers = true;
      for (const auto* p : v) s.points.push_back({p->axis("--devices"), p->value(key)});
      p2.series.push_back(s);
    }
    Series n = line_series(c.name + ": no CP (cp 1)", "", true);
    n.markers = true;
    for (const auto* p : v)
      if (p->value("planner_nocp_max_context") > 0)
        n.points.push_back({p->axis("--devices"), p->value("planner_nocp_max_context")});
    nocp.push_back(n);
  }
  for (auto& panel : out.plot.panels)
    for (auto& s : panel.series) {
      if (s.name == "vanilla 2bhs^2 (Table 1)" && !s.points.empty())
        s.name += ": " + human_bytes(s.points.front().second);  // one value: not split
      if (s.name == "A100 HBM" && !s.points.empty()) {
        s.name = fmt::format("A100 HBM: {} ({:.0f} GB)", human_bytes(s.points.front().second),
                             s.points.front().second / 1e9);
        s.dash = true;
      }
      if (s.name.rfind("ours:", 0) == 0) s.dash = true;
    }
  if (out.plot.panels.size() == 2) {
    auto& p3 = out.plot.panels[1];
    for (auto& s : p3.series) {
      for (auto& n : nocp)
        if (n.name.rfind(s.name + ":", 0) == 0) n.color = s.color;
      s.name += ": ring cp = N";
    }
    // Beside each 7B planner line, its no-CP line in the same colour.
    std::vector<Series> merged;
    for (const auto& s : p3.series) {
      merged.push_back(s);
      for (const auto& n : nocp)
        if (s.name.rfind(n.name.substr(0, n.name.find(':')) + ":", 0) == 0) merged.push_back(n);
    }
    p3.series = merged;
    out.plot.panels.insert(out.plot.panels.begin() + 1, p2);
    out.plot.columns = 3;
  }
  // Log where the data spans decades (bytes from MiB to PiB; contexts from
  // thousands to hundreds of millions of tokens), linear otherwise.
  for (auto& p : out.plot.panels) p.y.log = spans_decades(p.series, true);
}

// Growth of the planner's longest ring context from the smallest to the
// largest N, per configuration ("7B, A100 80GB x12.8 for x128 devices").
std::string growth_text(const std::vector<GridPoint>& pts, bool* near_linear) {
  std::string s;
  *near_linear = true;
  for (const auto& c : combos()) {
    const auto v = of(pts, c.name);
    if (v.empty()) continue;
    const double first = v.front()->value("planner_ring_max_context");
    const double growth = first > 0 ? v.back()->value("planner_ring_max_context") / first : 0;
    const double n_ratio = v.back()->axis("--devices") / v.front()->axis("--devices");
    // Near-infinite: the longest context grows at least half as fast as N.
    const bool ok = growth >= 0.5 * n_ratio;
    *near_linear = *near_linear && ok;
    s += fmt::format("{}{}{} x{:.1f} for x{:.0f} devices", s.empty() ? "" : "; ", c.name,
                     ok ? "" : ":", growth, n_ratio);
  }
  return s;
}

void checks(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  bool monotone = true, order_ok = true, planner_ok = true;
  std::string mono_detail;
  for (const auto& p : pts) planner_ok = planner_ok && p.ok;
  for (const auto& c : combos()) {
    double prev = 0;
    for (const auto* p : of(pts, c.name)) {
      const double ring = p->value("planner_ring_max_context");
      if (ring < prev) {
        monotone = false;
        mono_detail += fmt::format("{} N={} ", c.name, p->axes.at("--devices"));
      }
      prev = ring;
      const double tv = p->value("table1_vanilla_max_context"),
                   tm = p->value("table1_memeff_max_context"),
                   tb = p->value("table1_blockwise_max_context"),
                   tr = p->value("table1_ring_max_context");
      order_ok = order_ok && tv < tm && tm < tb && (p->axis("--devices") < 3 || tb < tr);
    }
  }
  bool near_linear = true;
  const auto lin_detail = growth_text(pts, &near_linear);
  out.check("planner: longest ring context never shrinks as N grows", monotone,
            monotone ? "non-decreasing in N for every model and device" : mono_detail);
  out.check(
      "planner: longest ring context grows near-linearly with N", near_linear,
      "growth from the smallest to the largest N, at least half of N's growth: " + lin_detail);
  out.check("Table 1 ordering: vanilla < memory-efficient < blockwise < ring (N >= 3)", order_ok,
            "longest context per the paper's per-layer formulas");
  out.check("every planner run answered", planner_ok, "ringsim plan --max-context --json");
}

// Ours vs Table 1 for the ring's per-layer memory (the one published formula ours implements).
void comparison(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  MdTable cmp({"N", "block c", "Table 1 ring 6bch (published formula)",
               "ours: attention_memory (ring, fwd)", "rel. diff"});
  for (const auto& p : pts) {
    if (!p.ok || p.config->facts.at("panel") != "1m") continue;
    const double t = p.value("table1_ring_bytes_at_1m"),
                 o = p.value("ours_ring_attention_bytes_at_1m");
    const auto n = static_cast<std::int64_t>(p.axis("--devices"));
    cmp.add({p.axes.at("--devices"), human_tokens(static_cast<double>(kFixedContext / n)),
             human_bytes(t), human_bytes(o), rel_diff(o, t)});
  }
  auto& rep = out.report;
  rep += "## Comparison with published values\n\n";
  rep +=
      "The paper's Table 3 (largest trainable context per model and cluster) is not reproduced "
      "in this project, so the longest-context numbers below have **no published value** to "
      "compare with here. The published quantity we do compare is Table 1's ring-attention "
      "activation, 6bch per layer, against our itemised buffers (Llama 2 7B, MHA, forward, s = "
      "1M):\n\n";
  rep += cmp.str();
  rep +=
      "\nOurs counts bytes: the query block and both K/V double buffers in bf16 (2 bytes per "
      "element), the output accumulator and the softmax statistics in fp32. Table 1 counts six "
      "blocks of b x c x h; read as bf16 elements that is 12bch bytes, and the fp32 accumulator "
      "adds 2bch more, hence the constant ratio. Both scale as 1/N at a fixed context, which is "
      "the paper's point.\n\n";
  MdTable tab({"model, hardware", "N", "Table 1: vanilla", "mem.-eff.", "blockwise", "ring",
               "planner: ring cp=N", "limited by", "planner: no CP", "ring / no CP"});
  for (const auto& c : combos())
    for (const auto* p : of(pts, c.name)) {
      const double ring = p->value("planner_ring_max_context"),
                   nocp = p->value("planner_nocp_max_context");
      tab.add({c.name, p->axes.at("--devices"),
               human_tokens(p->value("table1_vanilla_max_context")),
               human_tokens(p->value("table1_memeff_max_context")),
               human_tokens(p->value("table1_blockwise_max_context")),
               human_tokens(p->value("table1_ring_max_context")), human_tokens(ring),
               p->text("planner_ring_limited_by"), human_tokens(nocp),
               nocp > 0 ? fmt::format("{:.1f}x", ring / nocp) : "-"});
    }
  rep += "## Longest context per model, device and N\n\n";
  rep +=
      "Table 1 columns: one layer's activations (b = 1) within HBM minus the model state, 16 "
      "B/param sharded over N (ZeRO-3/FSDP; models/plan/plan.hpp PlanConstants). Planner columns: "
      "`ringsim plan --max-context` with full activation checkpointing and chunked loss, ring cp "
      "= N, or no context parallelism (cp 1, the N devices only shard the model).\n\n";
  rep += tab.str();
}

void reading(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  bool near_linear = true;
  const auto lin_detail = growth_text(pts, &near_linear);
  const auto a100 = of(pts, "7B, A100 80GB"), tpu = of(pts, "7B, TPU v4"),
             tpu13 = of(pts, "13B, TPU v4");
  std::string eager;
  for (const auto& c : combos())
    if (const auto v = of(pts, c.name); !v.empty())
      eager += fmt::format("{}{} at N = {}: {} tokens, limited by {}", eager.empty() ? "" : "; ",
                           c.name, v.front()->axes.at("--devices"),
                           human_tokens(v.front()->value("planner_eager_max_context")),
                           v.front()->text("planner_eager_limited_by"));
  auto& rep = out.report;
  rep += "\n## Reading\n\n";
  rep +=
      "- The paper's claim holds in both views: with ring attention the longest context grows at "
      "least in proportion to the number of devices (faster where the sharded model state still "
      "fills much of HBM), while without sequence parallelism it is fixed by one device's memory "
      "(it grows only a little as the model state shards thinner). Growth of the planner's "
      "longest ring context from the smallest to the largest N: " +
      lin_detail + "\n";
  const auto shape7 = find_model("--model", "llama2-7b");
  rep += fmt::format(
      "- The Table 1 view is far more optimistic than the planner because Table 1 counts one "
      "layer's working set. Training with full checkpointing also keeps every layer's input "
      "(bf16, 2 x c x h bytes per layer, L layers per device) and the FSDP-gathered weights; for "
      "a 7B model (L = {}) the stored inputs alone are {}ch bytes, about {:.0f}x Table 1's 6bch. "
      "The planner's `limited by` column names the term that overflows first.\n",
      shape7.layers, 2 * shape7.layers, 2.0 * shape7.layers / 6);
  if (!a100.empty() && !tpu.empty() && !tpu13.empty())
    rep += fmt::format(
        "- TPU v4 has {} per chip, so at small N the model state alone leaves little room (16 "
        "B/param sharded over N: {} of {} for 13B at N = {}); once the state is spread thin, the "
        "longest context is set by the per-token terms and the A100 / TPU v4 ratio approaches "
        "the HBM ratio: {:.2f}x for 7B at N = {} (HBM {:.2f}x).\n",
        human_bytes(tpu13.front()->value("hbm_bytes")),
        human_bytes(tpu13.front()->value("state_bytes_per_device")),
        human_bytes(tpu13.front()->value("hbm_bytes")), tpu13.front()->axes.at("--devices"),
        a100.back()->value("planner_ring_max_context") /
            std::max(1.0, tpu.back()->value("planner_ring_max_context")),
        a100.back()->axes.at("--devices"),
        a100.front()->value("hbm_bytes") / tpu.front()->value("hbm_bytes"));
  rep +=
      "- With the default eager loss (fp32 logits of every token, 12 B per token per vocabulary "
      "entry) the loss can cap the context before attention does, which is why the sweep uses "
      "chunked loss. Eager loss, smallest N: " +
      eager + "\n";
}

GridExperiment declaration() {
  GridExperiment g;
  g.name = "memory-scaling";
  g.title = "Per-device memory and longest trainable context vs devices";
  g.summary =
      "The Ring Attention paper's near-infinite-context claim for Llama 2 7B and 13B shapes on "
      "A100 80GB and TPU v4: per-device memory and the longest context as the ring grows, next to "
      "vanilla, memory-efficient and blockwise attention (the paper's Table 1 formulas) and the "
      "planner's full training memory model.";
  g.caption =
      "Each point is one model on one device type at N devices, evaluated in process: the "
      "paper's Table 1 formulas (one layer's activations in what HBM leaves after the "
      "FSDP-sharded model state), `ringsim plan --max-context` (models/plan/plan.hpp) with ring "
      "cp = N and without context parallelism (chunked loss; eager loss beside), and for Llama 2 "
      "7B on A100 the memory at a 1M-token context (Table 1's rows, our ring buffers "
      "models/analytic/memory.hpp, the planner's training total).";
  g.configs = combos();
  g.axes = {{"--devices", "8..1024:x2", "8,64"}};
  g.measures = {{"hbm_gb", "hbm_gb", ""},
                {"params", "params", ""},
                {"state_gb_per_device", "state_gb_per_device", ""},
                {"table1_budget_gb", "table1_budget_gb", ""},
                {"table1_vanilla_max_context", "table1_vanilla_max_context", ""},
                {"table1_memeff_max_context", "table1_memeff_max_context", ""},
                {"table1_blockwise_max_context", "table1_blockwise_max_context", ""},
                {"table1_ring_max_context", "table1_ring_max_context", ""},
                {"planner_ring_max_context", "planner_ring_max_context", ""},
                {"planner_ring_limited_by", "planner_ring_limited_by", ""},
                {"planner_nocp_max_context", "planner_nocp_max_context", ""},
                {"planner_nocp_limited_by", "planner_nocp_limited_by", ""},
                {"planner_eager_max_context", "planner_eager_max_context", ""},
                {"table1_ring_gb_at_1m", "table1_ring_gb_at_1m", ""},
                {"ours_ring_attention_gb_at_1m", "ours_ring_attention_gb_at_1m", ""},
                {"planner_ring_total_gb_at_1m", "planner_ring_total_gb_at_1m", ""},
                {"vanilla_bytes_at_1m", "vanilla_bytes_at_1m", ""},
                {"memeff_bytes_at_1m", "memeff_bytes_at_1m", ""},
                {"blockwise_bytes_at_1m", "blockwise_bytes_at_1m", ""},
                {"table1_ring_bytes_at_1m", "table1_ring_bytes_at_1m", ""},
                {"ours_ring_attention_bytes_at_1m", "ours_ring_attention_bytes_at_1m", ""},
                {"planner_ring_total_bytes_at_1m", "planner_ring_total_bytes_at_1m", ""},
                {"hbm_bytes", "hbm_bytes", ""}};
  PanelDecl p1;
  p1.title = "Per-device memory at a 1M-token context, Llama 2 7B";
  p1.x = "--devices";
  p1.panel = "1m";
  p1.x_axis = unit_axis("devices N (context-parallel degree, count)", "", true, 2);
  // Bytes in binary units (1 GiB = 2^30 B) on both the ticks and the title;
  // log or linear is chosen from the data (the `panels` analysis).
  p1.y_axis =
      unit_axis("memory per device (bytes, binary units; one layer, planner: training total)",
                "bytes", false, 2);
  p1.series = {
      {"vanilla_bytes_at_1m", "vanilla 2bhs^2 (Table 1)", palette_color(4)},
      {"memeff_bytes_at_1m", "memory-efficient 8bsh", palette_color(1)},
      {"blockwise_bytes_at_1m", "blockwise 2bsh", palette_color(2)},
      {"table1_ring_bytes_at_1m", "ring 6bch, c = s/N", palette_color(0)},
      {"ours_ring_attention_bytes_at_1m", "ours: ring attention buffers (fwd)", palette_color(5)},
      {"planner_ring_total_bytes_at_1m", "planner: ring training total", palette_color(6)},
      {"hbm_bytes", "A100 HBM", palette_color(8)}};
  g.panels = {
      p1,
      {"Longest trainable context, planner (full training memory, chunked loss)", "--devices",
       "planner_ring_max_context", "", unit_axis("devices N (count)", "", true, 2),
       unit_axis("longest context s (tokens, K = 1024)", "tokens", false, 2)}};
  g.plot_title = "Memory and longest context vs devices: Ring Attention's near-infinite context";
  g.plot_note =
      "Left: Llama 2 7B (h = 4096, b = 1) at s = 1M tokens; Table 1 rows as in Ring Attention "
      "(arXiv 2310.01889), ours = models/analytic/memory.hpp, planner = ringsim plan "
      "(models/plan/plan.hpp). Middle: Table 1 activations of one layer must fit in HBM minus the "
      "FSDP-sharded model state (16 B/param / N); solid A100 80 GB, dashed TPU v4 32 GiB "
      "(diamonds). Memory in binary units (1 GiB = 2^30 B), contexts in binary K/M (1M = 2^20 "
      "tokens). Right: ringsim plan --max-context with ring cp = N (solid) and without context "
      "parallelism (dashed).";
  g.plot_columns = 3;
  g.plot_width = 2100;
  g.plot_height = 950;
  g.evaluate = evaluate;
  g.analyses = {panels, checks, comparison, reading};
  return g;
}

}  // namespace

Experiment memory_scaling_experiment() {
  return declare(declaration());
}

}  // namespace ringsim::exp
