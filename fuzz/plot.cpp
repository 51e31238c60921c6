// Fuzz target: the plot spec (experiments/plot/spec.hpp), what `ringsim-plot
// SPEC OUT` reads before it hands anything to Qt Charts. The sanitizer build
// does not link Qt, so the target holds the reader to what the renderer
// assumes instead: an accepted spec has sizes and counts in their budgets,
// every axis a finite range with lo < hi (> 0 on a log axis) and a bounded
// number of log ticks, every point finite and drawable on its axes.
#include <cmath>
#include <nlohmann/json.hpp>

#include "experiments/plot/spec.hpp"
#include "experiments/plot/ticks.hpp"
#include "fuzz/target.hpp"

namespace ringsim::fuzz {

namespace {

void check_axis(const plot::AxisSpec& a) {
  if (a.base < 2 || a.base > 100) finding("plot: base out of range");
  if (!a.categories.empty()) return;
  if (!std::isfinite(a.lo) || !std::isfinite(a.hi) || !(a.lo < a.hi) || !std::isfinite(a.hi - a.lo))
    finding("plot: axis range not finite or empty");
  if (a.log) {
    if (!(a.lo > 0)) finding("plot: log axis range not positive");
    if (plot::log_ticks(a.lo, a.hi, a.base).size() > 40) finding("plot: too many log ticks");
    if (!std::isfinite(plot::to_axis(a.lo, a)) || !std::isfinite(plot::to_axis(a.hi, a)))
      finding("plot: log axis ends not finite");
  }
}

void check(const plot::Spec& s) {
  if (s.width < 200 || s.width > 8000 || s.height < 150 || s.height > 8000)
    finding("plot: image size out of range");
  if (s.panels.empty() || s.panels.size() > plot::kMaxPanels) finding("plot: panel count");
  if (s.columns < 1 || s.columns > static_cast<int>(s.panels.size())) finding("plot: columns");
  for (const auto& p : s.panels) {
    if (p.legend != "bottom" && p.legend != "right" && p.legend != "none")
      finding("plot: legend placement");
    check_axis(p.x);
    check_axis(p.y);
    std::size_t total = 0;
    for (const auto& se : p.series) {
      if (se.type != "line" && se.type != "scatter") finding("plot: series type");
      if (!(se.width >= 0.1 && se.width <= 20)) finding("plot: pen width");
      total += se.points.size();
      for (const auto& [x, y] : se.points) {
        if (!std::isfinite(x) || !std::isfinite(y)) finding("plot: point not finite");
        if ((p.x.log && x <= 0) || (p.y.log && y <= 0)) finding("plot: point off its log axis");
        if (!std::isfinite(plot::to_axis(x, p.x)) || !std::isfinite(plot::to_axis(y, p.y)))
          finding("plot: point not finite on its axes");
      }
    }
    if (total > plot::kMaxPanelPoints) finding("plot: point budget");
  }
}

}  // namespace

int plot(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // As ringsim-plot reads it: not JSON is refused before the reader runs.
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return 0;
  try {
    check(plot::resolve_spec(j));
  } catch (const plot::SpecError& e) {
    check_message("plot", e.what(), false);
  }
  return 0;
}

}  // namespace ringsim::fuzz

RINGSIM_FUZZ_ENTRY(plot)
