#include "gui/timeline_widget.hpp"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "gui/event_text.hpp"

namespace ringsim::gui {

TimelineWidget::TimelineWidget(QWidget* parent) : QWidget(parent) {
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);
  setMinimumSize(400, 200);
  setCursor(Qt::OpenHandCursor);
  scene_.set_size(size());
}

void TimelineWidget::set_traces(std::vector<LoadedTrace> traces, bool keep_view) {
  const ViewMode before = scene_.mode();
  const int wf = scene_.lane_window_first(), wc = scene_.lane_window_count();
  const bool had = !scene_.traces().empty();
  scene_.set_traces(std::move(traces));
  // A filtered or compared trace keeps the chosen mode and drill-down window.
  if (keep_view && had) {
    scene_.set_mode(before);
    scene_.set_lane_window(wf, wc);
  }
  scene_.set_size(size());
  selection_ = {};
  range_t0_ = range_t1_ = 0;
  range_text_.clear();
  view_.set_extent(0, std::max(scene_.extent_end(), TimeView::kMinSpanUs));
  if (!keep_view) {
    view_.fit();
    current_step_ = -1;
  }
  view_updated();
}

void TimelineWidget::set_mode(ViewMode m) {
  scene_.set_mode(m);
  selection_ = {};
  view_updated();
  emit mode_changed(m);
}

void TimelineWidget::toggle_mode() {
  set_mode(scene_.mode() == ViewMode::Heatmap ? ViewMode::Lanes : ViewMode::Heatmap);
}

bool TimelineWidget::drill_down(int trace, int row, int col) {
  const auto& traces = scene_.traces();
  if (trace < 0 || trace >= static_cast<int>(traces.size())) return false;
  const LoadedTrace& t = traces[static_cast<std::size_t>(trace)];
  const auto& cols = t.heatmap->columns;
  const int n = static_cast<int>(t.trace->lanes.size());
  if (row < 0 || row >= n || col < 0 || col >= static_cast<int>(cols.size())) return false;
  // 32 lanes around the row: few enough to draw each device's bars.
  constexpr int kWindow = 32;
  const int first = std::clamp(row - kWindow / 2, 0, std::max(0, n - kWindow));
  scene_.set_mode(ViewMode::Lanes);
  scene_.set_lane_window(first, n > kWindow ? kWindow : 0);
  const HeatColumn& c = cols[static_cast<std::size_t>(col)];
  const double margin = std::max((c.t1 - c.t0) * 0.05, TimeView::kMinSpanUs);
  current_step_ = c.step;
  view_.set_range(c.t0 - margin, c.t1 + margin);
  view_updated();
  emit mode_changed(ViewMode::Lanes);
  return true;
}

void TimelineWidget::show_all_lanes() {
  scene_.set_lane_window(0, 0);
  view_updated();
}

void TimelineWidget::select_range(double t0, double t1) {
  if (t1 < t0) std::swap(t0, t1);
  range_t0_ = t0;
  range_t1_ = t1;
  range_text_.clear();
  if (t1 > t0 && !scene_.traces().empty() && !scene_.bands().empty()) {
    // Statistics over the lanes on screen of the first band's trace.
    const auto& band = scene_.bands().front();
    const Trace& tr = *scene_.traces()[static_cast<std::size_t>(band.trace)].trace;
    const int first = band.layout.groups.empty() ? 0 : band.layout.groups.front().first;
    const int last = band.layout.groups.empty() ? 0 : band.layout.groups.back().last;
    range_stats_ = range_stats(tr, t0, t1, first, last);
    range_text_ = range_text(range_stats_);
  }
  update();
  emit range_selected(range_text_);
}

void TimelineWidget::view_updated() {
  cache_valid_ = false;
  update();
  emit view_changed(view_.t0(), view_.t1());
}

void TimelineWidget::zoom_by(double factor) {
  view_.zoom_center(factor);
  view_updated();
}

void TimelineWidget::pan_by_fraction(double f) {
  view_.pan(f * view_.span());
  view_updated();
}

void TimelineWidget::fit() {
  view_.fit();
  current_step_ = -1;
  view_updated();
}

void TimelineWidget::set_view_range(double t0, double t1) {
  view_.set_range(t0, t1);
  view_updated();
}

bool TimelineWidget::zoom_to_step(int step) {
  double lo = 0, hi = 0;
  bool found = false;
  for (const LoadedTrace& t : scene_.traces()) {
    double a = 0, b = 0;
    if (!step_range(*t.trace, step, &a, &b)) continue;
    lo = found ? std::min(lo, a) : a;
    hi = found ? std::max(hi, b) : b;
    found = true;
  }
  if (!found) return false;
  const double margin = std::max((hi - lo) * 0.05, TimeView::kMinSpanUs);
  current_step_ = step;
  set_view_range(lo - margin, hi + margin);
  return true;
}

void TimelineWidget::select(int trace, long event) {
  selection_ = {trace, event};
  update();
  emit event_selected(trace, event);
}

QString TimelineWidget::tooltip_at(QPointF pos) const {
  int trace = -1, row = -1, col = -1;
  if (scene_.heat_cell(pos, &trace, &row, &col)) {
    const LoadedTrace& t = scene_.traces()[static_cast<std::size_t>(trace)];
    const HeatColumn& c = t.heatmap->columns[static_cast<std::size_t>(col)];
    QString where =
        QString("%1 · step %2")
            .arg(QString::fromStdString(t.trace->lanes[static_cast<std::size_t>(row)].name))
            .arg(c.step);
    if (c.pass != PassKind::Unknown) where += QString(" (%1)").arg(trace::pass_name(c.pass));
    if (c.layer >= 0) where += QString(" layer %1").arg(c.layer);
    return where + QString("\nwaited %1\nclick: its lanes at this step")
                       .arg(QString::fromStdString(format_us(t.heatmap->at(row, col))));
  }
  const TimelineScene::Hit h = scene_.hit(pos, view_);
  if (h.band < 0) return {};
  const auto& band = scene_.bands()[static_cast<std::size_t>(h.band)];
  const Trace& tr = *scene_.traces()[static_cast<std::size_t>(band.trace)].trace;
  if (h.event >= 0)
    return QString::fromStdString(event_tooltip(tr, tr.events[static_cast<std::size_t>(h.event)]));
  const LaneGroup& g = band.layout.groups[static_cast<std::size_t>(h.group)];
  if (g.size() == 1) return {};
  // A grouped lane: what its devices do, on average, in this pixel column.
  const auto cover =
      Binner::cover(tr, g.first, g.last, h.rows, h.t - h.column_us / 2, h.t + h.column_us / 2);
  QString text = QString("devices %1\u2013%2 (%3 lanes grouped)\nat %4:")
                     .arg(tr.lanes[static_cast<std::size_t>(g.first)].device)
                     .arg(tr.lanes[static_cast<std::size_t>(g.last - 1)].device)
                     .arg(g.size())
                     .arg(QString::fromStdString(format_us(h.t)));
  bool any = false;
  for (int p = 0; p < kPhaseCount; ++p) {
    if (cover[static_cast<std::size_t>(p)] < 0.005) continue;
    text += QString("\n  %1 %2%")
                .arg(phase_label(static_cast<Phase>(p)))
                .arg(cover[static_cast<std::size_t>(p)] * 100, 0, 'f', 0);
    any = true;
  }
  if (!any) text += "\n  nothing";
  return text;
}

bool TimelineWidget::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    const QString text = tooltip_at(help->pos());
    if (text.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(help->globalPos(), text, this);
    return true;
  }
  return QWidget::event(e);
}

void TimelineWidget::paintEvent(QPaintEvent*) {
  const qreal dpr = devicePixelRatioF();
  const QSize px = (QSizeF(size()) * dpr).toSize();
  if (!cache_valid_ || cache_.size() != px) {
    cache_ = QImage(px, QImage::Format_ARGB32_Premultiplied);
    cache_.setDevicePixelRatio(dpr);
    QPainter cp(&cache_);
    scene_.paint_base(cp, view_);
    cache_valid_ = true;
  }
  QPainter p(this);
  p.drawImage(QPointF(0, 0), cache_);
  scene_.paint_selection(p, view_, selection_);
  if (range_t1_ > range_t0_ || ranging_)
    scene_.paint_range(p, view_, range_t0_, range_t1_, ranging_ ? QString() : range_text_);
  if (hasFocus()) {
    p.setPen(QPen(palette().highlight().color(), 0));
    p.drawRect(rect().adjusted(0, 0, -1, -1));
  }
}

void TimelineWidget::resizeEvent(QResizeEvent*) {
  scene_.set_size(size());
  cache_valid_ = false;
}

void TimelineWidget::wheelEvent(QWheelEvent* e) {
  const QPoint d = e->angleDelta();
  const QRectF plot = scene_.plot_rect();
  if (d.x() != 0 || (e->modifiers() & Qt::ShiftModifier)) {
    const int delta = d.x() != 0 ? d.x() : d.y();
    pan_by_fraction(-delta / 120.0 * 0.1);
  } else if (d.y() != 0) {
    const double anchor = view_.t_of(e->position().x(), plot.left(), plot.width());
    view_.zoom(std::pow(1.25, d.y() / 120.0), anchor);
    view_updated();
  }
  e->accept();
}

void TimelineWidget::mousePressEvent(QMouseEvent* e) {
  const QRectF plot = scene_.plot_rect();
  const bool range_button = e->button() == Qt::RightButton ||
                            (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ShiftModifier));
  if (range_button && scene_.mode() == ViewMode::Lanes) {
    ranging_ = true;
    const double t = view_.t_of(e->position().x(), plot.left(), plot.width());
    range_t0_ = range_t1_ = t;
    return;
  }
  if (e->button() != Qt::LeftButton) return;
  dragging_ = true;
  dragged_ = false;
  press_pos_ = e->position();
  press_t0_ = view_.t0();
  press_t1_ = view_.t1();
  setCursor(Qt::ClosedHandCursor);
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* e) {
  if (ranging_) {
    const QRectF plot = scene_.plot_rect();
    range_t1_ = view_.t_of(std::clamp(e->position().x(), plot.left(), plot.right()), plot.left(),
                           plot.width());
    update();
    return;
  }
  if (!dragging_) return;
  const double dx = e->position().x() - press_pos_.x();
  if (std::abs(dx) >= 3) dragged_ = true;
  if (!dragged_) return;
  const double dt = -dx / scene_.plot_rect().width() * (press_t1_ - press_t0_);
  view_.set_range(press_t0_ + dt, press_t1_ + dt);
  view_updated();
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent* e) {
  if (ranging_) {
    ranging_ = false;
    select_range(range_t0_, range_t1_);
    return;
  }
  if (e->button() != Qt::LeftButton || !dragging_) return;
  dragging_ = false;
  setCursor(Qt::OpenHandCursor);
  if (dragged_) return;
  // On the heatmap a click drills down to that cell's lanes.
  int trace = -1, row = -1, col = -1;
  if (scene_.heat_cell(e->position(), &trace, &row, &col)) {
    drill_down(trace, row, col);
    return;
  }
  // A click without a drag selects the bar under the pointer (or clears).
  const TimelineScene::Hit h = scene_.hit(e->position(), view_);
  trace = h.band >= 0 ? scene_.bands()[static_cast<std::size_t>(h.band)].trace : -1;
  select(h.event >= 0 ? trace : -1, h.event);
}

void TimelineWidget::mouseDoubleClickEvent(QMouseEvent* e) {
  const TimelineScene::Hit h = scene_.hit(e->position(), view_);
  if (h.event < 0) return;
  const Trace& tr = *scene_
                         .traces()[static_cast<std::size_t>(
                             scene_.bands()[static_cast<std::size_t>(h.band)].trace)]
                         .trace;
  const Event& ev = tr.events[static_cast<std::size_t>(h.event)];
  if (ev.step >= 0 && zoom_to_step(ev.step)) return;
  const double margin = std::max(ev.dur * 0.1, TimeView::kMinSpanUs);
  set_view_range(ev.start - margin, ev.end() + margin);
}

void TimelineWidget::keyPressEvent(QKeyEvent* e) {
  const bool shift = e->modifiers() & Qt::ShiftModifier;
  switch (e->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
      zoom_in();
      break;
    case Qt::Key_Minus:
    case Qt::Key_Underscore:
      zoom_out();
      break;
    case Qt::Key_Left:
      pan_by_fraction(shift ? -0.5 : -0.1);
      break;
    case Qt::Key_Right:
      pan_by_fraction(shift ? 0.5 : 0.1);
      break;
    case Qt::Key_Home:
    case Qt::Key_F:
    case Qt::Key_0:
      fit();
      break;
    case Qt::Key_BracketRight:
      zoom_to_step(current_step_ + 1);
      break;
    case Qt::Key_BracketLeft:
      zoom_to_step(std::max(0, current_step_ - 1));
      break;
    case Qt::Key_H:
      toggle_mode();
      break;
    case Qt::Key_A:
      show_all_lanes();
      break;
    case Qt::Key_C:
      select_range(0, 0);
      break;
    default:
      QWidget::keyPressEvent(e);
      return;
  }
  e->accept();
}

}  // namespace ringsim::gui
