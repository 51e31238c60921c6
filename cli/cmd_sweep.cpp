// `ringsim sweep`: a grid of `ringsim run` configurations. Any run flag given
// a list (8,64,512) or a range (2K..32K:x2) becomes an axis, in the order the
// flags were written (or axes come from --grid FILE); every point runs as its
// own child process and its row (the full run summary) is journalled to
// --out as it finishes. A rerun skips the points already there. Under mpirun
// or srun the points go out over MPI from rank 0 (mpi/sweep/sweep_mpi.hpp).
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/command.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/documents.hpp"
#include "models/core/errors.hpp"
#include "models/core/flag_types.hpp"
#include "models/core/parse.hpp"
#include "models/core/schema.hpp"
#include "proc/run_spec.hpp"
#include "sim/progress.hpp"
#include "sweep/header.hpp"
#include "sweep/sweep.hpp"
#ifdef RINGSIM_HAVE_MPI_SWEEP
#include "mpi/sweep/sweep_mpi.hpp"
#endif

namespace ringsim::cli {
namespace {

struct SweepFlags {
  proc::RunFlags run;
  std::string grid, out, jobs = "1", timeout = "0", plot, metric = "time_s", plot_x, plot_series;
  bool json = false, force_new = false;
  std::vector<std::pair<std::string, std::string>> given;  // (flag, text) in command-line order
  std::map<std::string, std::string> base;  // the flags under the axes, for the journal's header
  std::string config;                       // --config FILE ("": none)
};

// The sweep's own flags: how it runs and what it writes, not what a row holds.
const std::set<std::string> kSweepOnly = {"--grid", "--out",         "--jobs",    "--timeout",
                                          "--plot", "--plot-metric", "--plot-x",  "--plot-series",
                                          "--json", "--force-new",   "--progress"};

// The base flags the journal's header holds: those given (command line,
// --config) and those a grid file set, but not the axes.
std::map<std::string, std::string> header_base(const SweepFlags& f, const sweep::Grid& g) {
  auto base = f.base;
  for (const auto& [k, v] : g.file_base) base.emplace(k, v);
  for (const auto& a : g.axes) base.erase(a.flag);
  return base;
}

std::string metric_text(const sweep::Row& r, const std::string& metric) {
  if (!r.ok) return "failed: " + r.error;
  if (!r.summary.contains(metric)) return "-";
  const auto& v = r.summary[metric];
  if (!v.is_number()) return v.dump();
  // The rows file keeps the raw number; the table reads it in its unit.
  const double x = v.get<double>();
  const auto ends = [&](const std::string& tail) {
    return metric.size() > tail.size() &&
           metric.compare(metric.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (ends("_s")) return human_seconds(x);
  if (ends("_bytes")) return human_bytes(x);
  return v.is_number_float() ? fmt::format("{:.6g}", x) : v.dump();
}

int run(const SweepFlags& f) {
  sim::InterruptGuard guard;
  if (!f.run.sim.trace.empty())
    throw InputError("--trace: a sweep writes rows, not one trace per point; run the point alone");
  if (!f.run.sim.csv.empty())
    throw InputError("--csv: a sweep's table is --out FILE.csv (one row per point)");
  sweep::Grid g;
  if (!f.grid.empty()) {
    std::vector<std::string> given;
    for (const auto& [flag, text] : f.given) {
      if (sweep::is_list(flag, text) && flag != "--torus-dims")
        throw InputError(
            fmt::format("{}: the axes come from --grid {}; give {} one value", flag, f.grid, flag));
      given.push_back(flag);
    }
    g = sweep::read_grid_file(f.grid, "--grid", f.run, given);
  } else {
    g.base = f.run;
    std::set<std::string> seen;
    const auto& ok = sweep::sweepable_flags();
    for (const auto& [flag, text] : f.given) {
      if (flag == "--set") {
        // --set KEY=V1,V2: an axis named "--set KEY".
        const auto [key, value] = proc::parse_set(text);
        if (!sweep::is_list(flag, value)) continue;
        if (!seen.insert("--set " + key).second)
          throw InputError(fmt::format("--set {}: swept twice", key));
        g.axes.push_back({"--set " + key, sweep::expand("--set " + key, value)});
        continue;
      }
      if (!sweep::is_list(flag, text) || seen.count(flag) || flag == "--torus-dims") continue;
      if (std::find(ok.begin(), ok.end(), flag) == ok.end())
        throw InputError(fmt::format("{}: takes one value in a sweep (flags a sweep can vary: {})",
                                     flag, join(ok, ", ")));
      seen.insert(flag);
      g.axes.push_back({flag, sweep::expand(flag, text)});
    }
  }
  const auto pts = sweep::points(g);

  sweep::Options o;
  o.header = sweep::make_header(header_base(f, g), f.config);
  o.force_new = f.force_new;
  o.jobs = static_cast<int>(parse_count("--jobs", f.jobs, 1, 1024));
  o.timeout_s = parse_real("--timeout", f.timeout, 0, 1e7);
  // run's --progress; a sweep shows its bar whenever stderr is a terminal.
  o.progress = f.run.sim.progress || isatty(2);
  if (!f.out.empty()) {
    const auto ends = [&](const std::string& e) {
      return f.out.size() > e.size() && f.out.compare(f.out.size() - e.size(), e.size(), e) == 0;
    };
    if (ends(".jsonl")) {
      o.out = f.out;
    } else if (ends(".csv")) {
      o.csv = f.out;
      o.out = f.out + ".jsonl";  // the journal beside it, for resuming
    } else {
      throw InputError(fmt::format("--out {}: name a .jsonl or a .csv file", f.out));
    }
  }
  if (f.plot.empty())
    for (const auto& [flag, text] : f.given)
      if (flag == "--plot-metric" || flag == "--plot-x" || flag == "--plot-series")
        throw InputError(
            fmt::format("{}: applies to --plot PREFIX (the sweep's plot); give --plot "
                        "or leave {} out",
                        flag, flag));
  if (!f.plot.empty()) {
    if (f.out.empty()) throw InputError("--plot: needs --out (the plot is written with the data)");
    // A prefix, not a file: a name ending in a format's extension would
    // become x.png.png; say what it writes instead of writing that.
    for (const std::string e : {".png", ".svg", ".pdf", ".json"})
      if (f.plot.size() > e.size() && f.plot.ends_with(e))
        throw InputError(fmt::format(
            "--plot {}: takes a PREFIX and writes PREFIX.json, PREFIX.png and PREFIX.svg; give "
            "'{}'",
            f.plot, f.plot.substr(0, f.plot.size() - e.size())));
    o.plot = f.plot;
    o.metric = f.metric;
    auto axis_of = [&](const std::string& flag, const char* what) -> const sweep::Axis* {
      for (const auto& a : g.axes)
        if (a.flag == flag) return &a;
      std::vector<std::string> names;
      for (const auto& a : g.axes) names.push_back(a.flag);
      throw InputError(fmt::format("{}: '{}' is not an axis of this sweep (axes: {})", what, flag,
                                   join(names, ", ")));
    };
    o.x = f.plot_x.empty() ? g.axes.front().flag : f.plot_x;
    for (const auto& v : axis_of(o.x, "--plot-x")->values) {
      if (double x = 0; !sweep::axis_number(v, x))
        throw InputError(
            fmt::format("--plot-x: {} has a value that is not a number ('{}')", o.x, v));
    }
    if (!f.plot_series.empty()) {
      axis_of(f.plot_series, "--plot-series");
      o.series = f.plot_series;
    }
    // Every other axis splits the series too: one line per combination.
    for (const auto& a : g.axes)
      if (a.flag != o.x && a.flag != o.series) {
        if (o.series.empty())
          o.series = a.flag;
        else
          o.others.push_back(a.flag);
      }
  }
  std::vector<PathArg> outs{{"--out", o.out}};
  if (!o.csv.empty()) outs.push_back({"--out", o.csv});
  if (!o.plot.empty()) {
    outs.push_back({"--plot", o.plot + ".json"});
    outs.push_back({"--plot", o.plot + ".png"});
    outs.push_back({"--plot", o.plot + ".svg"});
  }
  // Every file a point reads: a plot or journal over any of them is refused.
  std::vector<PathArg> ins{{"--grid", f.grid},
                           {"--catalog", f.run.hw.catalog},
                           {"--profile", f.run.hw.profile},
                           {"--calibration", f.run.calibration},
                           {"--config", f.config}};
  if (names_documents_file(f.run.w.documents)) ins.push_back({"--documents", f.run.w.documents});
  check_outputs(outs, ins);

  sweep::Result res;
  int ranks = 1;
  if (sweep::launched_by_mpi()) {
#ifdef RINGSIM_HAVE_MPI_SWEEP
    auto m = sweep::run_mpi(pts, o);
    if (m.worker) return sim::interrupt_requested() ? sim::kInterruptedExit : 0;
    res = std::move(m.result);
    ranks = m.ranks;
#else
    throw InputError(
        "ringsim sweep: started by an MPI launcher, but this ringsim was built without MPI "
        "(RINGSIM_MPI=OFF); run it without mpirun, with -j N");
#endif
  } else {
    res = sweep::run_local(pts, o);
  }

  if (f.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : res.rows) rows.push_back(sweep::to_json(r));
    nlohmann::json j{{"schema_version", kJsonSchemaVersion},
                     {"command", "sweep"},
                     {"points", pts.size()},
                     {"ran", res.ran},
                     {"from_journal", res.skipped},
                     {"failed", res.failed},
                     {"interrupted", res.interrupted},
                     {"ranks", ranks},
                     {"out", o.out},
                     {"csv", o.csv},
                     {"rows", rows}};
    if (!o.plot.empty())
      j["plot"] = {{"spec", o.plot + ".json"},
                   {"png", o.plot + ".png"},
                   {"status", res.plot_status.empty() ? "ok" : res.plot_status}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::string out = fmt::format(
        "ringsim sweep: {} point(s) over {} axis(es); ran {}, {} already in {}, {} failed{}\n",
        pts.size(), g.axes.size(), res.ran, res.skipped, o.out.empty() ? "(no --out)" : o.out,
        res.failed, ranks > 1 ? fmt::format(" ({} MPI ranks)", ranks) : "");
    std::size_t shown = 0;
    for (const auto& r : res.rows) {
      if (shown++ == 40) {
        out += fmt::format("  ... {} more in {}\n", res.rows.size() - 40,
                           o.out.empty() ? "--json" : o.out);
        break;
      }
      out += fmt::format("  {:<48} {} {}\n", r.key, o.metric, metric_text(r, o.metric));
    }
    if (!o.csv.empty()) out += fmt::format("table: {}\n", o.csv);
    if (!o.plot.empty())
      out += res.plot_status.empty()
                 ? fmt::format("plot: {}.png ({}.json)\n", o.plot, o.plot)
                 : fmt::format("plot: {}.json; PNG skipped: {}\n", o.plot, res.plot_status);
    std::cout << out;
  }
  if (res.interrupted) {
    std::cerr << fmt::format(
        "ringsim sweep: interrupted; {} rows journalled in {}; rerun the same command to "
        "finish\n",
        o.out.empty() ? 0 : res.rows.size(), o.out.empty() ? "(nothing: no --out)" : o.out);
    return sim::kInterruptedExit;
  }
  if (res.plot_failed) {
    std::cerr << fmt::format(
        "ringsim sweep: --plot: {}.png not written: {}; the rows and {}.json are written\n", o.plot,
        res.plot_status, o.plot);
    return 1;
  }
  return 0;
}

}  // namespace

Command sweep_command() {
  return {"sweep", [](CLI::App& app, int* code) {
            auto f = std::make_shared<SweepFlags>();
            auto* sub = app.add_subcommand(
                "sweep",
                "A grid of runs: any run flag given a list (8,64,512) or range (2K..32K:x2) is an "
                "axis; one row per point, resumable, over MPI under mpirun");
            proc::add_workload_flags(sub, f->run.w);
            proc::add_hardware_flags(sub, f->run.hw);
            proc::add_sim_flags(sub, f->run.sim);
            sub->add_option("--calibration", f->run.calibration,
                            "Your calibrate --runs file: each point's error band from your own "
                            "measured runs where they validate run's class (not an axis)")
                ->type_name(flag_type::kFile);
            sub->add_option("--grid", f->grid,
                            "JSON grid: {\"base\": {\"--flag\": value}, \"axes\": {\"--flag\": "
                            "\"v1,v2\" or [..]}} instead of list-valued flags")
                ->type_name(flag_type::kFile);
            sub->add_option("--out", f->out,
                            "Rows: FILE.jsonl (journal, resumable) or FILE.csv (journal beside it "
                            "as FILE.csv.jsonl)")
                ->type_name(flag_type::kFile);
            sub->add_option("-j,--jobs", f->jobs, "Points run at once (child processes)")
                ->capture_default_str()
                ->type_name(flag_type::kInt);
            sub->add_option("--timeout", f->timeout, "Seconds one point may take (0: no limit)")
                ->capture_default_str()
                ->type_name(flag_type::kSeconds);
            sub->add_option("--plot", f->plot,
                            "Write PREFIX.json (plot spec) and PREFIX.png of --plot-metric")
                ->type_name(flag_type::kPrefix);
            sub->add_option("--plot-metric", f->metric, "Summary key to plot")
                ->capture_default_str()
                ->type_name(flag_type::kName);
            sub->add_option("--plot-x", f->plot_x, "Axis on x (default: the first axis)")
                ->type_name(flag_type::kName);
            sub->add_option("--plot-series", f->plot_series,
                            "Axis named first in each series (default: the next axis); every "
                            "other axis splits the series too, one line per combination")
                ->type_name(flag_type::kName);
            sub->add_flag("--json", f->json, "Print one JSON object with every row");
            sub->add_flag("--force-new", f->force_new,
                          "Start a new journal even if --out holds one (computed under other "
                          "flags, data or version); the old one is kept beside it as FILE.N.jsonl");
            sub->callback([f, code, sub] {
              // The flags given, in command-line order: the axes' order.
              f->given.clear();
              std::set<const CLI::Option*> seen;
              for (const auto* opt : sub->parse_order()) {
                if (!seen.insert(opt).second || opt->get_lnames().empty()) continue;
                const auto flag = "--" + opt->get_lnames().front();
                for (const auto& v : opt->results()) f->given.emplace_back(flag, v);
              }
              f->base = sweep::flags_given(*sub, kSweepOnly);
              const auto* config = sub->get_parent()->get_config_ptr();
              f->config = config && config->count() > 0 ? config->as<std::string>() : "";
              *code = run(*f);
            });
            return sub;
          }};
}

}  // namespace ringsim::cli
