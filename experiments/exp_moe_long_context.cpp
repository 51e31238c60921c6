// moe-long-context: how the best expert x context x tensor parallel split of
// a mixture-of-experts model moves as the context grows. Mixtral 8x7B on 64
// H100 SXM (8 DGX nodes) under Megatron-Core, 32K to 1M tokens per sequence
// at the planner's default batch: at each context, the planner's best config
// with EP searched, and its best with EP fixed at 1, 2, 4 and 8. Every point
// is `ringsim plan`'s search (models/plan/plan.hpp, moe.hpp), evaluated in
// this process; declared as data (grid_experiment.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "experiments/device_env.hpp"
#include "experiments/grid_experiment.hpp"
#include "experiments/list.hpp"
#include "experiments/markdown.hpp"
#include "models/core/catalog.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/plan/calibration.hpp"
#include "models/plan/error_band.hpp"
#include "models/plan/framework.hpp"
#include "models/plan/plan.hpp"
#include "proc/resolve.hpp"

namespace ringsim::exp {

namespace {

using nlohmann::json;

constexpr const char* kModel = "mixtral-8x7b";
constexpr const char* kGpu = "h100-sxm";
constexpr const char* kGpus = "64";
constexpr const char* kBest = "best (EP searched)";

const DeviceEnv& env() {
  return device_env(kGpu);
}

// The best config with EP searched, then with each EP degree the model's 8
// experts allow.
std::vector<Config> configs() {
  std::vector<Config> v{{kBest, {}, {{"ep_fixed", "auto"}, {"panel", "best"}}}};
  for (const char* ep : {"1", "2", "4", "8"})
    v.push_back({fmt::format("EP {}", ep), {}, {{"ep_fixed", ep}, {"panel", "ep"}}});
  return v;
}

// `ringsim plan --model mixtral-8x7b --context C --gpus 64 --framework
// megatron [--ep E]`, as the command sets the request.
PlanRequest request(const Config& c, const std::string& context) {
  PlanRequest r;
  r.kernel = env().im->kernel();
  r.framework = Framework::Megatron;
  r.shape = find_model("--model", kModel);
  r.gpus = parse_count("--gpus", kGpus, 1, 1 << 20);
  r.context = parse_count("--context", context, 1, kMaxTokens);
  if (const auto& ep = c.facts.at("ep_fixed"); ep != "auto")
    r.ep_degrees = {parse_count("--ep", ep, 1, r.shape.experts)};
  r.tp_degrees = auto_tp_degrees(r, env().hw);
  r.pp_degrees.clear();  // --pp auto
  set_default_batch(r);
  set_calibration(r, Catalog::embedded().device(kGpu).family, false);
  return r;
}

// The best feasible config's split, rate, memory and MoE terms.
json evaluate(const Config& c, const std::map<std::string, std::string>& axes) {
  const auto r = request(c, axes.at("--context"));
  const auto configs = search(r, env().hw, *env().im);
  const auto best =
      std::find_if(configs.begin(), configs.end(), [](const PlanConfig& x) { return x.feasible; });
  json j{{"feasible", 0}, {"best_config", "none fits"}, {"hbm_bytes", env().hw.hbm_bytes}};
  if (best == configs.end()) return j;
  const auto& t = best->time;
  const double fp = t.step_time_first_principles_s;
  j.update({{"feasible", 1},
            {"best_config", best->label()},
            {"ep", best->ep},
            {"cp", best->cp},
            {"tp", best->tp},
            {"pp", best->pp},
            {"dp", best->dp},
            {"memory_gb_per_device", best->memory.total / 1e9},
            {"memory_bytes", best->memory.total},
            {"step_time_s", t.step_time_s},
            {"tokens_per_s_per_gpu", best->tokens_per_s_per_gpu},
            {"mfu", best->mfu},
            {"alltoall_pct", fp > 0 ? 100 * t.ep_alltoall_s / fp : 0.0},
            {"attention_pct", fp > 0 ? 100 * (t.attention_s + t.attention_recompute_s) / fp : 0.0},
            {"experts_pct", fp > 0 ? 100 * t.expert_compute_s / fp : 0.0},
            {"moe_imbalance", t.moe_imbalance}});
  return j;
}

const GridPoint* point(const std::vector<GridPoint>& pts, const std::string& config,
                       double context) {
  for (const auto& p : pts)
    if (p.config->name == config && p.axis("--context") == context && p.ok) return &p;
  return nullptr;
}

std::vector<double> contexts(const std::vector<GridPoint>& pts) {
  std::vector<double> v;
  for (const auto& p : pts)
    if (std::find(v.begin(), v.end(), p.axis("--context")) == v.end())
      v.push_back(p.axis("--context"));
  std::sort(v.begin(), v.end());
  return v;
}

// The best with EP searched is the best of the fixed degrees (the search
// covers each), and every context has a config that fits.
void checks(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  bool fits = true, best_is_max = true;
  std::string detail;
  for (double c : contexts(pts)) {
    const auto* b = point(pts, kBest, c);
    if (!b || b->value("feasible") != 1) {
      fits = false;
      detail += fmt::format("{} tokens: nothing fits; ", c);
      continue;
    }
    for (const char* ep : {"EP 1", "EP 2", "EP 4", "EP 8"})
      if (const auto* e = point(pts, ep, c);
          e && e->value("feasible") == 1 &&
          e->value("tokens_per_s_per_gpu") > b->value("tokens_per_s_per_gpu") * (1 + 1e-9)) {
        best_is_max = false;
        detail += fmt::format("{} at {}: {:.0f} over the best {:.0f}; ", ep, c,
                              e->value("tokens_per_s_per_gpu"), b->value("tokens_per_s_per_gpu"));
      }
  }
  out.check("every context has a config that fits on 64 H100", fits, fits ? "32K .. 1M" : detail);
  out.check("the searched best is the best of the fixed EP degrees", best_is_max,
            best_is_max ? "at every context" : detail);
}

// A fraction (MFU, a spread) or, with `percent`, a value already in percent.
std::string pct(double x, bool percent = false) {
  return std::isnan(x) ? "-" : fmt::format("{:.1f}%", percent ? x : 100 * x);
}

// No published Mixtral run at these contexts: say what the planner's MoE
// numbers are scored on instead.
void comparison(const std::vector<GridPoint>&, const Context&, Output& out) {
  out.report += "## Comparison with published values\n\n";
  out.report +=
      "No published throughput of Mixtral 8x7B at 32K to 1M tokens is known to this project, so "
      "nothing here is compared point by point. The planner's MoE terms (dispatch and combine "
      "all-to-alls, grouped expert GEMMs, routing imbalance, experts' memory) are scored in "
      "`ringsim validate` on published 4K-token MoE runs: Megatron Bridge's performance tables "
      "(Qwen3-30B-A3B, Qwen3-235B-A22B, DeepSeek-V3 on H100 and B200) and the DeepSeek-V2 and V3 "
      "reports (docs/validation.md, 'Mixture of experts'). Those cases miss by more than the "
      "dense whole-step cases do, and each miss is stated there; read the EP ranking below "
      "within them.\n\n";
}

void best_table(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  MdTable t({"context", "best config", "EP", "CP", "TP", "PP", "DP", "tokens/s/GPU", "MFU",
             "memory/device", "all-to-all", "attention", "experts", "imbalance"});
  for (double c : contexts(pts)) {
    const auto* p = point(pts, kBest, c);
    if (!p || p->value("feasible") != 1) continue;
    auto n = [&](const char* k) { return fmt::format("{:.0f}", p->value(k)); };
    t.add({human_tokens(c), p->text("best_config"), n("ep"), n("cp"), n("tp"), n("pp"), n("dp"),
           n("tokens_per_s_per_gpu"), pct(p->value("mfu")), human_gib(p->value("memory_bytes")),
           pct(p->value("alltoall_pct"), true), pct(p->value("attention_pct"), true),
           pct(p->value("experts_pct"), true), fmt::format("{:.2f}", p->value("moe_imbalance"))});
  }
  out.report += "## The best split at each context\n\n" + t.str();
  out.report +=
      "\nShares are of the first-principles step (before the megatron/hopper factor): the "
      "dispatch and combine all-to-alls, attention (forward, backward and recompute) and the "
      "expert GEMMs; imbalance is the busiest EP rank's routed load over the mean.\n";
}

void per_ep_table(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  MdTable t({"context", "EP 1", "EP 2", "EP 4", "EP 8"});
  for (double c : contexts(pts)) {
    std::vector<std::string> row{human_tokens(c)};
    for (const char* ep : {"EP 1", "EP 2", "EP 4", "EP 8"}) {
      const auto* p = point(pts, ep, c);
      row.push_back(
          p && p->value("feasible") == 1
              ? fmt::format("{:.0f} ({})", p->value("tokens_per_s_per_gpu"), p->text("best_config"))
              : "none fits");
    }
    t.add(row);
  }
  out.report += "\n## The best config at each EP degree (tokens/s per GPU)\n\n" + t.str();
}

// The spread of the fixed-EP bests at one context: the fastest over the
// slowest that fit, minus one.
double ep_spread(const std::vector<GridPoint>& pts, double c) {
  double lo = 0, hi = 0;
  for (const char* ep : {"EP 1", "EP 2", "EP 4", "EP 8"})
    if (const auto* p = point(pts, ep, c); p && p->value("feasible") == 1) {
      const double v = p->value("tokens_per_s_per_gpu");
      lo = lo == 0 ? v : std::min(lo, v);
      hi = std::max(hi, v);
    }
  return lo > 0 ? hi / lo - 1 : 0.0;
}

// What the rows say, computed from them: the split at each context, how the
// shares move from the shortest context to the longest, and whether the EP
// degrees are told apart by more than the error band.
void reading(const std::vector<GridPoint>& pts, const Context&, Output& out) {
  std::string moves, spreads;
  const GridPoint *first = nullptr, *last = nullptr;
  double a2a = 0;
  std::vector<std::string> tied, bands;
  for (double c : contexts(pts)) {
    const auto* p = point(pts, kBest, c);
    if (!p || p->value("feasible") != 1) continue;
    if (!first) first = p;
    last = p;
    a2a = std::max(a2a, p->value("alltoall_pct"));
    const double spread = ep_spread(pts, c);
    spreads += fmt::format("{}{} at {}", spreads.empty() ? "" : ", ", pct(spread), human_tokens(c));
    // The band `ringsim plan` prints at this context (short or long regime).
    const auto band = find_band(band_class("megatron", Catalog::embedded().device(kGpu).family,
                                           training_regime(static_cast<std::int64_t>(c))));
    if (band.validated() && spread <= std::max(std::fabs(band.low), std::fabs(band.high)))
      tied.push_back(human_tokens(c));
    const auto bt = band.validated() ? band.text() : "unvalidated (" + band.klass + ")";
    if (std::find(bands.begin(), bands.end(), bt) == bands.end()) bands.push_back(bt);
    moves += fmt::format("{}{}: EP {:.0f} x CP {:.0f} x TP {:.0f} x PP {:.0f}",
                         moves.empty() ? "" : "; ", human_tokens(c), p->value("ep"), p->value("cp"),
                         p->value("tp"), p->value("pp"));
  }
  out.report += "\n## Reading\n\n";
  if (!first) {
    out.report += "- Nothing fits at any context.\n";
    return;
  }
  auto ctx = [](const GridPoint* p) { return human_tokens(p->axis("--context")); };
  out.report += "- The best split by context: " + moves + ".\n";
  out.report += fmt::format(
      "- From {} to {}, attention's share of the best config's step goes from {} to {} and the "
      "expert GEMMs' from {} to {}: attention's work per token grows with the context, the "
      "experts' does not. The all-to-all is at most {} of the best step: its bytes per token are "
      "set by the hidden size and top-k alone.\n",
      ctx(first), ctx(last), pct(first->value("attention_pct"), true),
      pct(last->value("attention_pct"), true), pct(first->value("experts_pct"), true),
      pct(last->value("experts_pct"), true), pct(a2a, true));
  out.report += fmt::format(
      "- The fastest fixed EP degree over the slowest: {}. The planner's error bands at these "
      "contexts are {}, so the EP degree is a tie at {}: what the context decides there is the "
      "CP x TP split that fits the activations ({} per device at {}).\n",
      spreads, join(bands, " and "), tied.empty() ? std::string("no context") : join(tied, ", "),
      human_gib(last->value("memory_bytes")), ctx(last));
}

GridExperiment declaration() {
  GridExperiment g;
  g.name = "moe-long-context";
  g.title = "Mixture of experts at long context: the best EP x CP x TP split as the context grows";
  g.summary =
      "`ringsim plan` for Mixtral 8x7B on 64 H100 (Megatron-Core) at 32K to 1M tokens: the best "
      "config with EP searched and with EP fixed at 1, 2, 4 and 8, its rate, memory, and the "
      "shares of the all-to-all, attention and the experts.";
  g.caption =
      "Each point is the planner's search (`ringsim plan --model mixtral-8x7b --context C --gpus "
      "64 "
      "--framework megatron [--ep E]`, models/plan/plan.hpp and moe.hpp) evaluated in process: TP, "
      "PP, CP, layout, micro-batch, HSDP and schedule searched as the command searches them, at "
      "the default 4M-token batch, with the megatron/hopper calibration factor on the step.";
  g.configs = configs();
  g.axes = {{"--context", "32768..1048576:x2", "32768,1048576"}};
  g.measures = {{"best_config", "best_config", ""},
                {"feasible", "feasible", ""},
                {"ep", "ep", ""},
                {"cp", "cp", ""},
                {"tp", "tp", ""},
                {"pp", "pp", ""},
                {"dp", "dp", ""},
                {"memory_gb_per_device", "memory_gb_per_device", ""},
                {"step_time_s", "step_time_s", ""},
                {"tokens_per_s_per_gpu", "tokens_per_s_per_gpu", ""},
                {"mfu", "mfu", ""},
                {"alltoall_pct", "alltoall_pct", ""},
                {"attention_pct", "attention_pct", ""},
                {"experts_pct", "experts_pct", ""},
                {"moe_imbalance", "moe_imbalance", ""}};
  const auto ctx = unit_axis("context (tokens per sequence)", "tokens", true, 2);
  PanelDecl split{"The best split (EP searched)",
                  "--context",
                  "",
                  "best",
                  ctx,
                  make_axis("parallel degree (ranks)", true, 2)};
  split.series = {{"ep", "EP"}, {"cp", "CP"}, {"tp", "TP"}, {"pp", "PP"}};
  PanelDecl shares{"Shares of the best config's step",
                   "--context",
                   "",
                   "best",
                   ctx,
                   unit_axis("share of the first-principles step (%)", "%", false)};
  shares.series = {{"alltoall_pct", "all-to-all"},
                   {"attention_pct", "attention"},
                   {"experts_pct", "expert GEMMs"}};
  g.panels = {
      {"Tokens/s per GPU, best config at each EP degree", "--context", "tokens_per_s_per_gpu", "ep",
       ctx, make_axis("throughput per GPU (tokens/s)", true, 10)},
      split,
      shares};
  g.plot_title = "Mixtral 8x7B on 64 H100 (Megatron-Core): the best split as the context grows";
  g.plot_note =
      "ringsim plan's search at each context; the default 4M-token batch; megatron/hopper "
      "factor on the step (docs/validation.md).";
  g.plot_columns = 3;
  g.plot_width = 1900;
  g.plot_height = 650;
  g.evaluate = evaluate;
  g.analyses = {checks, comparison, best_table, per_ep_table, reading};
  return g;
}

}  // namespace

Experiment moe_long_context_experiment() {
  return declare(declaration());
}

}  // namespace ringsim::exp
