// Runs one experiment and writes its files; the report's frame (what was run,
// checks, plot, files) is the same for every experiment.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "experiments/experiment.hpp"
#include "experiments/markdown.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/cancel.hpp"
#include "models/core/errors.hpp"
#include "proc/child.hpp"

namespace ringsim::exp {

namespace fs = std::filesystem;

void Output::check(const std::string& name, bool passed, const std::string& detail) {
  checks.push_back({name, passed, detail});
}

bool RunRecord::all_passed() const {
  for (const auto& c : checks)
    if (!c.passed) return false;
  return failed_points == 0;
}

namespace {
// Like every ringsim output (models/core/atomic_file.hpp): whole or not at all.
void write_file(const fs::path& p, const std::string& text) {
  AtomicFile f(p.string(), "--out");
  f.write(text);
  f.commit();
}

std::string frame(const Experiment& e, const Context& ctx, const Output& out,
                  const RunRecord& rec) {
  std::string r = fmt::format("# {}: {}\n\n{}\n\n", e.name, e.title, e.summary);
  r += "## What was run\n\n";
  r += fmt::format("- Command: `{}`\n", ctx.command);
  r += fmt::format("- Mode: {}\n", ctx.quick ? "quick (reduced sweep, for the tests)" : "full");
  r += out.evaluated_only
           ? std::string(
                 "- Engine: none simulated; every point is a closed form evaluated in this "
                 "process, so --engine does not apply\n")
           : fmt::format("- Engine for simulated points: {}\n", ctx.engine_note);
  // No wall time here: the same inputs give the same report, byte for byte
  // (the time it took goes to the log line, "wrote DIR (N s)").
  r += fmt::format("- Points: {} evaluated, {} failed\n", out.points, out.failed_points);
  if (!out.child_examples.empty()) {
    r += "- Each point is its own child process, for example:\n";
    for (const auto& c : out.child_examples) r += fmt::format("  - `{}`\n", c);
  }
  r += "- Model parameters come from the hardware catalog (models/data/catalog.json) and the model "
       "presets "
       "(models/data/models.json); nothing is fitted per experiment.\n\n";
  r += out.report;
  if (r.back() != '\n') r += "\n";
  r += "\n## Checks\n\n";
  MdTable t({"check", "result", "detail"});
  for (const auto& c : out.checks) t.add({c.name, c.passed ? "pass" : "**FAIL**", c.detail});
  if (out.failed_points)
    t.add({"every point ran", "**FAIL**",
           fmt::format("{} of {} points failed (see stderr)", out.failed_points, out.points)});
  r += t.str();
  r += "\n## Plot\n\n";
  if (rec.plot_ok)
    r += fmt::format("![{}](plot.png)\n", e.name);
  else
    r += fmt::format(
        "Plot skipped: {}. The data is in data.csv and the plot spec in plot.json "
        "(`ringsim-plot plot.json plot.png` renders it where Qt 6 Charts is available).\n",
        rec.plot_status);
  r += "\n## Files\n\n- `data.csv`: one row per point (columns: " +
       [&] {
         std::string cols;
         for (const auto& c : out.data.columns()) cols += (cols.empty() ? "" : ", ") + c;
         return cols;
       }() +
       ")\n- `plot.json`: the plot spec that `ringsim-plot` renders into `plot.png` and `plot.svg` "
       "(the same plot as vector graphics)\n" +
       (out.timing.columns().empty()
            ? std::string()
            : "- `timing.csv`: the wall time of each point on the machine that ran it (it differs "
              "from run to run, so it is kept out of data.csv and this report)\n");
  return r;
}
}  // namespace

RunRecord run_experiment(const Experiment& e, const Context& ctx) {
  const auto start = std::chrono::steady_clock::now();
  RunRecord rec;
  rec.name = e.name;
  const fs::path dir = fs::path(ctx.out_dir) / e.name;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("--out: cannot create {}: {}", dir.string(), ec.message()));
  rec.dir = dir.string();
  if (ctx.log)
    *ctx.log << fmt::format("ringsim experiment: {} ({})\n", e.name, ctx.quick ? "quick" : "full");

  Output out;
  e.run(ctx, out);
  // Stopped by a signal part-way (its points cut short): write nothing of it.
  throw_if_cancelled();
  // The plot is rendered first, in a folder of its own beside the files it
  // replaces: a signal while ringsim-plot runs (it reaches the child too)
  // leaves the previous data, plot and report all as they were.
  const fs::path stage = dir / ".plot-stage";
  struct Stage {
    fs::path d;
    ~Stage() {
      std::error_code e;
      fs::remove_all(d, e);
    }
  } staged{stage};
  fs::remove_all(stage, ec);
  fs::create_directories(stage, ec);
  if (ec)
    throw InputError(fmt::format("--out: cannot create {}: {}", stage.string(), ec.message()));
  write_file(stage / "plot.json", to_json(out.plot).dump(1) + "\n");
  rec.plot_status = out.plot.empty() ? "this experiment has no plot"
                                     : render_plot(ctx.plotter, (stage / "plot.json").string(),
                                                   (stage / "plot.png").string());
  throw_if_cancelled();
  write_file(dir / "data.csv", out.data.csv());
  // Last run's timings must not pass for this one's.
  fs::remove(dir / "timing.csv", ec);
  if (!out.timing.columns().empty()) write_file(dir / "timing.csv", out.timing.csv());
  // A stale plot from an earlier run must not pass for this one.
  for (const char* name : {"plot.json", "plot.png", "plot.svg"}) {
    fs::remove(dir / name, ec);
    if (fs::exists(stage / name)) fs::rename(stage / name, dir / name);
  }
  rec.plot_ok = rec.plot_status.empty() && fs::exists(dir / "plot.png");
  if (rec.plot_ok) rec.plot_status = "ok";
  if (!rec.plot_ok && ctx.log) *ctx.log << "  plot skipped: " << rec.plot_status << "\n";
  rec.points = out.points;
  rec.failed_points = out.failed_points;
  rec.checks = out.checks;
  rec.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_file(dir / "report.md", frame(e, ctx, out, rec));
  if (ctx.log) {
    for (const auto& c : out.checks)
      if (!c.passed) *ctx.log << "  check failed: " << c.name << ": " << c.detail << "\n";
    *ctx.log << fmt::format("  wrote {} ({:.1f} s)\n", rec.dir, rec.wall_s);
  }
  return rec;
}

}  // namespace ringsim::exp
