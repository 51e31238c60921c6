#pragma once
// Geometry and painting of the timeline: one band per trace (two when
// comparing) on one shared time axis, a header per band, lane labels, bars,
// step marks, axis and legend. The window, the PNG/SVG export and the
// offscreen --screenshot all paint through this class, so they look the same.
#include <QColor>
#include <QPainter>
#include <QRectF>
#include <QSize>
#include <QString>
#include <array>
#include <memory>
#include <vector>

#include "gui/lane_layout.hpp"
#include "gui/lod.hpp"
#include "gui/time_view.hpp"
#include "gui/trace_model.hpp"
#include "gui/trace_summary.hpp"

namespace ringsim::gui {

QColor phase_color(Phase p);

struct LoadedTrace {
  std::shared_ptr<const Trace> trace;
  Summary summary;
  QString title;  // file name or run description
};
LoadedTrace make_loaded(std::shared_ptr<const Trace> trace, const QString& title);
// Reads and summarises a trace file; throws ringsim::InputError (one line).
LoadedTrace load_trace(const QString& path, const QString& title = {});

// The clicked bar: an event of one of the shown traces.
struct TimelineSelection {
  int trace = -1;
  long event = -1;
};

class TimelineScene {
 public:
  static constexpr double kGutter = 132;  // lane labels
  static constexpr double kRightMargin = 14;
  static constexpr double kHeader = 26;  // band title line
  static constexpr double kBandGap = 10;
  static constexpr double kAxis = 26;
  static constexpr double kLegend = 26;
  static constexpr double kMinLanePx = 3;  // thinner lanes are grouped

  struct Band {
    int trace = 0;
    QRectF header, lanes;
    BandLayout layout;
  };
  struct Hit {
    int band = -1, group = -1;
    RowMask rows = 0;      // the rows of the strip under the point
    long event = -1;       // event index in the band's trace, -1 if none
    double t = 0;          // time under the point
    double column_us = 0;  // time one pixel spans
  };
  using Selection = TimelineSelection;

  void set_traces(std::vector<LoadedTrace> traces);
  const std::vector<LoadedTrace>& traces() const { return traces_; }
  void set_size(QSizeF size);
  QSizeF size() const { return size_; }
  const std::vector<Band>& bands() const { return bands_; }
  QRectF plot_rect() const;   // where bars go (all bands), x = time
  double extent_end() const;  // latest event end over all traces (us)

  Hit hit(QPointF p, const TimeView& view) const;
  // Everything, or (for the window's cache) the bars without and the
  // selection outline on top.
  void paint(QPainter& p, const TimeView& view, const Selection& sel = {}) const;
  void paint_base(QPainter& p, const TimeView& view) const;
  void paint_selection(QPainter& p, const TimeView& view, const Selection& sel) const;

  // A height that shows every lane of `traces` comfortably at `width`, for
  // screenshots and exports that have no window to size them.
  static int natural_height(const std::vector<LoadedTrace>& traces);

 private:
  void layout();
  void paint_band(QPainter& p, const Band& band, const TimeView& view) const;
  void paint_axis(QPainter& p, const TimeView& view) const;
  void paint_legend(QPainter& p) const;

  std::vector<LoadedTrace> traces_;
  std::vector<Band> bands_;
  std::array<bool, kPhaseCount> present_{};  // phases that occur, for the legend
  QSizeF size_{800, 600};
  mutable Binner binner_;
};

// "ring · causal · 8 devices" style description of a trace for headers.
QString band_title(const LoadedTrace& t);
QString summary_line(const Summary& s);

}  // namespace ringsim::gui
