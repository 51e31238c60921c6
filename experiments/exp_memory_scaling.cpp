// memory-scaling: the Ring Attention paper's "near-infinite context" claim.
// Per-device memory and the longest trainable context vs the number of
// devices, for Llama 2 7B and 13B shapes on A100 80GB and TPU v4 (32 GiB),
// two ways:
//  - the paper's Table 1 view: one layer's activations (vanilla 2bhs^2,
//    memory-efficient 8bsh, blockwise 2bsh, ring 6bch with c = s/N) against
//    what HBM leaves after the sharded model state;
//  - the planner's full training memory (`ringsim plan --max-context`,
//    models/plan/plan.hpp): checkpointed layer inputs, loss, FSDP buffers, overheads.
#include <fmt/format.h>

#include <cmath>
#include <map>

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

struct Combo {
  std::string model, gpu, label;
};

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

void run(const Context& ctx, Output& out) {
  const std::vector<Combo> combos{{"llama2-7b", "a100-80gb", "7B, A100 80GB"},
                                  {"llama2-13b", "a100-80gb", "13B, A100 80GB"},
                                  {"llama2-7b", "tpu-v4", "7B, TPU v4"},
                                  {"llama2-13b", "tpu-v4", "13B, TPU v4"}};
  const std::vector<std::int64_t> ns =
      ctx.quick ? std::vector<std::int64_t>{8, 64}
                : std::vector<std::int64_t>{8, 16, 32, 64, 128, 256, 512, 1024};
  const std::int64_t fixed_context = std::int64_t{1} << 20;  // panel 1: 1M tokens
  const auto& cat = Catalog::embedded();

  // The planner, in-process (pure closed forms): ring cp = N and no CP (cp 1)
  // longest context, per combo and N; and its memory at 1M tokens for 7B on A100.
  struct PlanRun {
    bool ok = true;
    double tokens = 0;       // longest context (max-context runs)
    double memory = 0;       // the best config's memory (fixed-context runs)
    std::string limited_by;  // what stops one step longer, or why it failed
  };
  auto request = [&](const Combo& c, std::int64_t n, std::int64_t cp, LossImpl loss) {
    PlanRequest r;
    r.shape = find_model("--model", c.model);
    r.gpus = n;
    r.cp_degrees = {cp};
    if (cp > 1) r.layouts = {Layout::Ring};
    r.loss = loss;
    return r;
  };
  auto hardware = [&](const Combo& c) {
    proc::HardwareSpec h;
    h.gpu = c.gpu;
    return proc::resolve_hardware(h, cat, DType::BF16);
  };
  // The planner's own search limit (`ringsim plan --max-context`).
  constexpr std::int64_t kContextLimit = std::int64_t{1} << 30;
  auto longest = [&](const Combo& c, std::int64_t n, std::int64_t cp, LossImpl loss) {
    ++out.points;
    PlanRun p;
    try {
      const auto mc = max_context(request(c, n, cp, loss), hardware(c), kContextLimit);
      p.tokens = static_cast<double>(mc.tokens);
      if (!mc.by_config.empty()) p.limited_by = mc.by_config.front().limited_by;
    } catch (const InputError& e) {
      ++out.failed_points;
      p.ok = false;
      p.limited_by = std::string("failed: ") + e.what();
    }
    return p;
  };
  std::vector<PlanRun> runs;
  for (const auto& c : combos)
    for (auto n : ns) {
      runs.push_back(longest(c, n, n, LossImpl::Chunked));
      runs.push_back(longest(c, n, 1, LossImpl::Chunked));
    }
  for (const auto& c : combos) runs.push_back(longest(c, ns.front(), ns.front(), LossImpl::Eager));
  for (auto n : ns) {
    ++out.points;
    PlanRun p;
    auto r = request(combos[0], n, n, LossImpl::Chunked);
    r.context = fixed_context;
    const auto hw = hardware(combos[0]);
    const RooflineModel cm(hw.effective_flops());
    const auto configs = search(r, hw, cm);
    if (!configs.empty() && configs.front().evaluated) p.memory = configs.front().memory.total;
    runs.push_back(p);
  }
  if (ctx.log) *ctx.log << fmt::format("  {} planner evaluation(s), in-process\n", runs.size());
  auto max_ctx = [](const PlanRun& r) { return std::pair{r.tokens, r.limited_by}; };

  out.data.set_columns(
      {"model", "hardware", "devices", "hbm_gb", "params", "state_gb_per_device",
       "table1_budget_gb", "table1_vanilla_max_context", "table1_memeff_max_context",
       "table1_blockwise_max_context", "table1_ring_max_context", "planner_ring_max_context",
       "planner_ring_limited_by", "planner_nocp_max_context", "planner_nocp_limited_by",
       "table1_ring_gb_at_1m", "ours_ring_attention_gb_at_1m", "planner_ring_total_gb_at_1m"});

  Panel p1, p2, p3;
  p1.title = "Per-device memory at a 1M-token context, Llama 2 7B";
  p1.x = unit_axis("devices N (context-parallel degree, count)", "", true, 2);
  // Bytes in binary units (1 GiB = 2^30 B) on both the ticks and the title;
  // log or linear is chosen from the data below.
  p1.y = unit_axis("memory per device (bytes, binary units; one layer, planner: training total)",
                   "bytes", false, 2);
  p2.title = "Longest context, Table 1 view: one layer's activations in what HBM leaves";
  p2.x = unit_axis("devices N (count)", "", true, 2);
  p2.y = unit_axis("longest context s (tokens, K = 1024)", "tokens", false, 2);
  p3.title = "Longest trainable context, planner (full training memory, chunked loss)";
  p3.x = p2.x;
  p3.y = p2.y;
  p1.legend = p2.legend = p3.legend = "bottom";

  const auto& s7 = find_model("--model", "llama2-7b");
  const double h7 = s7.d_model;
  Series v1 = line_series("vanilla 2bhs^2 (Table 1)", palette_color(4));
  Series m1 = line_series("memory-efficient 8bsh", palette_color(1));
  Series b1 = line_series("blockwise 2bsh", palette_color(2));
  Series r1 = line_series("ring 6bch, c = s/N", palette_color(0));
  Series o1 = line_series("ours: ring attention buffers (fwd)", palette_color(5));
  Series t1 = line_series("planner: ring training total", palette_color(6));
  Series hbm1 = line_series("A100 HBM 80 GB", palette_color(8), true);
  o1.dash = true;
  o1.markers = true;

  std::vector<Series> p2s, p3s;
  const std::vector<std::string> kinds{"vanilla", "memory-efficient", "blockwise", "ring"};
  std::map<std::string, Series> t1series;
  MdTable tab({"model, hardware", "N", "Table 1: vanilla", "mem.-eff.", "blockwise", "ring",
               "planner: ring cp=N", "limited by", "planner: no CP", "ring / no CP"});
  bool monotone = true, near_linear = true, order_ok = true, planner_ok = true;
  std::string mono_detail, lin_detail;
  std::size_t k = 0, ci = 0;
  double a100_7b_last = 0, tpu_7b_last = 0;
  for (const auto& c : combos) {
    const auto& shape = find_model("--model", c.model);
    const auto& dev = cat.device(c.gpu);
    const double h = shape.d_model, hbm = dev.hbm_bytes;
    const double params = static_cast<double>(total_params(shape));
    Series sv = line_series(c.label + ": vanilla", palette_color(4), ci % 2 == 1);
    Series sm = line_series(c.label + ": memory-efficient", palette_color(1), ci % 2 == 1);
    Series sb = line_series(c.label + ": blockwise", palette_color(2), ci % 2 == 1);
    Series sr = line_series(c.label + ": ring", color_for("ring", 0), ci % 2 == 1);
    // The device family's marker (the one style table, plot_spec.hpp).
    const Style& fam = style_for(c.gpu.rfind("tpu", 0) == 0 ? "TPU v4" : "A100");
    for (auto* s : {&sv, &sm, &sb, &sr}) {
      s->markers = true;
      s->marker = fam.marker;
    }
    Series pr = line_series(c.label + ": ring cp = N", palette_color(ci), false);
    Series pn = line_series(c.label + ": no CP (cp 1)", palette_color(ci), true);
    pn.markers = true;
    double first_ctx = 0, prev = 0;  // longest ring context at the first and the latest N
    std::int64_t first_n = 0;
    for (std::size_t ni = 0; ni < ns.size(); ++ni) {
      const auto n = ns[ni];
      const auto& ring_run = runs[k++];
      const auto& nocp_run = runs[k++];
      const auto [ring_ctx, ring_lim] = max_ctx(ring_run);
      const auto [nocp_ctx, nocp_lim] = max_ctx(nocp_run);
      planner_ok = planner_ok && ring_run.ok && nocp_run.ok;
      // FSDP shards the 16 B/param model state over all N devices.
      const double state = kState * params / static_cast<double>(n);
      const double budget = std::max(0.0, hbm - state);
      const double tv = vanilla_max(budget, h), tm = mem_eff_max(budget, h),
                   tb = blockwise_max(budget, h), tr = ring_max(budget, h, static_cast<double>(n));
      order_ok = order_ok && tv < tm && tm < tb && (n < 3 || tb < tr);
      auto row = out.data.add_row();
      row.set("model", c.model)
          .set("hardware", c.gpu)
          .set("devices", n)
          .set("hbm_gb", hbm / 1e9)
          .set("params", params)
          .set("state_gb_per_device", state / 1e9)
          .set("table1_budget_gb", budget / 1e9)
          .set("table1_vanilla_max_context", tv)
          .set("table1_memeff_max_context", tm)
          .set("table1_blockwise_max_context", tb)
          .set("table1_ring_max_context", tr)
          .set("planner_ring_max_context", ring_ctx)
          .set("planner_ring_limited_by", ring_lim)
          .set("planner_nocp_max_context", nocp_ctx)
          .set("planner_nocp_limited_by", nocp_lim);
      if (ci == 0) {
        const double s = static_cast<double>(fixed_context), cblk = s / static_cast<double>(n);
        Workload w;
        w.devices = n;
        w.block = fixed_context / n;
        w.layout = Layout::Ring;
        w.causal = true;
        w.pass = Pass::Fwd;
        w.shape = shape;
        const double ours = static_cast<double>(attention_memory(w).total());
        const auto& tr1m = runs[runs.size() - ns.size() + ni];
        const double planner_total = tr1m.memory;
        row.set("table1_ring_gb_at_1m", ring_bytes(1, h7, cblk) / 1e9)
            .set("ours_ring_attention_gb_at_1m", ours / 1e9);
        if (planner_total > 0) row.set("planner_ring_total_gb_at_1m", planner_total / 1e9);
        const double x = static_cast<double>(n);
        v1.points.push_back({x, vanilla_bytes(1, h7, s)});
        m1.points.push_back({x, mem_eff_bytes(1, h7, s)});
        b1.points.push_back({x, blockwise_bytes(1, h7, s)});
        r1.points.push_back({x, ring_bytes(1, h7, cblk)});
        o1.points.push_back({x, ours});
        if (planner_total > 0) t1.points.push_back({x, planner_total});
        hbm1.points.push_back({x, hbm});
      }
      const double x = static_cast<double>(n);
      sv.points.push_back({x, tv});
      sm.points.push_back({x, tm});
      sb.points.push_back({x, tb});
      sr.points.push_back({x, tr});
      if (ring_ctx > 0) pr.points.push_back({x, ring_ctx});
      if (nocp_ctx > 0) pn.points.push_back({x, nocp_ctx});
      if (ring_ctx < prev) {
        monotone = false;
        mono_detail += fmt::format("{} N={} ", c.label, n);
      }
      prev = ring_ctx;
      if (first_n == 0) {
        first_n = n;
        first_ctx = ring_ctx;
      }
      tab.add({c.label, std::to_string(n), human_tokens(tv), human_tokens(tm), human_tokens(tb),
               human_tokens(tr), human_tokens(ring_ctx), ring_lim, human_tokens(nocp_ctx),
               nocp_ctx > 0 ? fmt::format("{:.1f}x", ring_ctx / nocp_ctx) : "-"});
    }
    if (ci == 0) a100_7b_last = prev;
    if (ci == 2) tpu_7b_last = prev;
    // Near-infinite: the longest context grows at least half as fast as N.
    const double growth = first_ctx > 0 ? prev / first_ctx : 0;
    const double n_ratio = static_cast<double>(ns.back()) / static_cast<double>(first_n);
    if (growth < 0.5 * n_ratio) {
      near_linear = false;
      lin_detail += fmt::format("{}: x{:.1f} for x{:.0f} devices; ", c.label, growth, n_ratio);
    } else {
      lin_detail += fmt::format("{} x{:.1f} for x{:.0f} devices; ", c.label, growth, n_ratio);
    }
    if (ci == 0 || ci == 2) {  // Table 1 view for the 7B rows (A100 solid, TPU v4 dashed)
      for (auto* s : {&sv, &sm, &sb, &sr}) {
        s->dash = fam.dash;
        p2s.push_back(*s);
      }
    }
    p3s.push_back(pr);
    if (ci == 0 || ci == 2) p3s.push_back(pn);
    ++ci;
  }
  if (lin_detail.size() >= 2) lin_detail.resize(lin_detail.size() - 2);
  if (!hbm1.points.empty()) {
    const double hbm = hbm1.points.front().second;
    hbm1.name = fmt::format("A100 HBM: {} ({:.0f} GB)", human_bytes(hbm), hbm / 1e9);
  }
  if (!v1.points.empty())  // one value at every N: vanilla does not split the context
    v1.name = fmt::format("vanilla 2bhs^2 (Table 1): {}", human_bytes(v1.points.front().second));
  p1.series = {v1, m1, b1, r1, o1, t1, hbm1};
  p2.series = p2s;
  p3.series = p3s;
  // Log where the data spans decades (bytes from MiB to PiB; contexts from
  // thousands to hundreds of millions of tokens), linear otherwise.
  for (Panel* p : {&p1, &p2, &p3}) p->y.log = spans_decades(p->series, true);

  out.check("planner: longest ring context never shrinks as N grows", monotone,
            monotone ? "non-decreasing in N for every model and device" : mono_detail);
  out.check(
      "planner: longest ring context grows near-linearly with N", near_linear,
      "growth from the smallest to the largest N, at least half of N's growth: " + lin_detail);
  out.check("Table 1 ordering: vanilla < memory-efficient < blockwise < ring (N >= 3)", order_ok,
            "longest context per the paper's per-layer formulas");
  out.check("every planner run answered", planner_ok, "ringsim plan --max-context --json");

  // Eager-loss comparison at the smallest N.
  std::string eager_lines;
  const std::size_t eager0 = combos.size() * ns.size() * 2;
  for (std::size_t i = 0; i < combos.size(); ++i) {
    const auto [e_ctx, e_lim] = max_ctx(runs[eager0 + i]);
    eager_lines +=
        fmt::format("{}{} at N = {}: {} tokens, limited by {}", eager_lines.empty() ? "" : "; ",
                    combos[i].label, ns.front(), human_tokens(e_ctx), e_lim);
  }

  // Ours vs Table 1 for the ring's per-layer memory (the one published formula ours implements).
  MdTable cmp({"N", "block c", "Table 1 ring 6bch (published formula)",
               "ours: attention_memory (ring, fwd)", "rel. diff"});
  for (std::size_t i = 0; i < ns.size(); ++i) {
    const double t = r1.points[i].second, o = o1.points[i].second;
    cmp.add({std::to_string(ns[i]), human_tokens(static_cast<double>(fixed_context / ns[i])),
             human_bytes(t), human_bytes(o), rel_diff(o, t)});
  }

  out.plot.title = "Memory and longest context vs devices: Ring Attention's near-infinite context";
  out.plot.columns = 3;
  out.plot.width = 2100;
  out.plot.height = 950;
  out.plot.panels = {p1, p2, p3};
  out.plot.note =
      "Left: Llama 2 7B (h = 4096, b = 1) at s = 1M tokens; Table 1 rows as in Ring Attention "
      "(arXiv 2310.01889), "
      "ours = models/analytic/memory.hpp, planner = ringsim plan (models/plan/plan.hpp). Middle: "
      "Table 1 "
      "activations of one layer "
      "must fit in HBM minus the FSDP-sharded model state (16 B/param / N); solid A100 80 GB, "
      "dashed TPU v4 32 GiB (diamonds). Memory in binary units (1 GiB = 2^30 B), contexts in "
      "binary K/M (1M = 2^20 tokens). "
      "Right: ringsim plan --max-context with ring cp = N (solid) and without context parallelism "
      "(dashed).";

  auto& rep = out.report;
  rep += "## Comparison with published values\n\n";
  rep +=
      "The paper's Table 3 (largest trainable context per model and cluster) is not reproduced "
      "in this project, so the longest-context numbers below have **no published value** "
      "to compare with here. The published quantity we do compare is Table 1's ring-attention "
      "activation, "
      "6bch per layer, against our itemised buffers (Llama 2 7B, MHA, forward, s = 1M):\n\n";
  rep += cmp.str();
  rep +=
      "\nOurs counts bytes: the query block and both K/V double buffers in bf16 (2 bytes per "
      "element), the "
      "output accumulator and the softmax statistics in fp32. Table 1 counts six blocks of b x c x "
      "h; read as "
      "bf16 elements that is 12bch bytes, and the fp32 accumulator adds 2bch more, hence the "
      "constant ratio. "
      "Both scale as 1/N at a fixed context, which is the paper's point.\n\n";
  rep += "## Longest context per model, device and N\n\n";
  rep +=
      "Table 1 columns: one layer's activations (b = 1) within HBM minus the model state, 16 "
      "B/param sharded "
      "over N (ZeRO-3/FSDP; models/plan/plan.hpp PlanConstants). Planner columns: `ringsim plan "
      "--max-context` with "
      "full activation checkpointing and chunked loss, ring cp = N, or no context parallelism (cp "
      "1, the N "
      "devices only shard the model).\n\n";
  rep += tab.str();
  rep += "\n## Reading\n\n";
  rep +=
      "- The paper's claim holds in both views: with ring attention the longest context grows at "
      "least in "
      "proportion to the number of devices (faster where the sharded model state still fills much "
      "of HBM), while without sequence parallelism it is fixed by one device's memory "
      "(it grows only a little as the model state shards thinner). Growth of the planner's longest "
      "ring context "
      "from the smallest to the largest N: " +
      lin_detail + "\n";
  rep +=
      "- The Table 1 view is far more optimistic than the planner because Table 1 counts one "
      "layer's working "
      "set. Training with full checkpointing also keeps every layer's input (bf16, 2 x c x h bytes "
      "per "
      "layer, L layers per device) and the FSDP-gathered weights; for a 7B model (L = 32) the "
      "stored inputs "
      "alone are 64ch bytes, about 10x Table 1's 6bch. The planner's `limited by` column names the "
      "term that overflows first.\n";
  rep += fmt::format(
      "- TPU v4 has 32 GiB per chip, so at small N the model state alone leaves little room (16 "
      "B/param sharded "
      "over N: {} of {} for 13B at N = {}); once the state is spread thin, the longest context is "
      "set by the "
      "per-token terms and the A100 / TPU v4 ratio approaches the HBM ratio: {:.2f}x for 7B at N = "
      "{} "
      "(HBM {:.2f}x).\n",
      human_bytes(kState * static_cast<double>(total_params(find_model("--model", "llama2-13b"))) /
                  static_cast<double>(ns.front())),
      human_bytes(cat.device("tpu-v4").hbm_bytes), ns.front(),
      a100_7b_last / std::max(1.0, tpu_7b_last), ns.back(),
      cat.device("a100-80gb").hbm_bytes / cat.device("tpu-v4").hbm_bytes);
  rep +=
      "- With the default eager loss (fp32 logits of every token, 12 B per token per vocabulary "
      "entry) the "
      "loss can cap the context before attention does, which is why the sweep uses chunked loss. "
      "Eager loss, "
      "smallest N: " +
      eager_lines + "\n";
}

}  // namespace

Experiment memory_scaling_experiment() {
  return {"memory-scaling", "Per-device memory and longest trainable context vs devices",
          "The Ring Attention paper's near-infinite-context claim for Llama 2 7B and 13B shapes on "
          "A100 80GB and "
          "TPU v4: per-device memory and the longest context as the ring grows, next to vanilla, "
          "memory-efficient "
          "and blockwise attention (the paper's Table 1 formulas) and the planner's full training "
          "memory model.",
          run};
}

}  // namespace ringsim::exp
