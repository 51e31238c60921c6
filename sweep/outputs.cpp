// A sweep's files once its points are done: the journal rewritten in grid
// order (sweep/journal.hpp), the CSV of every row, and the plot of one metric
// over two axes. Each file is written whole or not at all
// (models/core/atomic_file.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "experiments/plot_spec.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "proc/child.hpp"
#include "sweep/journal.hpp"
#include "sweep/sweep.hpp"

namespace ringsim::sweep {

namespace {

// A summary's scalar values, nested objects flattened with dots ("sim.activities").
void flatten(const nlohmann::json& j, const std::string& prefix,
             std::map<std::string, nlohmann::json>& out) {
  for (const auto& [k, v] : j.items()) {
    const auto name = prefix.empty() ? k : prefix + "." + k;
    if (v.is_object())
      flatten(v, name, out);
    else if (!v.is_array())
      out[name] = v;
  }
}

std::string csv_cell(const nlohmann::json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

void write_csv(const std::vector<Row>& rows, const std::string& path) {
  std::set<std::string> params, fields;
  std::vector<std::map<std::string, nlohmann::json>> flat(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (const auto& [k, v] : rows[i].params) params.insert(k);
    if (rows[i].ok) flatten(rows[i].summary, "", flat[i]);
    for (const auto& [k, v] : flat[i]) fields.insert(k);
  }
  std::string out = "index,key";
  for (const auto& p : params) out += "," + csv_cell(p);
  out += ",status,error";
  for (const auto& f : fields) out += "," + csv_cell(f);
  out += "\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    out += fmt::format("{},{}", r.index, csv_cell(r.key));
    for (const auto& p : params) {
      std::string v;
      for (const auto& [k, x] : r.params)
        if (k == p) v = x;
      out += "," + csv_cell(v);
    }
    out += fmt::format(",{},{}", r.ok ? "ok" : "failed", csv_cell(r.error));
    for (const auto& f : fields) {
      const auto it = flat[i].find(f);
      out += "," + (it == flat[i].end() ? std::string() : csv_cell(it->second));
    }
    out += "\n";
  }
  AtomicFile file(path, "--out");
  file.write(out);
  commit_all({&file});
}

std::string param(const Row& r, const std::string& flag) {
  for (const auto& [k, v] : r.params)
    if (k == flag) return v;
  return {};
}

// The series a row belongs to: its values of the non-x axes ("--devices 64,
// --layout zigzag"); "" with no other axis.
std::string series_of(const Row& r, const Options& o) {
  std::vector<std::pair<std::string, std::string>> values;
  if (!o.series.empty()) values.emplace_back(o.series, param(r, o.series));
  for (const auto& a : o.others) values.emplace_back(a, param(r, a));
  return group_name(values);
}

// One series per combination of the non-x axes (in grid order), x = the axis
// value as a number, y = the metric; rows that failed or lack the metric are
// left out.
std::string write_plot(const std::vector<Row>& rows, const Options& o) {
  exp::PlotSpec spec;
  exp::Panel panel;
  std::vector<std::string> by_axes;
  if (!o.series.empty()) by_axes.push_back(o.series);
  by_axes.insert(by_axes.end(), o.others.begin(), o.others.end());
  panel.title = fmt::format("{} against {}{}", o.metric, o.x,
                            by_axes.empty() ? "" : " by " + join(by_axes, ", "));
  std::vector<std::string> order;
  std::map<std::string, exp::Series> by;
  std::size_t missing = 0;
  for (const auto& r : rows) {
    const auto xs = param(r, o.x);
    double x = 0;
    if (!axis_number(xs, x)) {
      throw InputError(
          fmt::format("--plot-x: {} is not numeric ('{}'); plot against a numeric "
                      "axis such as --devices or --block",
                      o.x, xs));
    }
    if (!r.ok || !r.summary.contains(o.metric) || !r.summary[o.metric].is_number()) {
      ++missing;
      continue;
    }
    const auto combo = series_of(r, o);
    const auto s = combo.empty() ? o.metric : combo;
    if (!by.count(s)) {
      order.push_back(s);
      by[s] = exp::line_series(s, exp::color_for(s, order.size() - 1));
    }
    by[s].points.push_back({x, r.summary[o.metric].get<double>()});
  }
  // Log axes (a sweep's axes are mostly geometric) only where every value is
  // above 0: a log axis cannot draw a 0 (an --ep 1 row's ep_comm_s), and a
  // dropped point would go unsaid.
  bool x_log = true, y_log = true;
  for (const auto& s : order)
    for (const auto& pt : by[s].points) {
      x_log = x_log && pt.first > 0;
      y_log = y_log && pt.second > 0;
    }
  panel.x = exp::make_axis(o.x, x_log, 2);
  panel.y = exp::make_axis(o.metric, y_log, 10);
  for (const auto& s : order) panel.series.push_back(by[s]);
  spec.title = fmt::format("ringsim sweep: {} ({} points{})", o.metric, rows.size(),
                           missing ? fmt::format(", {} without a value", missing) : "");
  spec.columns = 1;
  spec.width = 1100;
  spec.height = 750;
  spec.panels = {panel};
  const auto json_path = o.plot + ".json", png_path = o.plot + ".png";
  {
    AtomicFile f(json_path, "--plot");
    f.write(exp::to_json(spec).dump(2) + "\n");
    commit_all({&f});
  }
  return exp::render_plot(proc::sibling_exe("ringsim-plot"), json_path, png_path);
}

}  // namespace

void finish_outputs(const std::vector<Point>& pts, const std::map<std::string, Row>& rows,
                    const Options& o, Journal& journal, Result& res) {
  res.rows.clear();
  for (const auto& p : pts) {
    const auto it = rows.find(p.key);
    if (it == rows.end()) continue;
    auto r = it->second;
    r.index = p.index;  // the current grid's position (a resumed journal may predate it)
    res.rows.push_back(std::move(r));
  }
  res.failed = static_cast<std::size_t>(
      std::count_if(res.rows.begin(), res.rows.end(), [](const Row& r) { return !r.ok; }));
  // Interrupted: the journal stays as appended, for the rerun to resume from.
  if (res.interrupted) return;
  if (!o.out.empty()) {
    journal.rewrite(res.rows);
    if (rows.size() > res.rows.size())
      std::cerr << fmt::format(
          "ringsim sweep: {} row(s) of {} belong to another grid and were left out of it\n",
          rows.size() - res.rows.size(), o.out);
  }
  if (!o.csv.empty()) write_csv(res.rows, o.csv);
  if (!o.plot.empty()) {
    res.plot_status = write_plot(res.rows, o);
    res.plot_failed = !res.plot_status.empty() && !proc::sibling_exe("ringsim-plot").empty();
  }
}

std::string group_name(const std::vector<std::pair<std::string, std::string>>& values) {
  std::vector<std::string> parts;
  for (const auto& [flag, v] : values) parts.push_back(fmt::format("{} {}", flag, v));
  return join(parts, ", ");
}

}  // namespace ringsim::sweep
