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
  std::string unit;  // tick labels' unit: bytes | tokens | s | % | x | "" (ticks.hpp)
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
  // Set when a later series is drawn over this one at every point (see
  // resolve_spec): the name then carries "(= other here)" or "(≈ other here)"
  // and the renderer draws this series' markers larger so they ring the other's.
  bool covered = false;
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
// Series that would hide each other are found from the data: a named series
// whose points a later one repeats (same x values; every y equal to 1e-9
// relative, or within kCoincideShare of the drawn y range; neither hollow,
// since a hollow outline around a point is drawn to show both) gets
// "(= later here)" or "(≈ later here)" appended to its name and `covered` set.
Spec resolve_spec(const nlohmann::json& spec);
inline constexpr double kCoincideShare = 0.01;

// A value's position on its axis (log_base on a log axis).
double to_axis(double v, const AxisSpec& a);

}  // namespace ringsim::plot
