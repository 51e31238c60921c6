#include "cli/validate_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace ringsim::cli {

namespace {

// One square panel with the same log scale on both axes.
struct Panel {
  double x0, y0, size;
  double lo, hi;  // the axes' range (values)
  double px(double v) const { return x0 + frac(v) * size; }
  double py(double v) const { return y0 + size - frac(v) * size; }
  double frac(double v) const {
    return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  }
};

// Decades for the absolute metrics ("1e3"); steps of 0.25 for ratios ("1.25").
std::vector<std::pair<double, std::string>> ticks(const Panel& p, bool decades) {
  std::vector<std::pair<double, std::string>> t;
  if (decades) {
    for (double d = std::round(std::log10(p.lo)); d <= std::log10(p.hi) + 1e-9; ++d)
      t.emplace_back(std::pow(10.0, d), fmt::format("1e{:.0f}", d));
  } else {
    for (double v = std::ceil(p.lo * 4 - 1e-9) / 4; v <= p.hi + 1e-9; v += 0.25)
      t.emplace_back(v, fmt::format("{:g}", v));
  }
  return t;
}

// A panel's range: whole decades, or for ratios 10% beyond the points on
// each side, out to the next quarter (no point sits on the frame).
Panel fit_panel(double x0, double y0, double size, const std::vector<const ValidationRow*>& rows,
                bool decades) {
  double lo = 1e300, hi = 0;
  for (const auto* r : rows) {
    lo = std::min({lo, r->c->published, r->predicted});
    hi = std::max({hi, r->c->published, r->predicted});
  }
  if (decades) {
    const double l0 = std::floor(std::log10(lo)), l1 = std::max(l0 + 1, std::ceil(std::log10(hi)));
    return {x0, y0, size, std::pow(10.0, l0), std::pow(10.0, l1)};
  }
  double a = std::floor(lo * 0.9 * 4) / 4;
  if (a <= 0) a = lo * 0.9;  // a ratio below 0.28: the log axis needs a positive start
  return {x0, y0, size, a, std::max(std::ceil(hi * 1.1 * 4) / 4, a + 0.5)};
}

void draw_frame(std::string& s, const Panel& p, bool decades, const std::string& xlabel,
                const std::string& title) {
  s += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", p.x0,
      p.y0, p.size, p.size);
  if (!title.empty())
    s += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", p.x0, p.y0 - 8, title);
  for (const auto& [v, label] : ticks(p, decades)) {
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", p.px(v),
                     p.y0 + p.size + 18, label);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", p.x0 - 6,
                     p.py(v) + 4, label);
  }
  s += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n<text "
      "transform=\"translate({},{}) rotate(-90)\" text-anchor=\"middle\">predicted</text>\n",
      p.x0 + p.size / 2, p.y0 + p.size + 40, xlabel, p.x0 - 50, p.y0 + p.size / 2);
}

// y = k x, clipped to the panel.
void draw_line(std::string& s, const Panel& p, double k, const char* style) {
  const double a = p.lo, b = p.hi;
  s += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#999\" {}/>\n",
      p.px(k >= 1 ? a : a / k), p.py(k >= 1 ? a * k : a), p.px(k >= 1 ? b / k : b),
      p.py(k >= 1 ? b : b * k), style);
}

void draw_points(std::string& s, const Panel& p, const std::vector<const ValidationRow*>& rows,
                 const std::map<std::string, const char*>& colour) {
  draw_line(s, p, 1, "");
  draw_line(s, p, 1.20, "stroke-dasharray=\"4 4\"");
  draw_line(s, p, 1 / 1.20, "stroke-dasharray=\"4 4\"");
  for (const auto* r : rows)
    s += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\" fill-opacity=\"0.8\"><title>{}: "
        "{:+.1f}%</title></circle>\n",
        p.px(r->c->published), p.py(r->predicted), colour.at(r->c->source), r->c->id,
        100 * r->error());
}

// The signed error of every case (refused ones at -100%, an x), one column
// per source in the file's order, the +-20% band shaded: the panel that
// shows how far off each case is, which the log-log panels squeeze into a
// hair. Filled: within tolerance; hollow: a stated finding; red ring: out
// and unstated. Returns the panel's height with its labels.
double draw_error_panel(std::string& s, double x0, double y0, double w,
                        const std::vector<const ValidationRow*>& rows, const ValidationSet& set,
                        const std::map<std::string, const char*>& colour) {
  std::vector<std::string> ids;
  std::map<std::string, std::vector<const ValidationRow*>> by;
  for (const auto& src : set.sources)
    for (const auto* r : rows)
      if (r->c->source == src.id) by[src.id].push_back(r);
  for (const auto& src : set.sources)
    if (by.count(src.id)) ids.push_back(src.id);
  if (ids.empty()) return 0;
  const double h = 260, col = std::max(18.0, w / static_cast<double>(ids.size()));
  const double width = col * static_cast<double>(ids.size());
  auto py = [&](double e) { return y0 + h / 2 - std::clamp(e, -1.0, 1.0) * h / 2; };
  s += fmt::format(
      "<text x=\"{}\" y=\"{}\">signed error per case (predicted / published - 1; "
      "shaded: +-20%; filled: within, hollow: a stated finding, x: refused)</text>\n",
      x0, y0 - 8);
  s += fmt::format(
      "<rect x=\"{}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
      "fill=\"#e8f5e9\"/>\n",
      x0, py(0.2), width, py(-0.2) - py(0.2));
  s += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"none\" "
      "stroke=\"#666\"/>\n",
      x0, y0, width, h);
  for (int t = -5; t <= 5; ++t) {
    const double e = t / 5.0;
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:+.0f}%</text>\n", x0 - 6,
                     py(e) + 4, 100 * e);
    if (t == 0)
      s += fmt::format(
          "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
          "stroke=\"#999\"/>\n",
          x0, py(0), x0 + width, py(0));
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const double cx = x0 + (static_cast<double>(i) + 0.5) * col;
    const auto& list = by.at(ids[i]);
    for (std::size_t k = 0; k < list.size(); ++k) {
      const auto* r = list[k];
      const double x = cx + (static_cast<double>(k % 7) - 3) * col / 9;
      const char* c = colour.at(r->c->source);
      const auto status = r->status();
      if (!r->refused.empty()) {
        s += fmt::format(
            // The title beside the text, in a group: inside <text>, a renderer
            // of SVG Tiny (Qt Svg: --plot x.png) draws it as text.
            "<g><title>{}: refused</title><text x=\"{:.1f}\" y=\"{:.1f}\" "
            "text-anchor=\"middle\" fill=\"{}\">x</text></g>\n",
            r->c->id, x, py(-1) + 4, c);
        continue;
      }
      s += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\" stroke=\"{}\">"
          "<title>{} ({}): {:+.1f}%</title></circle>\n",
          x, py(r->error()), status == "ok" ? c : "none", status == "OUT" ? "#d00" : c, r->c->id,
          r->klass, 100 * r->error());
    }
    s += fmt::format(
        "<text transform=\"translate({:.1f},{:.1f}) rotate(-60)\" "
        "text-anchor=\"end\" font-size=\"10\">{}</text>\n",
        cx + 3, y0 + h + 10, ids[i]);
  }
  return h + 175;  // the rotated source names (up to ~27 characters) below
}

}  // namespace

std::string validation_plot_svg(const std::vector<ValidationRow>& rows, const ValidationSet& set) {
  const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  std::vector<const ValidationRow*> absolute, ratio, signed_error;
  // Fits cases are yes/no, and a refused run has no value: neither is a point
  // of the log-log panels; a refused run is an x in the error panel.
  for (const auto& r : rows) {
    if (metric_is_fits(r.c->metric)) continue;
    if (!metric_is_memory(r.c->metric)) signed_error.push_back(&r);
    if (r.predicted > 0) (metric_is_ratio(r.c->metric) ? ratio : absolute).push_back(&r);
  }
  const double M = 80, P = 460, Q = 300;
  // The absolute panel first, the ratio panel to its right; the legend after both.
  double x = M;
  std::string body;
  std::map<std::string, const char*> colour;
  for (std::size_t i = 0; i < set.sources.size(); ++i)
    colour[set.sources[i].id] = colours[i % std::size(colours)];
  if (!absolute.empty()) {
    const auto p = fit_panel(x, M, P, absolute, true);
    draw_frame(body, p, true, "published (each case's unit: tokens/s/GPU, TFLOP/s/GPU or seconds)",
               "");
    draw_points(body, p, absolute, colour);
    x += P + M + 20;
  }
  if (!ratio.empty()) {
    const auto p = fit_panel(x, M, Q, ratio, false);
    draw_frame(body, p, false, "published speedup (x)",
               fmt::format("ratios: speedup over a baseline run, {} cases", ratio.size()));
    draw_points(body, p, ratio, colour);
    x += Q + 20;
  }
  const double below =
      draw_error_panel(body, M, 660, std::max(x - M - 20, 400.0), signed_error, set, colour);
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n<text x=\"{}\" y=\"30\" font-size=\"15\">ringsim validate: predicted "
      "against published, {} cases (dashed: +-20%)</text>\n",
      x + 220, 620 + (below > 0 ? below + 40 : 0), M, rows.size());
  s += body;
  for (std::size_t i = 0; i < set.sources.size(); ++i) {
    const double y = M + 10 + 20 * static_cast<double>(i);
    s += fmt::format(
        "<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n", x,
        y - 4, colour.at(set.sources[i].id), x + 12, y, set.sources[i].id);
  }
  return s + "</svg>\n";
}

}  // namespace ringsim::cli
