// inference-scaling: long-context prefill split over nodes. Llama 3 405B on
// DGX H100 nodes (TP 8 inside a node, CP across nodes): time to first token
// against the number of nodes at 128K and 1M tokens, decode time per token
// over the sharded KV cache, and the pass-KV / pass-Q crossover as more of
// the context is already cached (persistent KV, multi-turn). Every point is
// the closed forms of models/infer/infer.hpp, evaluated in this process
// (`ringsim infer --engine analytic` gives the same numbers); tests/infer
// holds the SimGrid model equal to them on these rail-optimised clusters,
// where no two transfers share a link. Declared as data (grid_experiment.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "experiments/device_env.hpp"
#include "experiments/grid_experiment.hpp"
#include "experiments/list.hpp"
#include "experiments/markdown.hpp"
#include "models/core/catalog.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/infer/infer.hpp"
#include "models/kernel/implementation.hpp"
#include "proc/resolve.hpp"

namespace ringsim::exp {

namespace {

using nlohmann::json;

constexpr const char* kModel = "llama3-405b";
constexpr const char* kGpu = "h100-sxm";
constexpr std::int64_t kTp = 8;
// The forward query tile of the H100 kernels' published benchmarks
// (models/kernel/kernel_model.cpp), for the wave-quantization example.
constexpr std::int64_t kQueryTile = 128;

const DeviceEnv& env() {
  return device_env(kGpu);
}

// The cached tokens for a share (percent) of the context: a multiple of
// 2 x nodes zigzag chunks, leaving at least one chunk pair new.
std::int64_t cached_tokens(std::int64_t context, std::int64_t nodes, double percent) {
  const std::int64_t unit = 2 * nodes;
  auto cached = static_cast<std::int64_t>(std::floor(percent / 100 * context / unit)) * unit;
  return cached >= context ? context - unit : cached;
}

// One point: the keys `ringsim infer --json` prints, named as data.csv's columns.
json evaluate(const Config& c, const std::map<std::string, std::string>& axes) {
  InferRequest r;
  r.shape = find_model("--model", kModel);
  r.context = parse_count("--context", c.facts.at("context"), 1, kMaxTokens);
  r.cp = parse_count("--nodes", axes.at("--nodes"), 1, 1 << 16);
  r.cached = cached_tokens(r.context, r.cp,
                           parse_real("--cached-share", axes.at("--cached-share"), 0, 100));
  r.tp = kTp;
  r.gpus = kTp * r.cp;
  const auto a = infer(r, env().hw, *env().im);
  return {{"context", r.context},
          {"cached", r.cached},
          {"gpus", r.gpus},
          {"variant", to_string(a.choice.variant)},
          {"ttft_s", a.ttft_s},
          {"ttft_pass_kv_s", a.choice.ttft_s[0]},
          {"ttft_pass_q_s", a.choice.ttft_s[1]},
          {"message_pass_kv_bytes", a.choice.message_bytes[0]},
          {"message_pass_q_bytes", a.choice.message_bytes[1]},
          {"attention_s", a.attention_s},
          {"exposed_comm_s", a.attention_exposed_s},
          {"dense_s", a.dense_s},
          {"decode_s_per_token", a.decode_s_per_token},
          {"tokens_per_s", a.tokens_per_s},
          {"memory_bytes", a.memory.total},
          {"memory_gib_per_gpu", a.memory.total / (1024.0 * 1024 * 1024)},
          {"fits", a.memory.fits() ? 1 : 0},
          {"prefill_mfu", a.mfu}};
}

std::string dense_share(const std::vector<GridPoint>& pts);

bool in_panel(const GridPoint& p, const char* panel) {
  return p.ok && p.config->facts.at("panel") == panel;
}

// The node sweep's points of one configuration, in node order.
std::vector<const GridPoint*> by_nodes(const std::vector<GridPoint>& pts, const Config* c) {
  std::vector<const GridPoint*> v;
  for (const auto& p : pts)
    if (p.config == c && in_panel(p, "nodes")) v.push_back(&p);
  std::sort(v.begin(), v.end(), [](const GridPoint* a, const GridPoint* b) {
    return a->axis("--nodes") < b->axis("--nodes");
  });
  return v;
}

std::vector<const Config*> node_configs(const std::vector<GridPoint>& pts) {
  std::vector<const Config*> v;
  for (const auto& p : pts)
    if (in_panel(p, "nodes") && std::find(v.begin(), v.end(), p.config) == v.end())
      v.push_back(p.config);
  return v;
}

// Dashed "linear from 1 node" beside each context's TTFT line.
void linear_lines(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  if (out.plot.panels.empty()) return;
  auto& panel = out.plot.panels.front();
  std::vector<Series> add;
  for (const auto& s : panel.series) {
    if (s.points.empty()) continue;
    Series ideal = line_series(s.name + ": linear from 1 node", s.color, true);
    ideal.markers = false;
    const auto first = s.points.front();
    for (const auto& [x, y] : s.points) ideal.points.push_back({x, first.second * first.first / x});
    add.push_back(ideal);
  }
  // Beside its own line, as the legend reads: 128K, its linear, 1M, ...
  std::vector<Series> merged;
  for (std::size_t i = 0; i < panel.series.size(); ++i) {
    merged.push_back(panel.series[i]);
    if (i < add.size()) merged.push_back(add[i]);
  }
  panel.series = merged;
  (void)pts;
}

void scaling(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  MdTable t({"context", "nodes", "GPUs", "variant", "TTFT", "speed-up vs 1 node",
             "exposed transfers", "decode / token", "memory / GPU"});
  bool monotone = true;
  std::string mono_detail;
  for (const auto* c : node_configs(pts)) {
    double first = 0, prev = 0;
    for (const auto* p : by_nodes(pts, c)) {
      const double ttft = p->value("ttft_s");
      if (first == 0) first = ttft;
      if (prev > 0 && ttft >= prev) {
        monotone = false;
        mono_detail += fmt::format("{} at {} nodes; ", c->name, p->axes.at("--nodes"));
      }
      prev = ttft;
      t.add({tokens_k(static_cast<std::int64_t>(p->value("context"))), p->axes.at("--nodes"),
             fmt::format("{:.0f}", p->value("gpus")), p->text("variant"), human_seconds(ttft),
             fmt::format("{:.2f}x", first / ttft), human_seconds(p->value("exposed_comm_s")),
             human_seconds(p->value("decode_s_per_token")),
             fmt::format("{} ({})", human_bytes(p->value("memory_bytes")),
                         p->value("fits") == 1 ? "fits" : "does not fit")});
    }
  }
  out.check("TTFT falls as nodes are added", monotone,
            monotone ? "at 128K and 1M tokens, every doubling" : mono_detail);
  const auto& dev = Catalog::embedded().device(kGpu);
  out.report += "## Comparison with published values\n\n";
  out.report += fmt::format(
      "Published prefill measurements of Llama 3 405B with context parallelism (Yang et al. "
      "2024, \"Context Parallelism for Scalable Million-Token Inference\", arXiv 2411.01783) are "
      "kept outside this project and judge these numbers; nothing here was fitted to them. The "
      "inputs are the catalog's H100 SXM ({:.0f} TFLOP/s bf16, HBM {:.2f} TB/s), DGX H100 nodes "
      "(NVLink 4 inside, InfiniBand NDR between, one NIC per GPU) and the Llama 3 405B shape. "
      "That work ran FP8 weights; this model runs BF16, which moves the GEMM time ({}) and the "
      "memory, not the attention.\n\n",
      env().hw.flops / 1e12, dev.hbm_bandwidth / 1e12, dense_share(pts));
  out.report += "## Results: TTFT against nodes\n\n" + t.str();
}

// The GEMMs' share of the largest context's TTFT on the most nodes.
std::string dense_share(const std::vector<GridPoint>& pts) {
  const GridPoint* best = nullptr;
  for (const auto& p : pts)
    if (in_panel(p, "nodes") && (!best || p.value("context") > best->value("context") ||
                                 (p.value("context") == best->value("context") &&
                                  p.axis("--nodes") > best->axis("--nodes"))))
      best = &p;
  if (!best) return "no point ran";
  return fmt::format("{:.0f}% of the {}-token TTFT on {} nodes here",
                     100 * best->value("dense_s") / best->value("ttft_s"),
                     tokens_k(static_cast<std::int64_t>(best->value("context"))),
                     best->axes.at("--nodes"));
}

struct Cross {
  double crossover = -1;
  bool seen_kv = false, seen_q = false;
  const GridPoint* first = nullptr;  // nothing cached
};

Cross crossover(const std::vector<GridPoint>& pts) {
  Cross c;
  std::string last = "pass-kv";
  for (const auto& p : pts) {
    if (!in_panel(p, "cached")) continue;
    if (!c.first) c.first = &p;
    const auto v = p.text("variant");
    (v == "pass-q" ? c.seen_q : c.seen_kv) = true;
    if (v != last && c.crossover < 0) c.crossover = 100 * p.value("cached") / p.value("context");
    last = v;
  }
  return c;
}

void cached_table(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  MdTable t({"cached share", "cached tokens", "new tokens", "TTFT pass-kv", "TTFT pass-q",
             "auto chooses", "K/V message", "Q message"});
  const GridPoint* any = nullptr;
  for (const auto& p : pts) {
    if (!in_panel(p, "cached")) continue;
    any = &p;
    const double ctx = p.value("context"), cached = p.value("cached");
    t.add({fmt::format("{:.1f}%", 100 * cached / ctx), fmt::format("{:.0f}", cached),
           fmt::format("{:.0f}", ctx - cached), human_seconds(p.value("ttft_pass_kv_s")),
           human_seconds(p.value("ttft_pass_q_s")), p.text("variant"),
           human_bytes(p.value("message_pass_kv_bytes")),
           human_bytes(p.value("message_pass_q_bytes"))});
  }
  const auto c = crossover(pts);
  const bool both = c.seen_kv && c.seen_q;
  out.check("the choice crosses over from pass-kv to pass-q as more is cached", both,
            both ? fmt::format("pass-q from {:.1f}% cached on", c.crossover)
                 : "one variant wins everywhere in this sweep");
  if (any)
    out.report += fmt::format("\n## Results: pass-KV against pass-Q at {} tokens on {} nodes\n\n",
                              tokens_k(static_cast<std::int64_t>(any->value("context"))),
                              any->axes.at("--nodes")) +
                  t.str();
}

// A cached-share row whose prefill leaves SMs idle in a second wave: the
// example the reading gives ("" when the sweep has none).
std::string wave_example(const std::vector<GridPoint>& pts) {
  const auto shape = find_model("--model", kModel);
  const std::int64_t heads = shape.heads / kTp, sms = env().hw.sm_count;
  for (const auto& p : pts) {
    if (!in_panel(p, "cached") || sms <= 0) continue;
    const auto fresh = static_cast<std::int64_t>(p.value("context") - p.value("cached"));
    const std::int64_t tiles =
        (fresh / static_cast<std::int64_t>(p.axis("--nodes")) + kQueryTile - 1) / kQueryTile;
    const std::int64_t blocks = tiles * heads;
    if (blocks > sms && blocks <= sms + sms / 4)
      return fmt::format(
          "e.g. {} new tokens per rank = {} tiles of {} x {} heads = {} thread blocks on {} SMs: "
          "two waves, the second nearly empty",
          fresh / static_cast<std::int64_t>(p.axis("--nodes")), tiles, kQueryTile, heads, blocks,
          sms);
  }
  return "";
}

void reading(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  std::string eff_text, most_nodes;
  for (const auto* c : node_configs(pts)) {
    const auto v = by_nodes(pts, c);
    if (v.empty()) continue;
    const double n = v.back()->axis("--nodes") / v.front()->axis("--nodes");
    eff_text += fmt::format("{}{}: {:.0f}% of linear", eff_text.empty() ? "" : ", ",
                            tokens_k(static_cast<std::int64_t>(v.back()->value("context"))),
                            100 * v.front()->value("ttft_s") / v.back()->value("ttft_s") / n);
    most_nodes = v.back()->axes.at("--nodes");
  }
  const auto shape = find_model("--model", kModel);
  const auto c = crossover(pts);
  const auto wave = wave_example(pts);
  out.report += "\n## Reading\n\n";
  out.report += fmt::format(
      "- Prefill attention is quadratic in the context and splits evenly over the CP ranks "
      "(zigzag shards), and each ring step's K/V transfer hides behind its compute at these "
      "block sizes, so TTFT falls with nodes about linearly ({} at {} nodes). Slightly better "
      "than linear, because with one rank the whole causal triangle runs at the kernel's slower "
      "masked rate, while split over ranks most of each rank's work is unmasked blocks at the "
      "full rate (zigzag: only a rank's own chunks are cut by the diagonal). What does not shrink "
      "per rank is the GEMM and TP all-reduce time per token, which is a fixed share.\n",
      eff_text, most_nodes);
  out.report += fmt::format(
      "- The pass-KV / pass-Q curves step rather than slide: a prefill of one request gives a "
      "rank few query tiles per head{}, and the kernel model charges that wave quantization "
      "(models/kernel/kernel_model.cpp, occupancy against the published benchmark's).\n",
      wave.empty() ? "" : " (" + wave + ")");
  std::string decode;
  for (const auto* c : node_configs(pts))
    if (const auto v = by_nodes(pts, c); !v.empty())
      decode += fmt::format(
          "{}{}: {} on {} node(s), {} on {}", decode.empty() ? "" : "; ", c->name,
          human_seconds(v.front()->value("decode_s_per_token")), v.front()->axes.at("--nodes"),
          human_seconds(v.back()->value("decode_s_per_token")), v.back()->axes.at("--nodes"));
  out.report += fmt::format(
      "- Decode reads every weight once per token on every rank (the model is replicated across "
      "CP ranks) and its shard of the KV cache: adding nodes shrinks only the cache read, so the "
      "time per token does not fall while the CP gather of partial outputs adds latency per "
      "layer ({}).\n",
      decode);
  const double ratio =
      c.first ? c.first->value("message_pass_q_bytes") / c.first->value("message_pass_kv_bytes")
              : std::nan("");
  out.report += fmt::format(
      "- With nothing cached, a pass-KV step sends the K/V of (cached + new) tokens of {} KV "
      "head(s) per GPU and a pass-Q step the queries of the new tokens of {} heads: pass-KV "
      "moves {:.0f}x fewer bytes and wins. As the cached share grows, new tokens (and so queries "
      "and the compute that hides a transfer) shrink while K/V messages do not: pass-Q wins {}. "
      "The choice is derived from the two predicted TTFTs, which differ in their messages (ring "
      "steps, pass-Q's return all-to-all of partial outputs) only.\n",
      shape.kv_heads / kTp, shape.heads / kTp, ratio,
      c.crossover >= 0 ? fmt::format("from about {:.0f}% cached", c.crossover)
                       : std::string("nowhere in this sweep"));
}

GridExperiment declaration() {
  GridExperiment g;
  g.name = "inference-scaling";
  g.title = "Inference scaling: TTFT against nodes, pass-KV vs pass-Q";
  g.summary =
      "Llama 3 405B prefill split over 1 to 16 DGX H100 nodes (TP 8 x CP) at 128K and 1M tokens, "
      "decode time per token over the sharded KV cache, and the pass-KV / pass-Q crossover "
      "against the cached share of a 128K context.";
  g.caption = fmt::format(
      "Each point is `ringsim infer --model {} --gpu {} --tp {} --cp NODES --context C --cached "
      "K --engine analytic` (models/infer/infer.hpp), evaluated in process: the context at 128K "
      "and 1M tokens against the node count (nothing cached), and at 128K on 16 nodes against "
      "the cached share (a multiple of 2 x 16 zigzag chunks). Measured: time to first token "
      "(both variants, and the one auto chooses), decode time per token, memory per GPU.",
      kModel, kGpu, kTp);
  g.configs = {{"128K tokens", {}, {{"panel", "nodes"}, {"context", "128K"}}},
               {"1M tokens", {}, {{"panel", "nodes"}, {"context", "1M"}}},
               {"128K tokens on 16 nodes, cached",
                {},
                {{"panel", "cached"}, {"context", "128K"}},
                {{"--nodes", "16", "16"},
                 {"--cached-share", "0,25,50,75,85,90,95,97.5,99,99.5", "0,50,90,99.5"}}}};
  g.axes = {{"--nodes", "1,2,4,8,16", "1,4,16"}, {"--cached-share", "0", "0"}};
  g.measures = {{"context", "context", ""},
                {"cached", "cached", ""},
                {"gpus", "gpus", ""},
                {"variant", "variant", ""},
                {"ttft_s", "ttft_s", ""},
                {"ttft_pass_kv_s", "ttft_pass_kv_s", ""},
                {"ttft_pass_q_s", "ttft_pass_q_s", ""},
                {"attention_s", "attention_s", ""},
                {"exposed_comm_s", "exposed_comm_s", ""},
                {"decode_s_per_token", "decode_s_per_token", ""},
                {"tokens_per_s", "tokens_per_s", ""},
                {"memory_gib_per_gpu", "memory_gib_per_gpu", ""},
                {"fits", "fits", ""},
                {"prefill_mfu", "prefill_mfu", ""}};
  const auto nodes = unit_axis("nodes (CP degree, count)", "", true, 2);
  PanelDecl pc;
  pc.title = "Pass-KV vs pass-Q at 128K tokens on 16 nodes";
  pc.x = "--cached-share";
  pc.panel = "cached";
  pc.x_axis = make_axis("cached share of the context (%)", false, 10, 0, 100);
  pc.x_axis.unit = "%";
  pc.y_axis = unit_axis("TTFT (time to first token, s)", "s", true, 10);
  pc.series = {{"ttft_pass_kv_s", "pass-kv", palette_color(0), "circle"},
               {"ttft_pass_q_s", "pass-q", palette_color(1), "circle"},
               {"ttft_s", "auto's choice", "#000000", "diamond", true}};
  g.panels = {{"Time to first token against nodes (TP 8 inside each)", "--nodes", "ttft_s", "nodes",
               nodes, unit_axis("TTFT (time to first token, s)", "s", true, 10)},
              {"Decode: time per token at the full context", "--nodes", "decode_s_per_token",
               "nodes", nodes, unit_axis("time per token (s)", "s", false, 10)},
              pc};
  g.plot_title = fmt::format("Inference scaling: {} prefill and decode on {} nodes (TP {} x CP)",
                             kModel, kGpu, kTp);
  g.plot_note =
      "Closed forms (models/infer/infer.hpp): attention at the catalog kernel's published rates "
      "(cuDNN curves on H100), projections and MLP at the GEMM rate, pointwise work at HBM "
      "bandwidth, TP all-reduces on NVLink 4, the CP ring on one NDR NIC per GPU. BF16 weights: "
      "405B does not fit in 80 GB per GPU at TP 8 (the table says so); the times do not depend "
      "on it.";
  g.plot_columns = 3;
  g.plot_width = 2100;
  g.plot_height = 800;
  g.evaluate = evaluate;
  g.analyses = {linear_lines, scaling, cached_table, reading};
  return g;
}

}  // namespace

Experiment inference_scaling_experiment() {
  return declare(declaration());
}

}  // namespace ringsim::exp
