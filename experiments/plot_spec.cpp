#include "experiments/plot_spec.hpp"

#include <fmt/format.h>

#include <map>

#include "proc/child.hpp"

namespace ringsim::exp {

namespace {
nlohmann::json axis_json(const Axis& a) {
  nlohmann::json j{{"label", a.label}, {"log", a.log}, {"base", a.base}};
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
  // Okabe-Ito (readable by colour-blind readers), then two darker extras.
  static const std::vector<std::string> p{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00",
                                          "#56B4E9", "#000000", "#882255", "#7F7F7F", "#B8A000"};
  return p;
}

std::string palette_color(std::size_t i) {
  return palette()[i % palette().size()];
}

std::string color_for(const std::string& key, std::size_t fallback_index) {
  // Layouts keep one colour in every plot.
  static const std::map<std::string, std::string> fixed{
      {"ring", "#0072B2"},      {"striped", "#E69F00"},   {"zigzag", "#009E73"},
      {"ulysses", "#CC79A7"},   {"allgather", "#D55E00"}, {"hybrid", "#56B4E9"},
      {"published", "#000000"}, {"bound", "#7F7F7F"}};
  if (auto it = fixed.find(key); it != fixed.end()) return it->second;
  return palette_color(fallback_index);
}

std::string render_plot(const std::string& plotter, const std::string& spec_path,
                        const std::string& png_path) {
  if (plotter.empty())
    return "ringsim-plot was not found next to the ringsim binary (it is built only with "
           "RINGSIM_GUI=ON and Qt 6 Charts, Debian package qt6-charts-dev)";
  proc::Command c;
  c.argv = {plotter, spec_path, png_path};
  c.timeout_s = 120;
  const auto r = proc::run(c);
  if (r.timed_out) return "ringsim-plot did not finish within 120 s";
  if (!r.ok()) return "ringsim-plot failed (" + r.failure() + ")";
  return "";
}

}  // namespace ringsim::exp
