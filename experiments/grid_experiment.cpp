#include "experiments/grid_experiment.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <ostream>
#include <set>

#include "experiments/markdown.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "proc/child.hpp"
#include "proc/run_spec.hpp"
#include "sweep/sweep.hpp"

namespace ringsim::exp {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Flags as text into the run flags a grid starts from, by the CLI's own
// declarations (a wrong flag in a declaration is an error, not a silent run).
proc::RunFlags run_flags(const std::vector<std::pair<std::string, std::string>>& flags) {
  proc::RunFlags f;
  CLI::App app{"ringsim run", "run"};
  proc::add_run_flags(&app, f);
  std::vector<std::string> args;
  for (const auto& [k, v] : flags) {
    args.push_back(k);
    if (!v.empty()) args.push_back(v);
  }
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    app.parse(rev);
  } catch (const CLI::ParseError& e) {
    throw std::logic_error("experiment declaration: " + std::string(e.what()));
  }
  return f;
}

const std::vector<Config>& configs_of(const GridExperiment& g, bool quick) {
  return quick && !g.quick_configs.empty() ? g.quick_configs : g.configs;
}

// The grid's axes, with the values a configuration gives some of them itself.
std::vector<SweptAxis> axes_of(const GridExperiment& g, const Config& c) {
  auto axes = g.axes;
  for (const auto& own : c.axes) {
    const auto it = std::find_if(axes.begin(), axes.end(),
                                 [&](const SweptAxis& a) { return a.flag == own.flag; });
    if (it == axes.end())
      throw std::logic_error("experiment declaration: " + c.name + " sweeps " + own.flag +
                             ", not an axis of the grid");
    *it = own;
  }
  return axes;
}

// Every point: per configuration, its flags as one-value axes (so they are
// part of each point's journal key), then the engines, then the swept axes.
std::vector<sweep::Point> grid_points(const GridExperiment& g, const Context& ctx,
                                      std::vector<const Config*>& owner) {
  std::vector<sweep::Point> all;
  for (const auto& c : configs_of(g, ctx.quick)) {
    sweep::Grid grid;
    auto base = g.base;
    if (!g.both_engines) base.push_back({"--engine", ctx.engine});
    grid.base = run_flags(base);
    for (const auto& [flag, value] : c.flags) grid.axes.push_back({flag, {value}});
    if (g.both_engines) {
      std::vector<std::string> engines{"analytic"};
      if (ctx.engine == "simgrid") engines.push_back("simgrid");
      grid.axes.push_back({"--engine", engines});
    }
    for (const auto& a : axes_of(g, c))
      grid.axes.push_back({a.flag, sweep::expand(a.flag, ctx.quick ? a.quick : a.full)});
    for (auto& p : sweep::points(grid)) {
      if (g.keep && !g.keep(c, {p.params.begin(), p.params.end()})) continue;
      p.index = all.size();
      all.push_back(std::move(p));
      owner.push_back(&c);
    }
  }
  return all;
}

std::string value_text(double v) {
  if (std::isnan(v)) return "";
  return fmt::format("{:.10g}", v);
}

// A measure at one point (NaN where it failed).
double measure_value(const Measure& m, const GridPoint& p, const std::vector<GridPoint>& all) {
  if (!p.ok) return std::numeric_limits<double>::quiet_NaN();
  if (m.compute) return m.compute(p, all);
  const double v = p.value(m.key);
  return m.over.empty() ? v : v / p.value(m.over);
}

// data.csv: the configuration's name and facts, the swept values, the engine,
// status, then each measure.
void write_data(const GridExperiment& g, const std::vector<GridPoint>& pts, Output& out) {
  std::vector<std::string> facts;
  for (const auto& p : pts)
    for (const auto& [k, v] : p.config->facts)
      if (std::find(facts.begin(), facts.end(), k) == facts.end()) facts.push_back(k);
  std::vector<std::string> cols{"config"};
  cols.insert(cols.end(), facts.begin(), facts.end());
  for (const auto& a : g.axes) cols.push_back(a.flag.substr(2));
  cols.insert(cols.end(), {"engine", "status"});
  for (const auto& m : g.measures) cols.push_back(m.column);
  out.data.set_columns(cols);
  for (const auto& p : pts) {
    auto row = out.data.add_row();
    row.set("config", p.config->name);
    for (const auto& f : facts) {
      const auto it = p.config->facts.find(f);
      row.set(f, it == p.config->facts.end() ? std::string() : it->second);
    }
    for (const auto& a : g.axes) row.set(a.flag.substr(2), p.axes.at(a.flag));
    row.set("engine", p.engine).set("status", p.ok ? std::string("ok") : p.error);
    if (!p.ok) continue;
    for (const auto& m : g.measures) {
      if (const auto t = p.text(m.key); !m.compute && !t.empty()) {
        row.set(m.column, t);
        continue;
      }
      row.set(m.column, value_text(measure_value(m, p, pts)));
    }
  }
}

double measure_of(const GridExperiment& g, const GridPoint& p, const std::string& column,
                  const std::vector<GridPoint>& all) {
  for (const auto& m : g.measures)
    if (m.column == column) return measure_value(m, p, all);
  throw std::logic_error("experiment declaration: no measure named " + column);
}

std::string fact_or(const Config& c, const std::string& key, const std::string& otherwise) {
  const auto it = c.facts.find(key);
  return it == c.facts.end() ? otherwise : it->second;
}

// A panel of one series per declared measure: against the axis `x`, or
// (no `x`) one category per point in the panel (failed ones too, so
// positions do not shift); a point without the measure is left out.
Panel categorical_panel(const GridExperiment& g, const PanelDecl& d,
                        const std::vector<GridPoint>& pts) {
  Panel panel;
  panel.title = d.title;
  panel.x = d.x_axis;
  panel.y = d.y_axis;
  for (std::size_t i = 0; i < d.series.size(); ++i) {
    const auto& m = d.series[i];
    const auto colour = m.color.empty() ? palette_color(i) : m.color;
    Series s = d.x.empty() || m.hollow ? scatter_series(m.name, colour, m.marker)
                                       : line_series(m.name, colour);
    s.marker = m.marker;
    s.hollow = m.hollow;
    panel.series.push_back(std::move(s));
  }
  double x = 0;
  for (const auto& p : pts) {
    if (!d.panel.empty() && fact_or(*p.config, "panel", "") != d.panel) continue;
    if (!d.x.empty() && !p.ok) continue;
    if (d.x.empty()) panel.x.categories.push_back(fact_or(*p.config, "category", p.config->name));
    for (std::size_t i = 0; i < d.series.size(); ++i)
      if (const double v = measure_of(g, p, d.series[i].measure, pts); !std::isnan(v))
        panel.series[i].points.push_back({d.x.empty() ? x : p.axis(d.x), v});
    x += 1;
  }
  return panel;
}

// One panel: a series per configuration, per combination of the swept axes
// other than x and per engine (sweep::group_key, the one grouping rule
// sweeps and experiments share), in grid order.
Panel panel_of(const GridExperiment& g, const PanelDecl& d, const std::vector<GridPoint>& pts) {
  if (!d.series.empty()) {
    auto p = categorical_panel(g, d, pts);
    if (!d.legend.empty()) p.legend = d.legend;
    return p;
  }
  Panel panel;
  if (!d.legend.empty()) panel.legend = d.legend;
  panel.title = d.title;
  panel.x = d.x_axis;
  panel.y = d.y_axis;
  std::vector<std::string> order;
  std::map<std::string, Series> by;
  std::map<std::string, std::size_t> colour_of;  // configuration -> palette index
  auto in_panel = [&](const GridPoint& p) {
    return p.ok && (d.panel.empty() || fact_or(*p.config, "panel", "") == d.panel);
  };
  // An axis with one value among the panel's points names no series (a
  // configuration that holds it fixed while another sweeps it).
  std::map<std::string, std::set<std::string>> seen;
  for (const auto& p : pts)
    if (in_panel(p))
      for (const auto& [flag, v] : p.axes) seen[flag].insert(v);
  for (const auto& p : pts) {
    if (!in_panel(p)) continue;
    const double y = measure_of(g, p, d.measure, pts);
    if (std::isnan(y)) continue;  // the point lacks the measure (nothing fits)
    const bool sim = p.engine == "simgrid";
    std::string name;
    if (d.series_of) {
      name = d.series_of(p);
      if (name.empty()) continue;
    } else {
      std::vector<std::pair<std::string, std::string>> others;
      for (const auto& a : g.axes)
        if (a.flag != d.x && seen[a.flag].size() > 1)
          others.emplace_back(a.flag, p.axes.at(a.flag));
      const auto group = sweep::group_name(others);
      name = p.config->name + (group.empty() ? "" : ", " + group) +
             (g.both_engines ? (sim ? ": simulated" : ": analytic") : "");
    }
    if (!by.count(name) && d.make) {
      by[name] = d.make(name, p);
      order.push_back(name);
    } else if (!by.count(name)) {
      if (!colour_of.count(p.config->name)) colour_of[p.config->name] = colour_of.size();
      const auto colour = palette_color(colour_of[p.config->name]);
      if (sim) {
        by[name] = scatter_series(name, colour, "circle");
        by[name].hollow = true;
      } else {
        by[name] = line_series(name, colour);
        by[name].markers = !g.both_engines;
      }
      order.push_back(name);
    }
    const double x = d.x_measure.empty() ? p.axis(d.x) : measure_of(g, p, d.x_measure, pts);
    by[name].points.push_back({x, y});
  }
  for (const auto& n : order) panel.series.push_back(by[n]);
  return panel;
}

// The report's table: one row per point that ran, the swept values and measures.
std::string results_table(const GridExperiment& g, const std::vector<GridPoint>& pts) {
  std::vector<std::string> head{"config"};
  for (const auto& a : g.axes) head.push_back(a.flag.substr(2));
  if (g.both_engines) head.push_back("engine");
  for (const auto& m : g.measures) head.push_back(m.column);
  MdTable t(head);
  for (const auto& p : pts) {
    if (!p.ok) continue;
    std::vector<std::string> cells{p.config->name};
    for (const auto& a : g.axes) cells.push_back(p.axes.at(a.flag));
    if (g.both_engines) cells.push_back(p.engine);
    for (const auto& m : g.measures) {
      const auto t = m.compute ? std::string() : p.text(m.key);
      const double v = measure_value(m, p, pts);
      // A whole number (a count, a block) as it is, not "32.00".
      const bool whole = std::fabs(v) < 1e15 && v == std::round(v);
      cells.push_back(!t.empty()      ? t
                      : std::isnan(v) ? "-"
                      : whole         ? fmt::format("{:.0f}", v)
                                      : sig(v, 4));
    }
    t.add(cells);
  }
  return t.str();
}

// The values of every axis, first axis slowest (as sweep::points orders them).
std::vector<std::map<std::string, std::string>> combinations(const GridExperiment& g,
                                                             const Config& c, bool quick) {
  std::vector<std::map<std::string, std::string>> all{{}};
  for (const auto& a : axes_of(g, c)) {
    std::vector<std::map<std::string, std::string>> next;
    for (const auto& c : all)
      for (const auto& v : sweep::expand(a.flag, quick ? a.quick : a.full)) {
        auto d = c;
        d[a.flag] = v;
        next.push_back(std::move(d));
      }
    all = std::move(next);
  }
  return all;
}

// Closed-form points, in this process: microseconds each, so no journal.
std::vector<GridPoint> evaluate_points(const GridExperiment& g, const Context& ctx) {
  std::vector<GridPoint> rows;
  for (const auto& c : configs_of(g, ctx.quick))
    for (const auto& axes : combinations(g, c, ctx.quick)) {
      if (g.keep && !g.keep(c, axes)) continue;
      GridPoint p;
      p.config = &c;
      p.axes = axes;
      p.engine = "analytic";
      try {
        p.summary = g.evaluate(c, axes);
        p.ok = true;
      } catch (const InputError& e) {
        p.error = e.what();
      }
      rows.push_back(std::move(p));
    }
  return rows;
}

// Simulated points through the sweep engine: one child each, journalled; the
// journal goes once every point has a row (data.csv then holds them), so a
// rerun recomputes and a stopped one resumes.
std::vector<GridPoint> child_points(const GridExperiment& g, const Context& ctx, Output& out) {
  std::vector<const Config*> owner;
  const auto pts = grid_points(g, ctx, owner);
  // A point two configurations share (a device sweep's N = 8 is also a
  // point of the sequence sweep) runs once; each configuration gets its row.
  std::vector<sweep::Point> unique;
  std::set<std::string> keys;
  for (const auto& p : pts)
    if (keys.insert(p.key).second) {
      unique.push_back(p);
      unique.back().index = unique.size() - 1;
    }
  sweep::Options o;
  o.out = (fs::path(ctx.out_dir) / g.name / "rows.jsonl").string();
  o.header =
      sweep::make_header({{"experiment", g.name}, {"mode", ctx.quick ? "quick" : "full"}}, "");
  // A rerun resumes; a journal of another mode or version is set aside, not mixed in.
  o.aside_if_different = true;
  o.jobs = ctx.jobs;
  o.timeout_s = g.timeout_s;
  o.ringsim = ctx.ringsim;
  if (ctx.log)
    *ctx.log << fmt::format("  {} point(s), journal {} (a rerun resumes)\n", unique.size(), o.out);
  const auto res = sweep::run_local(unique, o);
  if (res.interrupted) throw InputError("interrupted: the finished points are in " + o.out);
  std::map<std::string, const sweep::Row*> by_key;
  for (const auto& r : res.rows) by_key[r.key] = &r;
  std::vector<GridPoint> rows;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const auto it = by_key.find(pts[i].key);
    if (it == by_key.end()) continue;
    const auto& r = *it->second;
    GridPoint p;
    p.config = owner.at(i);
    for (const auto& [k, v] : r.params) p.axes[k] = v;
    p.engine = p.axes.count("--engine") ? p.axes["--engine"] : ctx.engine;
    p.ok = r.ok;
    p.error = r.error;
    p.summary = r.summary;
    p.wall_s = r.wall_s;
    rows.push_back(std::move(p));
  }
  if (!pts.empty() && pts.front().spec) {
    auto spec = *pts.front().spec;
    spec.json = true;
    auto argv = proc::to_args(spec);
    argv.insert(argv.begin(), "ringsim");
    out.child_examples.push_back(proc::shell_line(argv));
  }
  std::error_code ec;
  fs::remove(o.out, ec);
  return rows;
}

void run_grid(const GridExperiment& g, const Context& ctx, Output& out) {
  out.evaluated_only = static_cast<bool>(g.evaluate) && !g.analyses_simulate;
  auto rows = g.evaluate ? evaluate_points(g, ctx) : child_points(g, ctx, out);
  for (const auto& p : rows) {
    ++out.points;
    if (p.ok) continue;
    ++out.failed_points;
    if (ctx.log) *ctx.log << "  failed: " << p.config->name << "\n    " << p.error << "\n";
  }
  write_data(g, rows, out);
  // A panel with nothing to draw (a --quick run leaves a configuration out) is left out.
  for (const auto& d : g.panels)
    if (auto p = panel_of(g, d, rows); std::any_of(
            p.series.begin(), p.series.end(), [](const Series& s) { return !s.points.empty(); }))
      out.plot.panels.push_back(std::move(p));
  out.plot.title = g.plot_title;
  out.plot.note = g.plot_note;
  out.plot.columns =
      std::min(g.plot_columns, std::max(1, static_cast<int>(out.plot.panels.size())));
  out.plot.width = g.plot_width;
  out.plot.height = g.plot_height;
  out.report += g.caption + "\n\n";
  for (const auto& a : g.analyses) a(rows, ctx, out);
  if (g.list_points) out.report += "\n## Every point\n\n" + results_table(g, rows);
}

}  // namespace

namespace {

// The value at a dotted key ("verdict.min_block") of a summary, by the JSON
// library's own pointer ("/verdict/min_block"); null when it is not there.
const json* lookup(const json& summary, const std::string& key) {
  std::string ptr = "/" + key;
  std::replace(ptr.begin(), ptr.end(), '.', '/');
  const json::json_pointer at(ptr);
  return summary.contains(at) ? &summary.at(at) : nullptr;
}

}  // namespace

double GridPoint::value(const std::string& key) const {
  const json* j = ok ? lookup(summary, key) : nullptr;
  return j && j->is_number() ? j->get<double>() : std::numeric_limits<double>::quiet_NaN();
}

std::string GridPoint::text(const std::string& key) const {
  const json* j = ok ? lookup(summary, key) : nullptr;
  return j && j->is_string() ? j->get<std::string>() : "";
}

const GridPoint* sibling(const std::vector<GridPoint>& all, const GridPoint& p,
                         const std::string& flag, const std::string& value) {
  for (const auto& q : all) {
    if (!q.ok || q.config != p.config || q.engine != p.engine) continue;
    const auto it = q.axes.find(flag);
    if (it == q.axes.end() || it->second != value) continue;
    bool same = true;
    for (const auto& [k, v] : p.axes)
      if (k != flag && (!q.axes.count(k) || q.axes.at(k) != v)) same = false;
    if (same) return &q;
  }
  return nullptr;
}

double GridPoint::axis(const std::string& flag) const {
  const auto& v = axes.at(flag);
  // A count as the CLI reads it ("128K"), or a plain number for an evaluated
  // axis that is not one (a cached share in percent, "97.5").
  if (v.find('.') != std::string::npos) return parse_real(flag, v, -1e300, 1e300);
  return static_cast<double>(parse_count(flag, v, 0, std::int64_t{1} << 50));
}

Experiment declare(GridExperiment g) {
  Experiment e{g.name, g.title, g.summary, nullptr};
  e.run = [g = std::move(g)](const Context& ctx, Output& out) { run_grid(g, ctx, out); };
  return e;
}

std::function<void(const std::vector<GridPoint>&, const Context&, Output&)> engines_agree(
    std::string check_name, std::string key, double tol, std::string why) {
  return [=](const std::vector<GridPoint>& pts, const Context& ctx, Output& out) {
    if (ctx.engine != "simgrid") return;  // nothing simulated to compare
    double worst = 0;
    std::string bad;
    std::map<std::string, const GridPoint*> analytic;
    auto id = [](const GridPoint& p) {
      std::string s = p.config->name;
      for (const auto& [k, v] : p.axes)
        if (k != "--engine") s += " " + k + "=" + v;
      return s;
    };
    for (const auto& p : pts)
      if (p.ok && p.engine == "analytic") analytic[id(p)] = &p;
    for (const auto& p : pts) {
      if (!p.ok || p.engine != "simgrid" || !analytic.count(id(p))) continue;
      const double a = analytic[id(p)]->value(key), s = p.value(key);
      const double gap = std::fabs(s - a) / std::fabs(a);
      worst = std::max(worst, gap);
      if (gap > tol) bad += fmt::format("{}: {:.2e}; ", id(p), gap);
    }
    out.check(check_name, bad.empty(),
              bad.empty() ? fmt::format("largest relative gap {:.1e} ({})", worst, why) : bad);
  };
}

}  // namespace ringsim::exp
