#pragma once
// A plot spec (schema ringsim-plot-1, experiments/README.md) read and checked
// into what ringsim-plot draws, in plain C++ (no Qt): every field typed and in
// range, points a log axis cannot show dropped, and each axis's final range
// finite with lo < hi. The renderer (chart.cpp) draws only a resolved spec, so
// what the checks here accept is what Qt is handed; `fuzz_plot` holds them to it.
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ringsim::plot {

struct SpecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Budgets: a person reads the plot, so past these it is no plot.
inline constexpr std::size_t kMaxPanels = 64, kMaxSeries = 64, kMaxCategories = 1000;
inline constexpr std::size_t kMaxPanelPoints = 100000, kMaxText = 2000;

struct AxisSpec {
  std::string label;
  bool log = false;
  int base = 10;
  std::vector<std::string> categories;
  double lo = 0, hi = 0;  // data values (not log-transformed), resolved: finite, lo < hi
  bool has_min = false, has_max = false;
};

struct SeriesSpec {
  std::string name, type = "line", color = "#333333", marker = "circle";
  bool dash = false, markers = true, hollow = false, legend = true;
  double width = 2;
  std::vector<std::pair<double, double>> points;  // data values that the axes can show
};

struct PanelSpec {
  std::string title, legend = "bottom";  // bottom | right | none
  AxisSpec x, y;
  std::vector<SeriesSpec> series;
};

struct Spec {
  std::string title, note;
  int width = 1500, height = 900, columns = 2;
  std::vector<PanelSpec> panels;
};

// Throws SpecError naming the field ("spec: panels[0].y: ...").
Spec resolve_spec(const nlohmann::json& spec);

// A value's position on its axis (log_base on a log axis).
double to_axis(double v, const AxisSpec& a);

}  // namespace ringsim::plot
