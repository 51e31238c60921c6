// plan-cases: the planner's answers to the README's three questions
// (docs/plan.md): an hour of video as LWM encodes it (921,600 tokens) for a
// 7B model; Llama 3 8B at 1M tokens on 32 H100; Llama 3 70B at 128K on 64
// H100. Each is `ringsim plan ... --json` in a child process (with
// --recheck 1, which re-runs the best config's attention in SimGrid, when the
// simulator is built), plus a sweep of the GPU count for each question.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "experiments/list.hpp"
#include "experiments/markdown.hpp"
#include "experiments/runner.hpp"
#include "models/parse.hpp"

namespace ringsim::exp {

namespace {

struct Case {
  std::string name, model, context, gpu;
  std::int64_t gpus;
  std::string question;
};

std::vector<std::string> plan_args(const Case& c, std::int64_t gpus, bool recheck) {
  std::vector<std::string> a{
      "plan",  "--model", c.model, "--context", c.context, "--gpus", std::to_string(gpus),
      "--gpu", c.gpu,     "--json"};
  if (recheck) a.insert(a.end(), {"--recheck", "1"});
  return a;
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
  std::vector<std::vector<std::string>> args;
  for (const auto& c : cases) args.push_back(plan_args(c, c.gpus, recheck));
  for (const auto& c : cases)
    for (auto g : sweep) args.push_back(plan_args(c, g, false));
  const auto runs = run_json(ctx, out, args, 600);

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
    p.y = make_axis("tokens/s per GPU", false, 10);
    p.legend = "none";
    if (!r.ok) {
      all_fit = false;
      fit_detail += c.name + ": " + r.error + "; ";
      panels.push_back(p);
      continue;
    }
    const auto& cfgs = r.j.at("configs");
    const double hbm = num(r.j, "hbm_bytes");
    int feasible = 0, rank = 0;
    Series s = scatter_series("tokens/s per GPU", palette_color(ci), "circle");
    Series mfu = scatter_series("MFU", palette_color(ci), "square");
    for (const auto& cfg : cfgs) {
      const bool ok = cfg.value("feasible", false);
      ++rank;
      auto row = out.data.add_row();
      row.set("case", c.name)
          .set("model", c.model)
          .set("context", c.context)
          .set("gpus", c.gpus)
          .set("kind", "question")
          .set("rank", rank)
          .set("config", cfg.value("label", ""))
          .set("feasible", ok)
          .set("layout", cfg.value("layout", ""))
          .set("cp", static_cast<std::int64_t>(num(cfg, "cp")))
          .set("dp", static_cast<std::int64_t>(num(cfg, "dp")))
          .set("block", static_cast<std::int64_t>(num(cfg, "block")))
          .set("memory_gb_per_device", num(cfg, "memory_bytes_per_device") / 1e9);
      if (ok) {
        row.set("step_time_s", num(cfg, "step_time_s"))
            .set("tokens_per_s_per_gpu", num(cfg, "tokens_per_s_per_gpu"))
            .set("mfu", num(cfg, "mfu"));
        if (num(cfg, "memory_bytes_per_device") > hbm) mem_ok = false;
        if (feasible < 8) {
          std::string label = cfg.value("label", "");
          if (const auto paren = label.find(" ("); paren != std::string::npos)
            label.replace(paren, 1, "<br>");
          p.x.categories.push_back(
              label + "<br>" + fmt::format("{:.1f} GB", num(cfg, "memory_bytes_per_device") / 1e9));
          s.points.push_back({static_cast<double>(feasible), num(cfg, "tokens_per_s_per_gpu")});
        }
        if (cfg.value("layout", "") == "ring" && ring_rate[ci] == 0)
          ring_rate[ci] = num(cfg, "tokens_per_s_per_gpu");
        if (best_rate[ci] == 0) best_rate[ci] = num(cfg, "tokens_per_s_per_gpu");
        ++feasible;
      } else if (cfg.contains("reason") && cfg.at("reason").is_string()) {
        row.set("reason", cfg.at("reason").get<std::string>());
      }
    }
    if (feasible == 0) {
      all_fit = false;
      fit_detail += c.name + ": no config fits; ";
    }
    double ymax = 0;
    for (const auto& pt : s.points) ymax = std::max(ymax, pt.second);
    p.y = make_axis("tokens/s per GPU", false, 10, 0.0, std::max(1.0, ymax * 1.15));
    p.series.push_back(s);
    panels.push_back(p);

    // The best config and its SimGrid re-check.
    std::string rc = recheck ? "not run" : "off (quick mode or no simulator)";
    if (r.j.contains("recheck") && r.j.at("recheck").value("status", "") == "ok" &&
        !r.j.at("recheck").at("configs").empty()) {
      const auto& x = r.j.at("recheck").at("configs")[0];
      const double d = num(x, "attention_rel_diff");
      rc = fmt::format("attention {} vs analytic {} ({:+.2e})",
                       human_seconds(num(x, "attention_s_simgrid")),
                       human_seconds(num(x, "attention_s_analytic")), d);
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
          .set("config", x.value("config", ""))
          .set("recheck_attention_rel_diff", d);
    }
    if (feasible > 0) {
      const auto& b = cfgs[0];
      best_labels.push_back(b.value("label", ""));
      answers.add(
          {c.question, std::to_string(c.gpus), b.value("label", ""),
           fmt::format("{:.1f} GB of {:.0f}", num(b, "memory_bytes_per_device") / 1e9, hbm / 1e9),
           human_seconds(num(b, "step_time_s")),
           fmt::format("{:.0f}", num(b, "tokens_per_s_per_gpu")),
           fmt::format("{:.1f}%", 100 * num(b, "mfu")), std::to_string(feasible), rc});
    } else {
      answers.add({c.question, std::to_string(c.gpus), "none fits", "-", "-", "-", "-", "0", rc});
    }
  }

  // GPU-count sweep: the best config per count.
  Panel ps;
  ps.title = "Best tokens/s per GPU vs GPU count (empty: nothing fits)";
  ps.x = make_axis("H100 GPUs", true, 2);
  ps.y = make_axis("tokens/s per GPU (best config)", false, 10);
  ps.legend = "bottom";
  MdTable sweep_tab({"question", "GPUs", "best config", "memory/device", "tokens/s/GPU", "MFU"});
  std::size_t k = cases.size();
  double ymax = 0;
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    Series s = line_series(cases[ci].name, palette_color(ci));
    for (auto g : sweep) {
      const auto& r = runs[k++];
      if (!r.ok) continue;
      const auto& cfgs = r.j.at("configs");
      const bool fits = !cfgs.empty() && cfgs[0].value("feasible", false);
      const auto& b = cfgs.empty() ? nlohmann::json::object() : cfgs[0];
      out.data.add_row()
          .set("case", cases[ci].name)
          .set("model", cases[ci].model)
          .set("context", cases[ci].context)
          .set("gpus", g)
          .set("kind", "gpu_sweep_best")
          .set("rank", 1)
          .set("config", fits ? b.value("label", "") : std::string("none fits"))
          .set("feasible", fits)
          .set("memory_gb_per_device", fits ? num(b, "memory_bytes_per_device") / 1e9 : 0.0)
          .set("tokens_per_s_per_gpu", fits ? num(b, "tokens_per_s_per_gpu") : 0.0)
          .set("mfu", fits ? num(b, "mfu") : 0.0);
      if (fits) {
        s.points.push_back({static_cast<double>(g), num(b, "tokens_per_s_per_gpu")});
        ymax = std::max(ymax, num(b, "tokens_per_s_per_gpu"));
      }
      sweep_tab.add({cases[ci].name, std::to_string(g), fits ? b.value("label", "") : "none fits",
                     fits ? fmt::format("{:.1f} GB", num(b, "memory_bytes_per_device") / 1e9) : "-",
                     fits ? fmt::format("{:.0f}", num(b, "tokens_per_s_per_gpu")) : "-",
                     fits ? fmt::format("{:.1f}%", 100 * num(b, "mfu")) : "-"});
    }
    ps.series.push_back(s);
  }
  ps.y = make_axis("tokens/s per GPU (best config)", false, 10, 0.0, std::max(1.0, ymax * 1.15));
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
      "dp, causal mask; models/plan.hpp and docs/plan.md give every term.";

  auto& rep = out.report;
  rep += "## Comparison with published values\n\n";
  rep +=
      "No published throughput for these three runs is in our reference set. What is known: LWM "
      "encodes a frame "
      "as 256 tokens, so an hour at 1 frame/s is 921,600 tokens (LWM, arXiv 2402.08268, via "
      "shared/reference/published-numbers.md); issue 7 states that PyTorch's TorchTitan trained "
      "Llama 3 8B at 1M "
      "tokens on 32 H100, which the planner agrees fits (the check below). docs/plan.md compares "
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
