#pragma once
// A chart described as data, rendered by the separate `ringsim-plot` program
// (Qt 6 Charts, offscreen) so the ringsim CLI itself never links Qt.
// Schema (docs: experiments/README.md, "Plot spec"):
//   {"title", "width", "height", "columns", "note",
//    "panels": [{"title", "legend": "bottom|right|top|none",
//                "x": {"label", "unit", "log", "base", "min", "max", "categories": [..]},
//                "y": {...},
//                "series": [{"name", "type": "line|scatter", "dash", "markers",
//                            "color", "marker", "hollow", "width", "points": [[x, y], ...]}]}]}
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ringsim::exp {

struct Axis {
  std::string label;  // with the unit, e.g. "block size c (tokens)"
  // What the tick labels carry (experiments/plot/ticks.hpp): "bytes" (KiB,
  // MiB, ... binary), "tokens" (binary K/M: 32K = 32768, as the CLI reads
  // them), "s" (ns/us/ms/s), "%", "x" (a ratio) or "" for a plain count.
  std::string unit;
  bool log = false;
  int base = 10;                        // log base (2 for block sizes)
  std::optional<double> min, max;       // default: fit the data
  std::vector<std::string> categories;  // categorical axis: x = 0, 1, 2, ...
};

struct Series {
  std::string name;
  std::string type = "line";      // line | scatter
  bool dash = false;              // dashed line (references, bounds)
  bool markers = true;            // points drawn on a line
  bool legend = true;             // false: drawn without a legend entry
  bool hollow = false;            // scatter: a large outline (a reference around ours)
  std::string color;              // "#rrggbb"; empty = palette by order
  std::string marker = "circle";  // circle | square | triangle | star | diamond
  double width = 2.0;
  std::vector<std::pair<double, double>> points;
};

struct Panel {
  std::string title;
  std::string legend = "bottom";
  Axis x, y;
  std::vector<Series> series;
};

struct PlotSpec {
  std::string title, note;
  int width = 1500, height = 900, columns = 2;
  std::vector<Panel> panels;
  bool empty() const { return panels.empty(); }
};

nlohmann::json to_json(const PlotSpec& p);

// Builders that name what they set (no partial aggregate initialisation).
Series line_series(std::string name, std::string color, bool dash = false);
Series scatter_series(std::string name, std::string color, std::string marker = "circle");
Axis make_axis(std::string label, bool log = false, int base = 10);
Axis make_axis(std::string label, bool log, int base, double min, double max);
// The same with the tick unit set (see Axis::unit).
Axis unit_axis(std::string label, std::string unit, bool log = false, int base = 10);

// Log when the data spans more than `decades` powers of ten (all > 0):
// a linear axis would squash all but the largest series onto the floor.
bool spans_decades(const std::vector<Series>& series, bool y, double decades = 2);

// One style table for every experiment and panel: a layout (ring, striped,
// zigzag, ulysses, allgather, hybrid), a device family (A100, H100, TPU v4,
// TPU v5p) or a reference (published, bound) keeps its colour, marker and
// dash everywhere. Colours: Okabe & Ito, "Color Universal Design" (2008),
// the 8-colour palette safe for colour-blind readers.
struct Style {
  std::string color, marker;
  bool dash = false;
};
// The style of `key`; throws std::out_of_range for a key not in the table
// (so a typo cannot silently pick another colour).
const Style& style_for(const std::string& key);
bool has_style(const std::string& key);
// A line series in `key`'s style (colour, marker, dash).
Series styled_line(std::string name, const std::string& key);

// Series without a fixed meaning (context lengths, kernels) take the
// palette by their index in the panel.
std::string palette_color(std::size_t i);
std::string color_for(const std::string& key, std::size_t fallback_index);

// Renders `spec_path` (JSON) to `png_path` and, beside it, the same plot as
// SVG (png_path with .svg) with `plotter`. Returns "" on success, else one
// line saying why the plot was skipped.
std::string render_plot(const std::string& plotter, const std::string& spec_path,
                        const std::string& png_path);

}  // namespace ringsim::exp
