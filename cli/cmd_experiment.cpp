// `ringsim experiment`: reproduce published results and write data, plot and
// report per experiment (experiments/README.md).
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/stop_scope.hpp"
#include "experiments/experiment.hpp"
#include "experiments/runner.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"
#include "models/core/flag_types.hpp"
#include "models/core/parse.hpp"
#include "models/core/schema.hpp"
#include "proc/child.hpp"
#include "sim/progress.hpp"

namespace ringsim::cli {
namespace {

struct ExperimentFlags {
  std::string name, out, engine = "auto", jobs = "2";
  bool list = false, quick = false, json = false;
};

nlohmann::json list_json() {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& e : exp::experiments())
    j.push_back({{"name", e.name}, {"title", e.title}, {"summary", e.summary}});
  return j;
}

int run(const ExperimentFlags& f) {
  // Judged before --list too: a bad value is refused, never ignored.
  parse_choice("--engine", f.engine, {"auto", "simgrid", "analytic"});
  parse_count("--jobs", f.jobs, 1, 64);
  if (f.list) {
    if (!f.out.empty()) throw InputError("--out: --list writes nothing; leave --out out");
    if (f.json) {
      std::cout << nlohmann::json{{"schema_version", kJsonSchemaVersion},
                                  {"experiments", list_json()}}
                       .dump(2)
                << "\n";
    } else {
      for (const auto& e : exp::experiments())
        std::cout << fmt::format("  {:<16} {}\n", e.name, e.title);
    }
    return 0;
  }
  std::vector<std::string> names;
  for (const auto& e : exp::experiments()) names.push_back(e.name);
  if (f.name.empty())
    throw InputError("experiment: give a NAME (" + join(names, ", ") + ", all) or --list");
  std::vector<const exp::Experiment*> todo;
  if (f.name == "all") {
    for (const auto& e : exp::experiments()) todo.push_back(&e);
  } else if (const auto* e = exp::find_experiment(f.name)) {
    todo.push_back(e);
  } else {
    throw InputError("experiment: unknown NAME '" + f.name + "'; choose " + join(names, ", ") +
                     " or all");
  }
  if (f.out.empty()) throw InputError("--out: give the directory to write DIR/NAME/ into");
  check_folder_parent("--out", f.out);
  parse_choice("--engine", f.engine, {"auto", "simgrid", "analytic"});

  exp::Context ctx;
  ctx.quick = f.quick;
  ctx.out_dir = f.out;
  ctx.jobs = static_cast<int>(parse_count("--jobs", f.jobs, 1, 64));
  std::string why;
  ctx.ringsim = proc::ringsim_exe(&why);
  if (ctx.ringsim.empty()) throw InputError("experiment: cannot find the ringsim program: " + why);
  ctx.plotter = proc::sibling_exe("ringsim-plot");
  std::tie(ctx.engine, ctx.engine_note) = exp::choose_engine(ctx.ringsim, f.engine);
  ctx.log = &std::cerr;

  nlohmann::json results = nlohmann::json::array();
  bool all_ok = true;
  // `all` takes many minutes: after each experiment, one line with the share
  // done and the ETA, on a terminal only (the experiments' own log lines go to
  // stderr too, so a line each rather than a redrawn bar).
  const bool show_progress = todo.size() > 1 && sim::progress_wanted(false);
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t finished = 0;
  // Ctrl-C ends the experiment running at its next point (its outputs are
  // not written) and the rest: exit 130, the finished ones' files kept.
  const StopScope stop;
  for (const auto* e : todo) {
    ctx.command =
        fmt::format("ringsim experiment {}{} --out {}{}", e->name, f.quick ? " --quick" : "",
                    proc::shell_line({f.out}), f.engine == "auto" ? "" : " --engine " + f.engine);
    const auto rec = exp::run_experiment(*e, ctx);
    all_ok = all_ok && rec.all_passed();
    ++finished;
    if (show_progress)
      std::cerr << sim::progress_text(
                       fmt::format("ringsim experiment all: {}/{} done", finished, todo.size()),
                       finished, todo.size(),
                       std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count())
                << "\n";
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& c : rec.checks)
      checks.push_back({{"name", c.name}, {"passed", c.passed}, {"detail", c.detail}});
    results.push_back({{"name", rec.name},
                       {"dir", rec.dir},
                       {"plot", rec.plot_status},
                       {"points", rec.points},
                       {"failed_points", rec.failed_points},
                       {"checks", checks},
                       {"wall_s", rec.wall_s}});
    if (!f.json)
      std::cout << fmt::format("{:<16} {} ({} points, plot: {}, checks: {})\n", rec.name, rec.dir,
                               rec.points, rec.plot_ok ? "ok" : "skipped",
                               rec.all_passed() ? "pass" : "FAIL");
  }
  if (f.json)
    std::cout << nlohmann::json{{"engine", ctx.engine},
                                {"quick", f.quick},
                                {"experiments", results},
                                {"schema_version", kJsonSchemaVersion}}
                     .dump(2)
              << "\n";
  return all_ok ? 0 : 1;
}

}  // namespace

Command experiment_command() {
  return {"experiment", [](CLI::App& app, int* code) {
            auto f = std::make_shared<ExperimentFlags>();
            auto* sub = app.add_subcommand(
                "experiment",
                "Reproduce published results: data.csv, plot.png and report.md per experiment");
            sub->add_option("name", f->name, "Experiment to run (see --list), or all")
                ->type_name(flag_type::kName);
            sub->add_flag("--list", f->list, "List the experiments");
            sub->add_flag("--quick", f->quick, "Reduced sweep (under a minute; used by the tests)");
            sub->add_option("--out", f->out,
                            "Directory to write NAME/{data.csv,plot.png,report.md} into")
                ->type_name(flag_type::kDir);
            sub->add_option("--engine", f->engine,
                            "auto|simgrid|analytic for simulated points (auto: simgrid if built)")
                ->capture_default_str()
                ->type_name(flag_type::kName);
            sub->add_option("--jobs", f->jobs, "Child runs in flight at once (1 .. 64)")
                ->capture_default_str()
                ->type_name(flag_type::kInt);
            sub->add_flag(
                "--json", f->json,
                "Print one JSON object (files, checks) instead of one line per experiment");
            sub->callback([f, code] { *code = run(*f); });
            return sub;
          }};
}

}  // namespace ringsim::cli
