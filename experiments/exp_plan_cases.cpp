// plan-cases: the planner's answers to the README's three questions
// (docs/plan.md): an hour of video as LWM encodes it (921,600 tokens) for a
// 7B model; Llama 3 8B at 1M tokens on 32 H100; Llama 3 70B at 128K on 64
// H100. Each is the planner's search, run in-process as `ringsim plan` runs
// it (with the re-check of the best config's attention in a SimGrid child
// process, `--recheck 1`, when the simulator is built), plus a sweep of the
// GPU count for each question.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "experiments/list.hpp"
#include "experiments/markdown.hpp"
#include "models/core/catalog.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/core/profile.hpp"
#include "models/plan/plan.hpp"
#include "proc/recheck.hpp"
#include "proc/resolve.hpp"

namespace ringsim::exp {

namespace {

struct Case {
  std::string name, model, context, gpu;
  std::int64_t gpus;
  std::string question;
};

// One planner answer, as `ringsim plan --model M --context C --gpus G --gpu D
// [--recheck 1]` gives it.
struct PlanRun {
  bool ok = false;
  std::string error;
  double hbm = 0;
  std::vector<PlanConfig> configs;
  proc::Recheck recheck;
};

PlanRun plan(const Case& c, std::int64_t gpus, bool recheck, Output& out) {
  ++out.points;
  PlanRun p;
  try {
    proc::HardwareSpec hs;
    hs.gpu = c.gpu;
    const auto hw = proc::resolve_hardware(hs, Catalog::embedded(), DType::BF16);
    const auto cm = proc::make_implementation(hs, Catalog::embedded(), hw, DType::BF16);
    PlanRequest r;
    r.shape = find_model("--model", c.model);
    r.context = parse_count("--context", c.context, 1, kMaxTokens);
    r.gpus = gpus;
    p.configs = search(r, hw, *cm);
    p.hbm = hw.hbm_bytes;
    if (recheck) p.recheck = proc::recheck_top(1, p.configs, r, hw, hs, *cm);
    p.ok = true;
  } catch (const InputError& e) {
    ++out.failed_points;
    p.error = e.what();
  }
  return p;
}

std::string layout_of(const PlanConfig& c) {
  return c.cp == 1 ? "none" : to_string(c.layout);
}

void run(const Context& ctx, Output& out) {
  const std::vector<Case> cases{{"LWM-7B, 1 h of video", "lwm-7b", "921600", "h100-sxm", 32,
                                 "An hour of video as LWM encodes it (256 tokens/frame at 1 "
                                 "frame/s = 921,600 tokens) for a 7B model"},
                                {"Llama 3 8B, 1M, 32 H100", "llama3-8b", "1M", "h100-sxm", 32,
                                 "Llama 3 8B at 1M tokens on 32 H100"},
                                {"Llama 3 70B, 128K, 64 H100", "llama3-70b", "128K", "h100-sxm", 64,
                                 "Llama 3 70B at 128K on 64 H100"}};
  const bool recheck = ctx.engine == "simgrid" && !ctx.quick;
  const std::vector<std::int64_t> sweep =
      ctx.quick ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{8, 16, 32, 64, 128, 256};
  std::vector<PlanRun> runs;
  for (const auto& c : cases) runs.push_back(plan(c, c.gpus, recheck, out));
  for (const auto& c : cases)
    for (auto g : sweep) runs.push_back(plan(c, g, false, out));

  out.data.set_columns({"case", "model", "context", "gpus", "kind", "rank", "config", "feasible",
                        "layout", "cp", "dp", "block", "memory_gb_per_device", "step_time_s",
                        "tokens_per_s_per_gpu", "mfu", "reason", "recheck_attention_rel_diff"});
  std::vector<Panel> panels;
  MdTable answers({"question", "GPUs", "best config", "memory/device", "step time", "tokens/s/GPU",
                   "MFU", "feasible configs", "SimGrid re-check of the best"});
  bool all_fit = true, mem_ok = true, recheck_ok = true;
  std::vector<double> ring_rate(cases.size(), 0.0), best_rate(cases.size(), 0.0);
  std::vector<std::string> best_labels;
  std::string fit_detail, recheck_detail;
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const auto& c = cases[ci];
    const auto& r = runs[ci];
    Panel p;
    p.title = fmt::format("{}: feasible configs on {} x {}", c.name, c.gpus, c.gpu);
    p.x.label = "config (memory per device)";
    p.y = make_axis("throughput per GPU (tokens/s)", false, 10);
    p.legend = "none";
    if (!r.ok) {
      all_fit = false;
      fit_detail += c.name + ": " + r.error + "; ";
      panels.push_back(p);
      continue;
    }
    const auto& cfgs = r.configs;
    const double hbm = r.hbm;
    int feasible = 0, rank = 0;
    Series s = scatter_series("tokens/s per GPU", palette_color(ci), "circle");
    Series mfu = scatter_series("MFU", palette_color(ci), "square");
    for (const auto& cfg : cfgs) {
      const bool ok = cfg.feasible;
      const double mem = cfg.evaluated ? std::round(cfg.memory.total) : 0.0;
      ++rank;
      auto row = out.data.add_row();
      row.set("case", c.name)
          .set("model", c.model)
          .set("context", c.context)
          .set("gpus", c.gpus)
          .set("kind", "question")
          .set("rank", rank)
          .set("config", cfg.label())
          .set("feasible", ok)
          .set("layout", layout_of(cfg))
          .set("cp", cfg.cp)
          .set("dp", cfg.dp)
          .set("block", cfg.block)
          .set("memory_gb_per_device", mem / 1e9);
      if (ok) {
        row.set("step_time_s", cfg.time.step_time_s)
            .set("tokens_per_s_per_gpu", cfg.tokens_per_s_per_gpu)
            .set("mfu", cfg.mfu);
        if (mem > hbm) mem_ok = false;
        if (feasible < 8) {
          std::string label = cfg.label();
          if (const auto paren = label.find(" ("); paren != std::string::npos)
            label.replace(paren, 1, "<br>");
          p.x.categories.push_back(label + "<br>" + human_gib(mem));
          s.points.push_back({static_cast<double>(feasible), cfg.tokens_per_s_per_gpu});
        }
        if (layout_of(cfg) == "ring" && ring_rate[ci] == 0)
          ring_rate[ci] = cfg.tokens_per_s_per_gpu;
        if (best_rate[ci] == 0) best_rate[ci] = cfg.tokens_per_s_per_gpu;
        ++feasible;
      } else {
        row.set("reason", cfg.reason());
      }
    }
    if (feasible == 0) {
      all_fit = false;
      fit_detail += c.name + ": no config fits; ";
    }
    double ymax = 0;
    for (const auto& pt : s.points) ymax = std::max(ymax, pt.second);
    p.y = make_axis("throughput per GPU (tokens/s)", false, 10, 0.0, std::max(1.0, ymax * 1.15));
    p.series.push_back(s);
    panels.push_back(p);

    // The best config and its SimGrid re-check.
    std::string rc = recheck ? "not run" : "off (quick mode or no simulator)";
    if (r.recheck.status == proc::Recheck::Status::Ok && !r.recheck.rows.empty()) {
      const auto& x = r.recheck.rows.front();
      const double sim = x.with_simgrid.time.attention_s, an = x.analytic_attention_s;
      const double d = an > 0 ? sim / an - 1 : 0.0;
      rc = fmt::format("attention {} vs analytic {} ({:+.2e})", human_seconds(sim),
                       human_seconds(an), d);
      // Within a node or across NICs without shared links the simulation
      // reproduces the closed form; 1% would flag a real disagreement.
      if (std::fabs(d) > 0.01) {
        recheck_ok = false;
        recheck_detail += c.name + " ";
      }
      out.data.add_row()
          .set("case", c.name)
          .set("model", c.model)
          .set("context", c.context)
          .set("gpus", c.gpus)
          .set("kind", "recheck")
          .set("config", x.config)
          .set("recheck_attention_rel_diff", d);
    }
    if (feasible > 0) {
      const auto& b = cfgs[0];
      best_labels.push_back(b.label());
      answers.add({c.question, std::to_string(c.gpus), b.label(),
                   fmt::format("{} of {}", human_gib(b.memory.total), human_gib(hbm)),
                   human_seconds(b.time.step_time_s), fmt::format("{:.0f}", b.tokens_per_s_per_gpu),
                   fmt::format("{:.1f}%", 100 * b.mfu), std::to_string(feasible), rc});
    } else {
      answers.add({c.question, std::to_string(c.gpus), "none fits", "-", "-", "-", "-", "0", rc});
    }
  }

  // GPU-count sweep: the best config per count.
  Panel ps;
  ps.title = "Best tokens/s per GPU vs GPU count (empty: nothing fits)";
  ps.x = unit_axis("H100 GPUs (count)", "", true, 2);
  ps.y = make_axis("throughput per GPU, best config (tokens/s)", false, 10);
  ps.legend = "bottom";
  MdTable sweep_tab({"question", "GPUs", "best config", "memory/device", "tokens/s/GPU", "MFU"});
  std::size_t k = cases.size();
  double ymax = 0;
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    Series s = line_series(cases[ci].name, palette_color(ci));
    for (auto g : sweep) {
      const auto& r = runs[k++];
      if (!r.ok) continue;
      const auto& cfgs = r.configs;
      const bool fits = !cfgs.empty() && cfgs[0].feasible;
      const PlanConfig none;
      const auto& b = cfgs.empty() ? none : cfgs[0];
      out.data.add_row()
          .set("case", cases[ci].name)
          .set("model", cases[ci].model)
          .set("context", cases[ci].context)
          .set("gpus", g)
          .set("kind", "gpu_sweep_best")
          .set("rank", 1)
          .set("config", fits ? b.label() : std::string("none fits"))
          .set("feasible", fits)
          .set("memory_gb_per_device", fits ? std::round(b.memory.total) / 1e9 : 0.0)
          .set("tokens_per_s_per_gpu", fits ? b.tokens_per_s_per_gpu : 0.0)
          .set("mfu", fits ? b.mfu : 0.0);
      if (fits) {
        s.points.push_back({static_cast<double>(g), b.tokens_per_s_per_gpu});
        ymax = std::max(ymax, b.tokens_per_s_per_gpu);
      }
      sweep_tab.add({cases[ci].name, std::to_string(g), fits ? b.label() : "none fits",
                     fits ? human_gib(b.memory.total) : "-",
                     fits ? fmt::format("{:.0f}", b.tokens_per_s_per_gpu) : "-",
                     fits ? fmt::format("{:.1f}%", 100 * b.mfu) : "-"});
    }
    ps.series.push_back(s);
  }
  ps.y = make_axis("throughput per GPU, best config (tokens/s)", false, 10, 0.0,
                   std::max(1.0, ymax * 1.15));
  if (!sweep.empty()) panels.push_back(ps);

  out.check("every question has a configuration that fits", all_fit,
            all_fit ? "on the GPU count asked" : fit_detail);
  out.check("feasible configs fit in HBM", mem_ok,
            "memory_bytes_per_device <= hbm_bytes for every feasible row");
  if (recheck)
    out.check("SimGrid re-check of the best config agrees within 1%", recheck_ok,
              recheck_ok ? "attention time, simulated vs analytic" : recheck_detail);

  out.plot.panels = panels;
  out.plot.columns = 2;
  out.plot.width = 1900;
  out.plot.height = panels.size() > 2 ? 1300 : 700;
  out.plot.title =
      "The planner's answers to the three questions (ringsim plan, H100 SXM 80 GB, DGX nodes)";
  out.plot.note =
      "Each config panel lists up to 8 feasible configs, best first (tokens/s per GPU, memory per "
      "device "
      "under the label). Full activation checkpointing, eager fp32 loss, AdamW with ZeRO-3/FSDP "
      "over cp x "
      "dp, causal mask; models/plan/plan.hpp and docs/plan.md give every term.";

  auto& rep = out.report;
  rep += "## Comparison with published values\n\n";
  rep +=
      "No published throughput for these three runs is reproduced here. What is known: LWM "
      "encodes a frame as 256 tokens, so an hour at 1 frame/s is 921,600 tokens (Large World "
      "Model, arXiv 2402.08268); PyTorch reports training Llama 3 8B at 1M tokens on 32 H100 "
      "with TorchTitan's context parallelism (\"Breaking Barriers: Training Long Context LLMs "
      "with 1M Sequence Length in PyTorch Using Context Parallel\", dev-discuss.pytorch.org, "
      "2025), which the planner agrees fits (the check below). docs/plan.md compares "
      "the planner "
      "with TorchTitan's published throughput at other settings.\n\n";
  rep += "## Answers\n\n";
  rep += answers.str();
  if (!sweep.empty()) {
    rep += "\n## The same questions on other GPU counts\n\n";
    rep += sweep_tab.str();
  }
  std::string ring_line;
  for (std::size_t ci = 0; ci < cases.size(); ++ci)
    if (ring_rate[ci] > 0)
      ring_line += fmt::format("{}{}: {:.2f}x", ring_line.empty() ? "" : "; ", cases[ci].name,
                               best_rate[ci] / ring_rate[ci]);
  rep += "\n## Reading\n\n";
  rep += "- The best configs are " + join(best_labels, ", ") +
         "; the best contiguous-ring config is slower by " +
         (ring_line.empty() ? std::string("(no ring config fits)") : ring_line) +
         ", because under the causal mask its busiest device does a full block at every step.\n";
  rep +=
      R"(- The memory that decides feasibility is rarely attention: the fp32 logits of the eager loss (12 B per token
  per vocabulary entry) and the checkpointed layer inputs dominate, which is why the context-parallel degree
  must rise with the context (docs/plan.md itemises each case with `--explain`).
- Tokens/s per GPU stays roughly flat across GPU counts once a config fits: the extra GPUs go to data
  parallelism or a larger ring whose transfers still hide, so the answer to "how many GPUs" is set by memory,
  not speed.
- Predicted times are what well-tuned kernels would reach (the catalog's FlashAttention-3 efficiency for every
  matmul); docs/plan.md shows they are optimistic against TorchTitan's measured H100 runs.
)";
}

}  // namespace

Experiment plan_cases_experiment() {
  return {"plan-cases", "The planner's answers to the README's three questions",
          "`ringsim plan` for LWM-7B at 921,600 tokens (an hour of video), Llama 3 8B at 1M tokens "
          "on 32 H100 and "
          "Llama 3 70B at 128K on 64 H100: the best configs, their memory, step time, tokens/s per "
          "GPU and MFU, and "
          "how the answer changes with the GPU count.",
          run};
}

}  // namespace ringsim::exp
