#include "models/plan/runs_csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "models/core/errors.hpp"
#include "models/core/parse.hpp"

namespace ringsim {

namespace {

// One CSV record (RFC 4180: "" inside quotes is a quote; a quoted field may
// hold commas). A line break inside quotes is refused: a run's flags are one line.
std::vector<std::string> fields(const std::string& line, const std::string& where) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"' && out.back().empty()) {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  if (quoted) throw InputError(where + ": a quote opened and not closed");
  for (auto& f : out) {
    const auto b = f.find_first_not_of(" \t");
    f = b == std::string::npos ? "" : f.substr(b, f.find_last_not_of(" \t") - b + 1);
  }
  return out;
}

double number(const std::string& s, const std::string& where, const char* col, double lo,
              double hi) {
  double v = 0;
  if (!read_decimal(s, v) || v < lo || v > hi)
    throw InputError(fmt::format("{}: '{}' must be a number in [{:g}, {:g}], got '{}'", where, col,
                                 lo, hi, one_line(s)));
  return v;
}

ValidationCase row_case(const std::vector<std::string>& f, const std::vector<int>& col,
                        const std::string& where, const std::string& origin) {
  auto get = [&](int k) { return col[k] >= 0 ? f[col[k]] : std::string(); };
  ValidationCase c;
  c.id = get(0);
  c.source = "runs";
  c.origin = origin;
  c.command = get(1);
  c.args = get(2);
  c.metric = get(3);
  if (c.id.empty()) throw InputError(where + ": 'id' is empty");
  if (const auto why = unprintable("id", c.id); !why.empty()) throw InputError(where + ": " + why);
  if (c.command != "plan" && c.command != "infer" && c.command != "run")
    throw InputError(fmt::format("{}: 'command' must be plan, infer or run, got '{}'", where,
                                 one_line(c.command)));
  if (c.args.empty()) throw InputError(where + ": 'args' is empty (the command's flags)");
  const bool plan_metric = c.metric == "step_time_s" || c.metric == "tokens_per_s_per_gpu";
  const bool infer_metric = c.metric == "ttft_s" || c.metric == "decode_s_per_token";
  const bool run_metric = c.metric == "time_s";
  const bool ok = c.command == "plan"    ? plan_metric
                  : c.command == "infer" ? infer_metric
                                         : run_metric;
  if (!ok)
    throw InputError(fmt::format("{}: 'metric' for {} must be {}, got '{}'", where, c.command,
                                 c.command == "plan"    ? "step_time_s or tokens_per_s_per_gpu"
                                 : c.command == "infer" ? "ttft_s or decode_s_per_token"
                                                        : "time_s (run's time, one layer)",
                                 one_line(c.metric)));
  c.published = number(get(4), where, "value", 1e-9, 1e12);
  c.tolerance = col[5] >= 0 && !get(5).empty() ? number(get(5), where, "tolerance", 0.01, 1) : 0.2;
  c.note = get(6);
  // Only plan's whole steps carry a framework's factor (as on the scoreboard).
  c.fit = c.command == "plan";
  return c;
}

}  // namespace

ValidationSet parse_runs_csv(const std::string& text, const std::string& origin) {
  ValidationSet v;
  v.sources.push_back({"runs", origin, "", "the user's own measured runs"});
  const std::vector<std::string> names{"id",    "command",   "args", "metric",
                                       "value", "tolerance", "note"};
  std::vector<int> col(names.size(), -1);
  std::set<std::string> ids;
  std::size_t start = 0, n = 0;
  bool header = false;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos || line[0] == '#') continue;
    const auto where = fmt::format("{}: line {}", origin, n);
    const auto f = fields(line, where);
    if (!header) {
      for (std::size_t i = 0; i < f.size(); ++i)
        for (std::size_t k = 0; k < names.size(); ++k)
          if (f[i] == names[k]) col[k] = static_cast<int>(i);
      for (std::size_t k = 0; k < 5; ++k)
        if (col[k] < 0)
          throw InputError(
              fmt::format("{}: the header must name the columns id, command, args, "
                          "metric, value (optional: tolerance, note); '{}' is missing",
                          where, names[k]));
      header = true;
      continue;
    }
    const int need = *std::max_element(col.begin(), col.begin() + 5);
    if (static_cast<int>(f.size()) <= need)
      throw InputError(fmt::format("{}: {} fields, where the header's id to value take {}", where,
                                   f.size(), need + 1));
    const int all = *std::max_element(col.begin(), col.end());
    auto padded = f;
    padded.resize(std::max<std::size_t>(f.size(), static_cast<std::size_t>(all) + 1));
    auto c = row_case(padded, col, where, origin);
    if (!ids.insert(c.id).second)
      throw InputError(fmt::format("{}: id '{}' used twice", where, one_line(c.id)));
    v.cases.push_back(std::move(c));
  }
  if (!header) throw InputError(origin + ": empty (a header line, then one line per run)");
  if (v.cases.empty()) throw InputError(origin + ": a header and no runs");
  return v;
}

}  // namespace ringsim
