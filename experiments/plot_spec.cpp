#include "experiments/plot_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "proc/child.hpp"

namespace ringsim::exp {

namespace {
nlohmann::json axis_json(const Axis& a) {
  nlohmann::json j{{"label", a.label}, {"log", a.log}, {"base", a.base}};
  if (!a.unit.empty()) j["unit"] = a.unit;
  if (a.min) j["min"] = *a.min;
  if (a.max) j["max"] = *a.max;
  if (!a.categories.empty()) j["categories"] = a.categories;
  return j;
}
}  // namespace

Series line_series(std::string name, std::string color, bool dash) {
  Series s;
  s.name = std::move(name);
  s.color = std::move(color);
  s.dash = dash;
  s.markers = !dash;
  return s;
}

Series scatter_series(std::string name, std::string color, std::string marker) {
  Series s;
  s.name = std::move(name);
  s.type = "scatter";
  s.color = std::move(color);
  s.marker = std::move(marker);
  return s;
}

Axis make_axis(std::string label, bool log, int base) {
  Axis a;
  a.label = std::move(label);
  a.log = log;
  a.base = base;
  return a;
}

Axis make_axis(std::string label, bool log, int base, double min, double max) {
  Axis a = make_axis(std::move(label), log, base);
  a.min = min;
  a.max = max;
  return a;
}

nlohmann::json to_json(const PlotSpec& p) {
  nlohmann::json panels = nlohmann::json::array();
  for (const auto& pn : p.panels) {
    nlohmann::json series = nlohmann::json::array();
    for (const auto& s : pn.series) {
      nlohmann::json pts = nlohmann::json::array();
      for (const auto& [x, y] : s.points) pts.push_back({x, y});
      series.push_back({{"name", s.name},
                        {"type", s.type},
                        {"dash", s.dash},
                        {"markers", s.markers},
                        {"legend", s.legend},
                        {"hollow", s.hollow},
                        {"color", s.color},
                        {"marker", s.marker},
                        {"width", s.width},
                        {"points", pts}});
    }
    panels.push_back({{"title", pn.title},
                      {"legend", pn.legend},
                      {"x", axis_json(pn.x)},
                      {"y", axis_json(pn.y)},
                      {"series", series}});
  }
  return {
      {"schema", "ringsim-plot-1"}, {"title", p.title},     {"note", p.note},  {"width", p.width},
      {"height", p.height},         {"columns", p.columns}, {"panels", panels}};
}

const std::vector<std::string>& palette() {
  // Okabe-Ito (Okabe & Ito 2008, readable by colour-blind readers), then two
  // darker extras for panels with more than eight series.
  static const std::vector<std::string> p{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00",
                                          "#56B4E9", "#000000", "#882255", "#7F7F7F", "#B8A000"};
  return p;
}

namespace {
// The one table (see plot_spec.hpp). Layouts take the seven distinct
// Okabe-Ito colours but yellow (too faint on white), each with its own marker
// so two layouts whose lines coincide stay apart. Device families take no
// colour of their own, only a marker and dash: in a panel where colour means
// the layout, the device is the line style. References are greys.
const std::map<std::string, Style>& styles() {
  static const std::map<std::string, Style> t{
      {"ring", {"#0072B2", "circle", false}},      // blue
      {"striped", {"#E69F00", "square", false}},   // orange
      {"zigzag", {"#009E73", "triangle", true}},   // bluish green, dashed
      {"ulysses", {"#CC79A7", "diamond", false}},  // reddish purple
      {"allgather", {"#D55E00", "star", false}},   // vermillion
      {"hybrid", {"#000000", "pentagon", false}},  // black
      {"A100", {"", "circle", false}},             // device families:
      {"H100", {"", "square", false}},             //   marker and dash only
      {"TPU v4", {"", "diamond", true}},
      {"TPU v5p", {"", "triangle", true}},
      {"published", {"#555555", "star", false}},  // dark grey, hollow star
      {"bound", {"#999999", "circle", true}}};    // light grey, dashed
  return t;
}
}  // namespace

const Style& style_for(const std::string& key) {
  return styles().at(key);
}

bool has_style(const std::string& key) {
  return styles().count(key) > 0;
}

Series styled_line(std::string name, const std::string& key) {
  const Style& st = style_for(key);
  Series s = line_series(std::move(name), st.color, st.dash);
  s.marker = st.marker;
  s.markers = true;
  return s;
}

bool spans_decades(const std::vector<Series>& series, bool y, double decades) {
  double lo = 0, hi = 0;
  bool any = false;
  for (const auto& s : series)
    for (const auto& [px, py] : s.points) {
      const double v = y ? py : px;
      if (!(v > 0)) return false;  // a log axis cannot show it
      lo = any ? std::min(lo, v) : v;
      hi = any ? std::max(hi, v) : v;
      any = true;
    }
  return any && hi / lo > std::pow(10.0, decades);
}

Axis unit_axis(std::string label, std::string unit, bool log, int base) {
  Axis a = make_axis(std::move(label), log, base);
  a.unit = std::move(unit);
  return a;
}

std::string palette_color(std::size_t i) {
  return palette()[i % palette().size()];
}

std::string color_for(const std::string& key, std::size_t fallback_index) {
  if (has_style(key) && !style_for(key).color.empty()) return style_for(key).color;
  return palette_color(fallback_index);
}

std::string render_plot(const std::string& plotter, const std::string& spec_path,
                        const std::string& png_path) {
  if (plotter.empty())
    return "ringsim-plot was not found next to the ringsim binary (it is built only with "
           "RINGSIM_GUI=ON and Qt 6 Charts, Debian package qt6-charts-dev)";
  // The SVG sits beside the PNG: plot.png -> plot.svg.
  std::string svg_path = png_path;
  if (const auto dot = svg_path.rfind('.');
      dot != std::string::npos && svg_path.find('/', dot) == std::string::npos)
    svg_path.erase(dot);
  svg_path += ".svg";
  proc::Command c;
  c.argv = {plotter, spec_path, png_path, svg_path};
  c.timeout_s = 120;
  const auto r = proc::run(c);
  if (r.timed_out) return "ringsim-plot did not finish within 120 s";
  if (!r.ok()) return "ringsim-plot failed (" + r.failure() + ")";
  return "";
}

}  // namespace ringsim::exp
