#include "experiments/plot/spec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "experiments/plot/ticks.hpp"

namespace ringsim::plot {

namespace {

using nlohmann::json;

std::string g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw SpecError("spec: " + where + ": " + what);
}

std::string text(const json& j, const char* key, const std::string& dflt,
                 const std::string& where) {
  if (!j.contains(key)) return dflt;
  const auto& v = j.at(key);
  if (!v.is_string()) bad(where, std::string("'") + key + "' must be a string");
  auto s = v.get<std::string>();
  if (s.size() > kMaxText)
    bad(where,
        std::string("'") + key + "' is longer than " + std::to_string(kMaxText) + " characters");
  return s;
}

bool flag(const json& j, const char* key, bool dflt, const std::string& where) {
  if (!j.contains(key)) return dflt;
  if (!j.at(key).is_boolean()) bad(where, std::string("'") + key + "' must be true or false");
  return j.at(key).get<bool>();
}

double number(const json& j, const char* key, double dflt, double lo, double hi,
              const std::string& where) {
  if (!j.contains(key)) return dflt;
  const auto& v = j.at(key);
  const double x = v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
  if (!(x >= lo && x <= hi))
    bad(where, std::string("'") + key + "' must be a number in [" + g(lo) + ", " + g(hi) + "]");
  return x;
}

int integer(const json& j, const char* key, int dflt, int lo, int hi, const std::string& where) {
  if (!j.contains(key)) return dflt;
  const double x = number(j, key, dflt, lo, hi, where);
  if (x != std::floor(x)) bad(where, std::string("'") + key + "' must be an integer");
  return static_cast<int>(x);
}

AxisSpec read_axis(const json& p, const char* which, const std::string& panel) {
  const std::string where = panel + "." + which;
  AxisSpec a;
  if (!p.contains(which)) return a;
  const auto& j = p.at(which);
  if (!j.is_object()) bad(where, "must be an object");
  a.label = text(j, "label", "", where);
  a.unit = text(j, "unit", "", where);
  if (a.unit != "" && a.unit != "bytes" && a.unit != "tokens" && a.unit != "s" && a.unit != "%" &&
      a.unit != "x")
    bad(where, "'unit' must be bytes, tokens, s, %, x or empty, got '" + a.unit + "'");
  a.log = flag(j, "log", false, where);
  a.base = integer(j, "base", 10, 2, 100, where);
  if (j.contains("categories")) {
    const auto& c = j.at("categories");
    if (!c.is_array() || c.size() > kMaxCategories)
      bad(where, "'categories' must be an array of at most " + std::to_string(kMaxCategories) +
                     " strings");
    for (const auto& s : c) {
      if (!s.is_string() || s.get<std::string>().size() > kMaxText)
        bad(where, "'categories' must hold strings");
      a.categories.push_back(s.get<std::string>());
    }
  }
  const double big = std::numeric_limits<double>::max();
  a.has_min = j.contains("min");
  a.has_max = j.contains("max");
  if (a.has_min) a.lo = number(j, "min", 0, -big, big, where);
  if (a.has_max) a.hi = number(j, "max", 0, -big, big, where);
  if (a.log && ((a.has_min && a.lo <= 0) || (a.has_max && a.hi <= 0)))
    bad(where, "is logarithmic, so min/max must be > 0");
  if (a.has_min && a.has_max && !(a.lo < a.hi)) bad(where, "'min' must be below 'max'");
  return a;
}

SeriesSpec read_series(const json& s, const std::string& where, const AxisSpec& x,
                       const AxisSpec& y, std::size_t& total) {
  if (!s.is_object()) bad(where, "must be an object");
  SeriesSpec r;
  r.name = text(s, "name", "", where);
  r.type = text(s, "type", "line", where);
  if (r.type != "line" && r.type != "scatter")
    bad(where, "'type' must be line or scatter, got '" + r.type + "'");
  r.color = text(s, "color", "#333333", where);
  r.marker = text(s, "marker", "circle", where);
  r.dash = flag(s, "dash", false, where);
  r.markers = flag(s, "markers", true, where);
  r.hollow = flag(s, "hollow", false, where);
  r.legend = flag(s, "legend", true, where);
  // A pen of 1e308 pixels is no line (and stalls the rasteriser).
  r.width = number(s, "width", 2.0, 0.1, 20, where);
  if (!s.contains("points")) return r;
  const auto& pts = s.at("points");
  if (!pts.is_array()) bad(where, "'points' must be an array of [x, y]");
  for (const auto& pt : pts) {
    if (!pt.is_array() || pt.size() != 2 || !pt[0].is_number() || !pt[1].is_number())
      bad(where, "has a point that is not [x, y]");
    if (++total > kMaxPanelPoints)
      bad(where, "the panel has more than " + std::to_string(kMaxPanelPoints) +
                     " points; a plot holds at most that many per panel");
    const double px = pt[0].get<double>(), py = pt[1].get<double>();
    // Points a log axis cannot show are dropped, not clamped.
    if (!std::isfinite(px) || !std::isfinite(py) || (x.log && px <= 0) || (y.log && py <= 0))
      continue;
    r.points.emplace_back(px, py);
  }
  return r;
}

// The drawn range: the data's, padded, unless min/max fix it; then checked,
// since Qt silently draws an inverted, empty or infinite range as garbage.
void resolve_range(AxisSpec& a, double lo, double hi, double frac, const std::string& where) {
  if (!a.categories.empty()) {
    a.lo = -0.6;
    a.hi = static_cast<double>(a.categories.size()) - 0.4;
    return;
  }
  pad_range(lo, hi, a.log, a.base, frac);
  if (!a.has_min) a.lo = lo;
  if (!a.has_max) a.hi = hi;
  const bool ok = std::isfinite(a.lo) && std::isfinite(a.hi) && a.lo < a.hi &&
                  std::isfinite(a.hi - a.lo) && (!a.log || a.lo > 0);
  if (!ok)
    bad(where, "the data and min/max leave no finite range to draw (lo " + g(a.lo) + ", hi " +
                   g(a.hi) + "); set min and max");
}

// 0: the series differ somewhere; 1: equal within float noise; 2: within
// kCoincideShare of the drawn y range at every point (one draws over the other).
int coincidence(const SeriesSpec& a, const SeriesSpec& b, const AxisSpec& y) {
  if (a.points.empty() || a.points.size() != b.points.size()) return 0;
  auto sorted = [](std::vector<std::pair<double, double>> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  const auto pa = sorted(a.points), pb = sorted(b.points);
  const double span = to_axis(y.hi, y) - to_axis(y.lo, y);
  bool exact = true;
  for (std::size_t i = 0; i < pa.size(); ++i) {
    const auto [xa, ya] = pa[i];
    const auto [xb, yb] = pb[i];
    const double tiny = 1e-9 * std::max({std::fabs(xa), std::fabs(xb), 1e-300});
    if (std::fabs(xa - xb) > tiny) return 0;
    if (std::fabs(ya - yb) > 1e-9 * std::max({std::fabs(ya), std::fabs(yb), 1e-300})) exact = false;
    if (std::fabs(to_axis(ya, y) - to_axis(yb, y)) > kCoincideShare * span) return 0;
  }
  return exact ? 1 : 2;
}

void note_coincident(PanelSpec& r) {
  for (std::size_t i = 0; i < r.series.size(); ++i) {
    auto& s = r.series[i];
    // A hollow series is an outline drawn around another on purpose
    // (published around ours, simulated around analytic): both stay visible.
    if (s.name.empty() || !s.legend || s.hollow) continue;
    for (std::size_t j = i + 1; j < r.series.size(); ++j) {
      const auto& t = r.series[j];
      if (t.name.empty() || t.hollow) continue;
      const int c = coincidence(s, t, r.y);
      if (c == 0) continue;
      s.name += (c == 1 ? " (= " : " (\u2248 ") + t.name + " here)";
      s.covered = true;
      break;
    }
  }
}

PanelSpec read_panel(const json& p, std::size_t index) {
  const std::string where = "panels[" + std::to_string(index) + "]";
  if (!p.is_object()) bad(where, "must be an object");
  PanelSpec r;
  r.title = text(p, "title", "", where);
  r.legend = text(p, "legend", "bottom", where);
  if (r.legend != "right" && r.legend != "none") r.legend = "bottom";
  r.x = read_axis(p, "x", where);
  r.y = read_axis(p, "y", where);
  std::size_t total = 0;
  if (p.contains("series")) {
    const auto& ss = p.at("series");
    if (!ss.is_array() || ss.size() > kMaxSeries)
      bad(where, "'series' must be an array of at most " + std::to_string(kMaxSeries));
    for (std::size_t i = 0; i < ss.size(); ++i)
      r.series.push_back(
          read_series(ss[i], where + ".series[" + std::to_string(i) + "]", r.x, r.y, total));
  }
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  for (const auto& s : r.series)
    for (const auto& [px, py] : s.points) {
      xlo = std::min(xlo, px);
      xhi = std::max(xhi, px);
      ylo = std::min(ylo, py);
      yhi = std::max(yhi, py);
    }
  if (!std::isfinite(xlo)) {  // no data: a unit range keeps the axes drawable
    xlo = r.x.log ? 1 : 0;
    xhi = r.x.log ? 10 : 1;
    ylo = r.y.log ? 1 : 0;
    yhi = r.y.log ? 10 : 1;
  }
  resolve_range(r.x, xlo, xhi, 0.04, where + ".x");
  resolve_range(r.y, ylo, yhi, 0.06, where + ".y");
  note_coincident(r);
  return r;
}

}  // namespace

double to_axis(double v, const AxisSpec& a) {
  return a.log ? std::log(v) / std::log(a.base) : v;
}

Spec resolve_spec(const json& spec) {
  if (!spec.is_object()) throw SpecError("spec: the top level must be a JSON object");
  Spec s;
  s.title = text(spec, "title", "", "top level");
  s.note = text(spec, "note", "", "top level");
  s.width = integer(spec, "width", 1500, 200, 8000, "top level");
  s.height = integer(spec, "height", 900, 150, 8000, "top level");
  s.columns = integer(spec, "columns", 2, 1, static_cast<int>(kMaxPanels), "top level");
  if (!spec.contains("panels") || !spec.at("panels").is_array() || spec.at("panels").empty() ||
      spec.at("panels").size() > kMaxPanels)
    throw SpecError("spec: panels must be a non-empty array of at most " +
                    std::to_string(kMaxPanels));
  const auto& panels = spec.at("panels");
  for (std::size_t i = 0; i < panels.size(); ++i) s.panels.push_back(read_panel(panels[i], i));
  s.columns = std::min(s.columns, static_cast<int>(s.panels.size()));
  return s;
}

}  // namespace ringsim::plot
