#include "experiments/plot/chart.hpp"

#include <QApplication>
#include <QBuffer>
#include <QFontMetricsF>
#include <QGraphicsScene>
#include <QPainter>
#include <QPainterPath>
#include <QSvgGenerator>
#include <QtCharts/QCategoryAxis>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <cmath>
#include <limits>
#include <memory>

#include "experiments/plot/ticks.hpp"

namespace ringsim::plot {

namespace {

using nlohmann::json;

QFont font_px(int px, bool bold = false) {
  QFont f = QApplication::font();
  f.setPixelSize(px);
  f.setBold(bold);
  return f;
}

// The axis as drawn: categories and log scales become QCategoryAxis with
// labels on values, linear scales a QValueAxis.
QAbstractAxis* make_axis(const AxisSpec& a, bool horizontal, int panel_px) {
  QAbstractAxis* axis = nullptr;
  if (!a.categories.empty()) {
    auto* c = new QCategoryAxis;
    c->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    for (std::size_t i = 0; i < a.categories.size(); ++i) {
      // Multi-line labels are rich text: centre each line under its tick.
      // Each line is plain text (escaped: Qt Charts renders labels as rich
      // text, and a label's markup, an <img src=...>, would be loaded).
      const auto lines = QString::fromStdString(a.categories[i]).split("<br>");
      QStringList plain;
      for (const auto& line : lines) plain << line.toHtmlEscaped();
      const auto text = lines.size() == 1
                            ? plain.front()
                            : "<div align=\"center\">" + plain.join("<br>") + "</div>";
      c->append(text, static_cast<double>(i));
    }
    c->setRange(-0.6, static_cast<double>(a.categories.size()) - 0.4);
    if (horizontal) {
      // Rotate only when the widest line of the labels would collide
      // (about 6.5 px per character at 12 px; "<br>" breaks a label).
      std::size_t longest = 0;
      for (const auto& s : a.categories) {
        std::size_t from = 0;
        while (from <= s.size()) {
          const auto br = s.find("<br>", from);
          const auto end = br == std::string::npos ? s.size() : br;
          longest = std::max(longest, end - from);
          if (br == std::string::npos) break;
          from = br + 4;
        }
      }
      // Rotated labels are still cut at the category's width unless told
      // not to (QAbstractAxis::truncateLabels): "MI30...". Steeper for many.
      if (6.5 * static_cast<double>(longest * a.categories.size()) > 0.8 * panel_px) {
        c->setLabelsAngle(a.categories.size() > 12 ? -60 : -35);
        c->setTruncateLabels(false);
      }
    }
    axis = c;
  } else {
    // Log and linear scales alike carry our ticks (ticks.hpp), so every
    // label has its unit ("1 GiB", "32K", "2 ms") and the tests see them.
    auto* c = new QCategoryAxis;
    c->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    const auto ticks = a.log ? log_ticks(a.lo, a.hi, a.base, 12, a.unit)
                             : linear_ticks(a.lo, a.hi, horizontal ? 7 : 8, a.unit);
    for (const auto& t : ticks) c->append(QString::fromStdString(t.label), t.at);
    c->setRange(to_axis(a.lo, a), to_axis(a.hi, a));
    // A label is a value, never elided to "...": Qt cuts one that is wider
    // than the category's share of the axis (a narrow panel's "1.2K").
    c->setTruncateLabels(false);
    axis = c;
  }
  axis->setTitleText(QString::fromStdString(a.label).toHtmlEscaped());
  axis->setTitleFont(font_px(14));
  axis->setLabelsFont(font_px(12));
  axis->setGridLineColor(QColor(225, 225, 225));
  return axis;
}

QScatterSeries::MarkerShape marker_shape(const std::string& m) {
  if (m == "square") return QScatterSeries::MarkerShapeRectangle;
  if (m == "diamond") return QScatterSeries::MarkerShapeRotatedRectangle;
  if (m == "triangle") return QScatterSeries::MarkerShapeTriangle;
  if (m == "star") return QScatterSeries::MarkerShapeStar;
  if (m == "pentagon") return QScatterSeries::MarkerShapePentagon;
  return QScatterSeries::MarkerShapeCircle;
}

// `text` broken at blanks into lines no wider than `width` px in `font`
// (a word wider than that stays whole on its own line). A chart title wider
// than its panel is cut by Qt Charts, at both ends when centred.
QStringList wrap_lines(const QString& text, const QFont& font, double width) {
  const QFontMetricsF fm(font);
  QStringList lines;
  QString line;
  for (const auto& word : text.split(' ', Qt::SkipEmptyParts)) {
    const QString next = line.isEmpty() ? word : line + ' ' + word;
    if (!line.isEmpty() && fm.horizontalAdvance(next) > width) {
      lines << line;
      line = word;
    } else {
      line = next;
    }
  }
  if (!line.isEmpty()) lines << line;
  return lines;
}

QChart* build_panel(const PanelSpec& p, int panel_px) {
  const AxisSpec &x = p.x, &y = p.y;
  auto* chart = new QChart;
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->setBackgroundRoundness(0);
  chart->setBackgroundBrush(Qt::white);
  chart->setBackgroundPen(Qt::NoPen);
  chart->setMargins(QMargins(6, 6, 10, 6));
  // The title as lines that fit the panel (Qt Charts' title is rich text).
  const QFont title_font = font_px(15, true);
  QStringList title_lines;
  for (const auto& l : wrap_lines(QString::fromStdString(p.title), title_font, panel_px - 24))
    title_lines << l.toHtmlEscaped();
  chart->setTitle(title_lines.join("<br>"));
  chart->setTitleFont(title_font);
  auto* ax = make_axis(x, true, panel_px);
  auto* ay = make_axis(y, false, panel_px);
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(ay, Qt::AlignLeft);

  for (const auto& d : p.series) {
    const QColor color(QString::fromStdString(d.color));
    QXYSeries* xy = nullptr;
    if (d.type == "scatter") {
      auto* sc = new QScatterSeries;
      sc->setMarkerShape(marker_shape(d.marker));
      if (d.hollow) {
        // An outline around the filled marker of the same point (published
        // vs ours) keeps both visible where they coincide.
        sc->setMarkerSize(18);
        sc->setBrush(Qt::NoBrush);
        QPen pen(color);
        pen.setWidthF(2.2);
        sc->setPen(pen);
      } else {
        sc->setMarkerSize(d.covered ? 16 : 11);
        sc->setColor(color);
        sc->setBorderColor(color.darker(130));
      }
      xy = sc;
    } else {
      auto* ln = new QLineSeries;
      QPen pen(color);
      pen.setWidthF(d.width);
      if (d.dash) pen.setStyle(Qt::DashLine);
      ln->setPen(pen);
      xy = ln;
    }
    xy->setName(QString::fromStdString(d.name).toHtmlEscaped());
    // One bulk replace: append() per point signals the chart each time, and
    // 20,000 points took 12 s, growing faster than linearly.
    QList<QPointF> on_axes;
    on_axes.reserve(static_cast<qsizetype>(d.points.size()));
    for (const auto& [px, py] : d.points) on_axes.append(QPointF(to_axis(px, x), to_axis(py, y)));
    xy->replace(on_axes);
    chart->addSeries(xy);
    xy->attachAxis(ax);
    xy->attachAxis(ay);
    if (d.type == "line" && d.markers) {
      // Qt draws line points as circles only; a scatter twin carries the shape.
      auto* dots = new QScatterSeries;
      dots->setMarkerShape(marker_shape(d.marker));
      // A covered series (resolve_spec) rings the markers drawn over it.
      dots->setMarkerSize(d.covered ? 14 : 8);
      dots->setColor(color);
      dots->setBorderColor(color.darker(130));
      dots->replace(on_axes);
      chart->addSeries(dots);
      dots->attachAxis(ax);
      dots->attachAxis(ay);
    }
  }
  // The legend is drawn by draw_legend (wrapping, never elided).
  chart->legend()->hide();
  return chart;
}

struct LegendEntry {
  QString name;
  QColor color;
  bool line = true, dash = false, markers = false, hollow = false;
  std::string marker = "circle";
  double width = 2;
};

std::vector<LegendEntry> legend_entries(const PanelSpec& panel) {
  std::vector<LegendEntry> out;
  for (const auto& s : panel.series) {
    if (!s.legend || s.name.empty()) continue;
    LegendEntry e;
    e.name = QString::fromStdString(s.name);
    e.color = QColor(QString::fromStdString(s.color));
    e.line = s.type == "line";
    e.dash = s.dash;
    e.markers = !e.line || s.markers;
    e.hollow = s.hollow;
    e.marker = s.marker;
    e.width = s.width;
    out.push_back(e);
  }
  return out;
}

QPainterPath marker_path(const std::string& m, QPointF c, double r) {
  QPainterPath p;
  auto polygon = [&](int n, double rot, bool star) {
    QPolygonF poly;
    const int k = star ? 2 * n : n;
    for (int i = 0; i < k; ++i) {
      const double a = rot + 2 * M_PI * i / k;
      const double rr = star && i % 2 ? r * 0.45 : r;
      poly << QPointF(c.x() + rr * std::sin(a), c.y() - rr * std::cos(a));
    }
    poly << poly.front();
    p.addPolygon(poly);
  };
  if (m == "square")
    p.addRect(QRectF(c.x() - r * 0.85, c.y() - r * 0.85, 1.7 * r, 1.7 * r));
  else if (m == "diamond")
    polygon(4, 0, false);
  else if (m == "triangle")
    polygon(3, 0, false);
  else if (m == "star")
    polygon(5, 0, true);
  else if (m == "pentagon")
    polygon(5, 0, false);
  else
    p.addEllipse(c, r, r);
  return p;
}

constexpr int kSample = 38, kRow = 21, kGap = 18;

void draw_entry(QPainter& g, const LegendEntry& e, QPointF at, const QString& text) {
  const double y = at.y() + kRow / 2.0;
  if (e.line) {
    QPen pen(e.color);
    pen.setWidthF(e.width);
    if (e.dash) pen.setStyle(Qt::DashLine);
    g.setPen(pen);
    g.drawLine(QPointF(at.x() + 2, y), QPointF(at.x() + kSample - 4, y));
  }
  if (e.markers) {
    const auto path =
        marker_path(e.marker, QPointF(at.x() + kSample / 2.0 - 1, y), e.hollow ? 7 : 5);
    if (e.hollow) {
      QPen pen(e.color);
      pen.setWidthF(2);
      g.setPen(pen);
      g.setBrush(Qt::NoBrush);
    } else {
      g.setPen(QPen(e.color.darker(130), 1));
      g.setBrush(e.color);
    }
    g.drawPath(path);
    g.setBrush(Qt::NoBrush);
  }
  g.setPen(QColor(40, 40, 40));
  g.drawText(QRectF(at.x() + kSample, at.y(), 2000, kRow), Qt::AlignLeft | Qt::AlignVCenter, text);
}

// Height (bottom) or width (right) the legend needs inside `cell`.
int legend_extent(const std::vector<LegendEntry>& es, const std::string& where,
                  const QRectF& cell) {
  if (es.empty() || where == "none") return 0;
  const QFontMetrics fm(font_px(12));
  if (where == "right") {
    int w = 0;
    for (const auto& e : es) w = std::max(w, kSample + fm.horizontalAdvance(e.name) + 12);
    return std::min(w, static_cast<int>(cell.width() * 0.42));
  }
  double x = 0;
  int rows = 1;
  for (const auto& e : es) {
    const double w = kSample + fm.horizontalAdvance(e.name) + kGap;
    if (x > 0 && x + w > cell.width() - 40) {
      ++rows;
      x = 0;
    }
    x += w;
  }
  return rows * kRow + 10;
}

void draw_legend(QPainter& g, const std::vector<LegendEntry>& es, const std::string& where,
                 const QRectF& area) {
  if (es.empty() || where == "none") return;
  g.setFont(font_px(12));
  const QFontMetrics fm(g.font());
  if (where == "right") {
    const double top =
        area.top() + std::max(0.0, (area.height() - kRow * static_cast<double>(es.size())) / 2);
    for (std::size_t i = 0; i < es.size(); ++i) {
      const QString text =
          fm.elidedText(es[i].name, Qt::ElideRight, static_cast<int>(area.width()) - kSample - 6);
      draw_entry(g, es[i], QPointF(area.left(), top + kRow * static_cast<double>(i)), text);
    }
    return;
  }
  // Rows centred under the plot, wrapped to the panel width.
  std::vector<std::vector<std::size_t>> rows(1);
  std::vector<double> widths(1, 0);
  for (std::size_t i = 0; i < es.size(); ++i) {
    const double w = kSample + fm.horizontalAdvance(es[i].name) + kGap;
    if (widths.back() > 0 && widths.back() + w > area.width() - 40) {
      rows.emplace_back();
      widths.push_back(0);
    }
    rows.back().push_back(i);
    widths.back() += w;
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    double x = area.left() + std::max(0.0, (area.width() - widths[r]) / 2);
    for (auto i : rows[r]) {
      draw_entry(g, es[i], QPointF(x, area.top() + 4 + kRow * static_cast<double>(r)), es[i].name);
      x += kSample + fm.horizontalAdvance(es[i].name) + kGap;
    }
  }
}

}  // namespace

namespace {
// Paints the whole figure on `painter` (an image or an SVG generator): the
// charts are rendered as scenes, not grabbed as pixmaps, so the SVG is vector.
void paint_spec(QPainter& painter, const Spec& spec) {
  const int width = spec.width, height = spec.height;
  const int n = static_cast<int>(spec.panels.size());
  const int cols = std::max(1, spec.columns);
  const int rows = (n + cols - 1) / cols;
  painter.fillRect(QRect(0, 0, width, height), Qt::white);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setRenderHint(QPainter::TextAntialiasing);

  const QString title = QString::fromStdString(spec.title);
  const QString note = QString::fromStdString(spec.note);
  int top = 8, bottom = height - 6;
  if (!title.isEmpty()) {
    // Wrapped, never cut: a centred line wider than the figure would lose
    // both ends.
    painter.setFont(font_px(20, true));
    painter.setPen(Qt::black);
    const QRect box(10, top, width - 20, height / 4);
    const QRect need =
        painter.fontMetrics().boundingRect(box, Qt::AlignHCenter | Qt::TextWordWrap, title);
    painter.drawText(QRect(10, top, width - 20, std::max(32, need.height())),
                     Qt::AlignHCenter | Qt::AlignVCenter | Qt::TextWordWrap, title);
    top += std::max(32, need.height()) + 6;
  }
  if (!note.isEmpty()) {
    painter.setFont(font_px(12));
    const QRect box(16, 0, width - 32, height / 4);
    const QRect need = painter.fontMetrics().boundingRect(box, Qt::TextWordWrap, note);
    bottom -= need.height() + 6;
    painter.setPen(QColor(70, 70, 70));
    painter.drawText(QRect(16, bottom + 4, width - 32, need.height() + 4), Qt::TextWordWrap, note);
  }
  const double cw = static_cast<double>(width) / cols,
               ch = static_cast<double>(bottom - top) / rows;
  for (int i = 0; i < n; ++i) {
    const auto& pj = spec.panels[static_cast<std::size_t>(i)];
    const QRectF cell((i % cols) * cw, top + (i / cols) * ch, cw, ch);
    const auto entries = legend_entries(pj);
    const std::string& where = pj.legend;
    const int extent = legend_extent(entries, where, cell);
    QRectF plot = cell, legend_area = cell;
    if (where == "right") {
      plot.setWidth(cell.width() - extent - 8);
      legend_area = QRectF(plot.right() + 4, cell.top(), extent, cell.height());
    } else if (extent > 0) {
      plot.setHeight(cell.height() - extent);
      legend_area = QRectF(cell.left(), plot.bottom(), cell.width(), extent);
    }
    // A scene holding the chart, rendered through the painter: vector in
    // the SVG, the same pixels as a grab in the PNG.
    QGraphicsScene scene;
    QChart* chart = build_panel(pj, static_cast<int>(plot.width()));
    scene.addItem(chart);
    const QRectF local(0, 0, std::floor(plot.width()), std::floor(plot.height()));
    chart->setGeometry(local);
    scene.setSceneRect(local);
    QApplication::processEvents();  // the chart lays out its axes on a posted event
    scene.render(&painter, QRectF(plot.topLeft(), local.size()), local);
    draw_legend(painter, entries, where, legend_area);
  }
}
}  // namespace

QImage render_spec(const json& json_spec) {
  const Spec spec = resolve_spec(json_spec);
  QImage img(spec.width, spec.height, QImage::Format_RGB32);
  img.fill(Qt::white);
  QPainter painter(&img);
  paint_spec(painter, spec);
  painter.end();
  return img;
}

QByteArray render_svg(const json& json_spec, const QString& title) {
  const Spec spec = resolve_spec(json_spec);
  QByteArray bytes;
  QBuffer buf(&bytes);
  buf.open(QIODevice::WriteOnly);
  QSvgGenerator gen;
  gen.setOutputDevice(&buf);
  gen.setSize(QSize(spec.width, spec.height));
  gen.setViewBox(QRect(0, 0, spec.width, spec.height));
  gen.setTitle(title);
  gen.setDescription("ringsim-plot (experiments/plot), schema ringsim-plot-1");
  QPainter painter(&gen);
  paint_spec(painter, spec);
  painter.end();
  return bytes;
}

}  // namespace ringsim::plot
