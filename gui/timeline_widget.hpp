#pragma once
// The interactive timeline: zoom (wheel, +/-), pan (drag, arrows), fit,
// hover tooltips, click to select, double-click to zoom into a step. The bars
// are painted once per view into a cached image; hover and selection only
// repaint on top of it, so a 200k-event trace stays responsive.
#include <QImage>
#include <QWidget>
#include <vector>

#include "gui/time_view.hpp"
#include "gui/timeline_scene.hpp"

namespace ringsim::gui {

class TimelineWidget : public QWidget {
  Q_OBJECT

 public:
  explicit TimelineWidget(QWidget* parent = nullptr);

  // One trace, or two to compare. `keep_view` keeps the visible range (when a
  // comparison is added); otherwise the view fits the traces.
  void set_traces(std::vector<LoadedTrace> traces, bool keep_view = false);
  const TimelineScene& scene() const { return scene_; }
  const TimeView& view() const { return view_; }
  TimelineScene::Selection selection() const { return selection_; }

  void zoom_in() { zoom_by(1.5); }
  void zoom_out() { zoom_by(1 / 1.5); }
  void zoom_by(double factor);
  void pan_by_fraction(double f);  // of the visible span; > 0 moves to later times
  void fit();
  void set_view_range(double t0, double t1);
  bool zoom_to_step(int step);  // false if no trace has that step
  int current_step() const { return current_step_; }
  void select(int trace, long event);

  // Heatmap (the default from kHeatmapMinDevices devices) or lanes.
  void set_mode(ViewMode m);
  void toggle_mode();
  // The lane view zoomed on a heatmap cell: lanes around `row` of trace
  // `trace`, the time of column `col`. False if there is no such cell.
  bool drill_down(int trace, int row, int col);
  void show_all_lanes();  // undo a drill-down's lane window
  void set_show_critical_path(bool on) {
    scene_.set_show_critical_path(on);
    view_updated();
  }
  // A time range with statistics of the first band's trace (Shift+drag, or
  // right-drag); t0 == t1 clears it.
  void select_range(double t0, double t1);
  bool has_range() const { return range_t1_ > range_t0_; }
  const RangeStats& range() const { return range_stats_; }

  QString tooltip_at(QPointF pos) const;
  QSize sizeHint() const override { return {1000, 600}; }

 signals:
  void view_changed(double t0, double t1);
  void event_selected(int trace, long event);  // event -1: selection cleared
  void mode_changed(ViewMode mode);
  void range_selected(const QString& text);  // empty: range cleared

 protected:
  bool event(QEvent* e) override;
  void paintEvent(QPaintEvent*) override;
  void resizeEvent(QResizeEvent*) override;
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;

 private:
  void view_updated();

  TimelineScene scene_;
  TimeView view_;
  TimelineScene::Selection selection_;
  int current_step_ = -1;
  QImage cache_;
  bool cache_valid_ = false;
  bool dragging_ = false, dragged_ = false;
  bool ranging_ = false;  // Shift+drag or right-drag: selecting a time range
  double range_t0_ = 0, range_t1_ = 0;
  RangeStats range_stats_;
  QString range_text_;
  QPointF press_pos_;
  double press_t0_ = 0, press_t1_ = 0;
};

}  // namespace ringsim::gui
