#include "gui/timeline_scene.hpp"

#include <QFileInfo>
#include <QFontMetricsF>
#include <algorithm>
#include <cmath>

namespace ringsim::gui {

QColor phase_color(Phase p) {
  const auto rgb = trace::phase_rgb(p);
  return QColor((rgb >> 16) & 0xff, (rgb >> 8) & 0xff, rgb & 0xff);
}

LoadedTrace make_loaded(std::shared_ptr<const Trace> trace, const QString& title) {
  LoadedTrace t;
  t.summary = summarize(*trace);
  t.trace = std::move(trace);
  t.title = title;
  return t;
}

LoadedTrace load_trace(const QString& path, const QString& title) {
  auto trace = std::make_shared<Trace>(read_trace_file(path.toStdString()));
  return make_loaded(std::move(trace), title.isEmpty() ? QFileInfo(path).fileName() : title);
}

namespace {

QString text_field(const RunInfo& run, const char* key) {
  const RunInfo::Field* f = run.find(key);
  return f && !f->is_number ? QString::fromStdString(f->text) : QString();
}

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

double natural_lanes_height(const Trace& t) {
  const double n = static_cast<double>(t.lanes.size());
  // Few lanes: tall enough that the thin link rows read; many: 480 px in all.
  const double lane_px = n <= 8    ? 32
                         : n <= 16 ? 26
                                   : std::clamp(480.0 / n, TimelineScene::kMinLanePx, 24.0);
  return std::min(n * lane_px, 720.0);
}

// 1-2-5 steps that put a labelled tick about every `target` pixels.
double tick_step(double span, double width, double target) {
  const double raw = span / std::max(1.0, width / target);
  const double p10 = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p10 >= raw) return m * p10;
  return 10 * p10;
}

QFont small_font(double pt) {
  QFont f;
  f.setPointSizeF(pt);
  return f;
}

}  // namespace

QString band_title(const LoadedTrace& t) {
  QStringList parts;
  const RunInfo& run = t.trace->run;
  QString layout = qs(run.layout);
  if (layout.isEmpty()) layout = text_field(run, "layout");
  if (!layout.isEmpty()) parts << layout;
  if (const RunInfo::Field* c = run.find("causal"); c && !c->is_number)
    parts << (c->text == "true" ? "causal" : "full mask");
  if (const QString pass = text_field(run, "pass"); !pass.isEmpty()) parts << pass;
  parts << QString("%1 devices").arg(t.trace->lanes.size());
  if (const RunInfo::Field* b = run.find("block"); b && b->is_number)
    parts << QString("block %1").arg(b->number, 0, 'g', 12);
  if (const QString model = text_field(run, "model"); !model.isEmpty()) parts << model;
  return t.title + QString::fromUtf8("  \u2014  ") + parts.join(QString::fromUtf8(" \u00b7 "));
}

QString summary_line(const Summary& s) {
  return QString::fromUtf8(
             "total %1 \u00b7 ideal %2 \u00b7 efficiency %3% \u00b7 exposed comm %4 "
             "\u00b7 idle %5%")
      .arg(qs(format_us(s.total_us.value)), qs(format_us(s.ideal_us.value)))
      .arg(s.efficiency.value * 100, 0, 'f', 1)
      .arg(qs(format_us(s.exposed_comm_us.value)))
      .arg(s.idle_fraction.value * 100, 0, 'f', 1);
}

void TimelineScene::set_traces(std::vector<LoadedTrace> traces) {
  traces_ = std::move(traces);
  present_.fill(false);
  for (const auto& t : traces_)
    for (const Event& e : t.trace->events) present_[static_cast<std::size_t>(e.phase)] = true;
  layout();
}

void TimelineScene::set_size(QSizeF size) {
  size_ = size;
  layout();
}

QRectF TimelineScene::plot_rect() const {
  const double top = 6, bottom = size_.height() - kAxis - kLegend;
  return QRectF(kGutter, top, std::max(10.0, size_.width() - kGutter - kRightMargin),
                std::max(10.0, bottom - top));
}

double TimelineScene::extent_end() const {
  double end = 0;
  for (const auto& t : traces_) end = std::max(end, t.trace->end_us);
  return end;
}

void TimelineScene::layout() {
  bands_.clear();
  if (traces_.empty()) return;
  const QRectF plot = plot_rect();
  const double gaps = kBandGap * static_cast<double>(traces_.size() - 1);
  const double lanes_total =
      std::max(10.0, plot.height() - gaps - kHeader * static_cast<double>(traces_.size()));
  double weight_sum = 0;
  std::vector<double> weights;
  for (const auto& t : traces_) {
    weights.push_back(natural_lanes_height(*t.trace));
    weight_sum += weights.back();
  }
  double y = plot.top();
  for (std::size_t i = 0; i < traces_.size(); ++i) {
    Band b;
    b.trace = static_cast<int>(i);
    b.header = QRectF(0, y, size_.width(), kHeader);
    y += kHeader;
    const double h = lanes_total * weights[i] / weight_sum;
    b.lanes = QRectF(plot.left(), y, plot.width(), h);
    b.layout = layout_lanes(static_cast<int>(traces_[i].trace->lanes.size()), y, h, kMinLanePx);
    y += h + kBandGap;
    bands_.push_back(std::move(b));
  }
}

int TimelineScene::natural_height(const std::vector<LoadedTrace>& traces) {
  double h = 6 + kAxis + kLegend + 8;
  for (const auto& t : traces) h += kHeader + natural_lanes_height(*t.trace);
  if (!traces.empty()) h += kBandGap * static_cast<double>(traces.size() - 1);
  return static_cast<int>(std::ceil(h));
}

TimelineScene::Hit TimelineScene::hit(QPointF p, const TimeView& view) const {
  Hit h;
  const QRectF plot = plot_rect();
  if (p.x() < plot.left() || p.x() >= plot.right()) return h;
  for (std::size_t b = 0; b < bands_.size(); ++b) {
    const Band& band = bands_[b];
    if (p.y() < band.lanes.top() || p.y() >= band.lanes.bottom()) continue;
    const int g = group_at(band.layout, p.y());
    if (g < 0) return h;
    const LaneGroup& group = band.layout.groups[static_cast<std::size_t>(g)];
    if (!row_at(group, p.y(), &h.rows)) return h;
    h.band = static_cast<int>(b);
    h.group = g;
    h.t = view.t_of(p.x(), plot.left(), plot.width());
    h.column_us = view.span() / plot.width();
    if (group.size() == 1)
      h.event = hit_event(*traces_[static_cast<std::size_t>(band.trace)].trace, group.first, h.rows,
                          h.t, 2 * h.column_us);
    return h;
  }
  return h;
}

void TimelineScene::paint(QPainter& p, const TimeView& view, const Selection& sel) const {
  paint_base(p, view);
  paint_selection(p, view, sel);
}

void TimelineScene::paint_base(QPainter& p, const TimeView& view) const {
  p.save();
  p.setRenderHint(QPainter::Antialiasing, false);
  p.fillRect(QRectF(QPointF(0, 0), size_), Qt::white);
  if (traces_.empty()) {
    p.setPen(QColor(0x70, 0x70, 0x70));
    p.drawText(QRectF(QPointF(0, 0), size_), Qt::AlignCenter,
               "Open a trace (File > Open, or drop a file here) or run a simulation.");
    p.restore();
    return;
  }
  const QRectF plot = plot_rect();

  // Grid lines under the bars, at the axis ticks.
  const double step = tick_step(view.span(), plot.width(), 110);
  p.setPen(QPen(QColor(0xe6, 0xe6, 0xe6), 0));
  for (double t = std::ceil(view.t0() / step) * step; t <= view.t1(); t += step) {
    const double x = std::round(view.x_of(t, plot.left(), plot.width())) + 0.5;
    for (const Band& b : bands_)
      p.drawLine(QPointF(x, b.lanes.top()), QPointF(x, b.lanes.bottom()));
  }
  for (const Band& b : bands_) paint_band(p, b, view);
  paint_axis(p, view);
  paint_legend(p);
  p.restore();
}

void TimelineScene::paint_selection(QPainter& p, const TimeView& view, const Selection& sel) const {
  // An outline that stays visible at any zoom.
  if (sel.trace < 0 || sel.event < 0 || sel.trace >= static_cast<int>(traces_.size())) return;
  const Trace& tr = *traces_[static_cast<std::size_t>(sel.trace)].trace;
  if (sel.event >= static_cast<long>(tr.events.size())) return;
  const Event& e = tr.events[static_cast<std::size_t>(sel.event)];
  const QRectF plot = plot_rect();
  for (const Band& b : bands_) {
    if (b.trace != sel.trace) continue;
    const int lane = tr.lane_of_device(e.device);
    const int g = lane / std::max(1, b.layout.group_size);
    if (lane < 0 || g >= static_cast<int>(b.layout.groups.size())) continue;
    const VisualRow rs = row_span(b.layout.groups[static_cast<std::size_t>(g)], row_of(e.phase));
    double x0 = std::max(plot.left() - 4, view.x_of(e.start, plot.left(), plot.width()));
    double x1 = std::min(plot.right() + 4, view.x_of(e.end(), plot.left(), plot.width()));
    if (x1 < plot.left() - 3 || x0 > plot.right() + 3) continue;
    if (x1 - x0 < 3) x0 -= 1.5, x1 += 1.5;
    p.save();
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setClipRect(b.lanes.adjusted(-2, -2, 2, 2));
    p.setPen(QPen(Qt::black, 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(x0, rs.y, x1 - x0, rs.h).adjusted(-1, -1, 1, 1));
    p.restore();
  }
}

void TimelineScene::paint_band(QPainter& p, const Band& band, const TimeView& view) const {
  const LoadedTrace& lt = traces_[static_cast<std::size_t>(band.trace)];
  const Trace& tr = *lt.trace;
  const QRectF plot = plot_rect();

  // Header: what the trace is, then its headline numbers.
  QFont bold = small_font(9.5);
  bold.setBold(true);
  p.setFont(bold);
  p.setPen(QColor(0x20, 0x20, 0x20));
  const QString title = band_title(lt);
  const QRectF hdr = band.header.adjusted(8, 0, -kRightMargin, 0);
  const double title_w =
      std::min(QFontMetricsF(bold).horizontalAdvance(title) + 16, hdr.width() * 0.6);
  p.drawText(QRectF(hdr.left(), hdr.top(), title_w, hdr.height()), Qt::AlignVCenter | Qt::AlignLeft,
             QFontMetricsF(bold).elidedText(title, Qt::ElideMiddle, title_w - 16));
  const QFont normal = small_font(9);
  p.setFont(normal);
  p.setPen(QColor(0x55, 0x55, 0x55));
  const QRectF rest(hdr.left() + title_w, hdr.top(), hdr.width() - title_w, hdr.height());
  p.drawText(
      rest, Qt::AlignVCenter | Qt::AlignLeft,
      QFontMetricsF(normal).elidedText(summary_line(lt.summary), Qt::ElideRight, rest.width()));

  const int columns = std::max(1, static_cast<int>(std::floor(plot.width())));
  const double t0 = view.t0(), t1 = view.t1();
  const double col_us = view.span() / columns;
  const auto& groups = band.layout.groups;
  const double label_every = groups.empty() ? 1 : std::max(1.0, std::ceil(12.0 / groups.front().h));

  const QFont label_font = small_font(groups.empty() || groups.front().h >= 14 ? 8.5 : 7.5);
  p.setFont(label_font);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const LaneGroup& grp = groups[g];
    // Zebra stripes so a lane can be followed across the plot.
    if (g % 2 == 1)
      p.fillRect(QRectF(plot.left(), grp.y, plot.width(), grp.h), QColor(0xf4, 0xf5, 0xf7));
    if (g % static_cast<std::size_t>(label_every) == 0) {
      const Lane& first = tr.lanes[static_cast<std::size_t>(grp.first)];
      const QString label = grp.size() == 1
                                ? qs(first.name)
                                : QString("devices %1\u2013%2")
                                      .arg(first.device)
                                      .arg(tr.lanes[static_cast<std::size_t>(grp.last - 1)].device);
      p.setPen(QColor(0x30, 0x30, 0x30));
      const double lh = std::max(grp.h, 12.0);
      p.drawText(QRectF(4, grp.y + grp.h / 2 - lh / 2, kGutter - 10, lh),
                 Qt::AlignVCenter | Qt::AlignRight,
                 QFontMetricsF(label_font).elidedText(label, Qt::ElideLeft, kGutter - 10));
    }
  }

  p.save();
  p.setClipRect(band.lanes);
  for (const LaneGroup& grp : groups) {
    VisualRow strips[3];
    const int nstrips = visual_rows(grp, strips);
    for (int si = 0; si < nstrips; ++si) {
      const VisualRow& rs = strips[si];
      if (rs.h <= 0) continue;
      const bool detail = grp.size() == 1 && visible_count(tr, grp.first, rs.rows, t0, t1) <=
                                                 static_cast<std::size_t>(columns / 3);
      if (detail) {
        const Lane& lane = tr.lanes[static_cast<std::size_t>(grp.first)];
        for (int r = 0; r < kRowCount; ++r) {
          if (!(rs.rows & (1u << r))) continue;
          const RowIndex& idx = lane.rows[static_cast<std::size_t>(r)];
          const auto [a, b] = idx.overlapping(tr.events, t0, t1);
          for (std::size_t k = a; k < b; ++k) {
            const Event& e = tr.events[idx.events[k]];
            // Clamped: at deep zoom a bar's far end can be 1e12 pixels away.
            const double x0 =
                std::max(plot.left() - 4, view.x_of(e.start, plot.left(), plot.width()));
            const double x1 =
                std::min(plot.right() + 4, view.x_of(e.end(), plot.left(), plot.width()));
            p.fillRect(QRectF(x0, rs.y, std::max(1.0, x1 - x0), rs.h), phase_color(e.phase));
            // A light edge where a bar starts keeps back-to-back bars of one phase apart.
            if (x1 - x0 >= 5) p.fillRect(QRectF(x0, rs.y, 1, rs.h), QColor(255, 255, 255, 170));
          }
        }
      } else {
        for (const ColumnRun& run :
             binner_.runs(tr, grp.first, grp.last, rs.rows, t0, t1, columns)) {
          QColor c = phase_color(run.phase);
          c.setAlpha(static_cast<int>(255 * (0.3 + 0.7 * run.level / double(kDensityLevels))));
          p.fillRect(QRectF(plot.left() + run.x0, rs.y, run.x1 - run.x0, rs.h), c);
        }
      }
    }
    // Step starts, where they are far enough apart to read.
    if (grp.size() != 1) continue;
    const auto& starts = tr.lanes[static_cast<std::size_t>(grp.first)].step_starts;
    const auto lo = std::lower_bound(starts.begin(), starts.end(), t0);
    const auto hi = std::upper_bound(lo, starts.end(), t1);
    const double visible = static_cast<double>(hi - lo);
    if (visible == 0 || plot.width() / visible < 6 || col_us <= 0) continue;
    const VisualRow bottom = row_span(grp, Row::Recv);
    p.setPen(QPen(QColor(0x20, 0x20, 0x20, 170), 0));
    for (auto it = lo; it != hi; ++it) {
      const double x = std::round(view.x_of(*it, plot.left(), plot.width())) + 0.5;
      p.drawLine(QPointF(x, grp.y), QPointF(x, bottom.y + bottom.h - 1));
    }
  }
  p.restore();
  // Frame the band so its extent is clear even where it is empty.
  p.setPen(QPen(QColor(0xc8, 0xc8, 0xc8), 0));
  p.setBrush(Qt::NoBrush);
  p.drawRect(band.lanes.adjusted(-0.5, -0.5, 0.5, 0.5));
}

void TimelineScene::paint_axis(QPainter& p, const TimeView& view) const {
  const QRectF plot = plot_rect();
  const double y = plot.bottom() + 2;
  p.setPen(QPen(QColor(0x40, 0x40, 0x40), 0));
  p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
  const QFont f = small_font(8.5);
  p.setFont(f);
  const double step = tick_step(view.span(), plot.width(), 110);
  for (double t = std::ceil(view.t0() / step) * step; t <= view.t1(); t += step) {
    const double x = std::round(view.x_of(t, plot.left(), plot.width())) + 0.5;
    p.drawLine(QPointF(x, y), QPointF(x, y + 5));
    // Snap values like 2.9999999 to the tick they stand for.
    const double shown = std::abs(t) < step * 1e-6 ? 0.0 : t;
    const QString label = qs(format_us(shown));
    // Centred on the tick, but kept inside the plot so it never meets the gutter.
    const double w = QFontMetricsF(f).horizontalAdvance(label) + 4;
    const double left = std::clamp(x - w / 2, plot.left(), std::max(plot.left(), plot.right() - w));
    p.drawText(QRectF(left, y + 5, w, kAxis - 6), Qt::AlignHCenter | Qt::AlignTop, label);
  }
  p.drawText(QRectF(4, y + 5, kGutter - 14, kAxis - 6), Qt::AlignRight | Qt::AlignTop, "time");
}

void TimelineScene::paint_legend(QPainter& p) const {
  const QRectF plot = plot_rect();
  const double y = plot.bottom() + kAxis + 4;
  const QFont f = small_font(8.5);
  p.setFont(f);
  const QFontMetricsF fm(f);
  double x = plot.left();
  auto item = [&](const QString& label, const QColor& c, bool line) {
    if (line) {
      p.setPen(QPen(QColor(0x20, 0x20, 0x20), 0));
      p.drawLine(QPointF(x + 5.5, y + 2), QPointF(x + 5.5, y + 14));
    } else {
      p.fillRect(QRectF(x, y + 3, 12, 10), c);
    }
    p.setPen(QColor(0x30, 0x30, 0x30));
    p.drawText(QPointF(x + 16, y + 12), label);
    x += 16 + fm.horizontalAdvance(label) + 14;
  };
  // Only the phases on screen, in a fixed order.
  for (int ph = 0; ph < kPhaseCount; ++ph)
    if (present_[static_cast<std::size_t>(ph)])
      item(phase_label(static_cast<Phase>(ph)), phase_color(static_cast<Phase>(ph)), false);
  item("step start", {}, true);
  p.setPen(QColor(0x70, 0x70, 0x70));
  p.drawText(QRectF(x, y, std::max(0.0, plot.right() - x), 16), Qt::AlignRight | Qt::AlignVCenter,
             QString::fromUtf8("rows per lane: compute \u00b7 send \u00b7 recv/wait"));
}

}  // namespace ringsim::gui
