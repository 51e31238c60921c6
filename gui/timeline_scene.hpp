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

#include "gui/critical_path.hpp"
#include "gui/lane_layout.hpp"
#include "gui/lod.hpp"
#include "gui/range_stats.hpp"
#include "gui/run_facts.hpp"
#include "gui/time_view.hpp"
#include "gui/trace_model.hpp"
#include "gui/trace_summary.hpp"
#include "gui/wait_heatmap.hpp"

namespace ringsim::gui {

QColor phase_color(Phase p);

// A (layer, pass) of the run: where the forward/backward and layer markers go.
struct PassSpan {
  std::int32_t layer = -1;
  PassKind pass = PassKind::Unknown;
  double t0 = 0, t1 = 0;   // time it spans (us)
  int col0 = 0, col1 = 0;  // heatmap columns [col0, col1)
};

struct LoadedTrace {
  std::shared_ptr<const Trace> trace;
  Summary summary;
  QString title;  // file name or run description
  // The story of the run, computed once on load (plain C++, gui/*.hpp).
  RunFacts facts;                              // faults, nodes, verdict
  CriticalPath critical;                       // critical device and path
  std::shared_ptr<const WaitHeatmap> heatmap;  // device x step waits
  std::vector<PassSpan> passes;                // forward/backward and layer spans
  std::vector<std::uint8_t> internode_sender;  // per lane: 1 if it sends across a node boundary
};
LoadedTrace make_loaded(std::shared_ptr<const Trace> trace, const QString& title);
// Reads and summarises a trace file; throws ringsim::InputError (one line).
LoadedTrace load_trace(const QString& path, const QString& title = {});

// The clicked bar: an event of one of the shown traces.
struct TimelineSelection {
  int trace = -1;
  long event = -1;
};

// What a band shows: lanes of bars over time, or the device x step grid of waits.
enum class ViewMode { Lanes, Heatmap };

class TimelineScene {
 public:
  static constexpr double kGutter = 132;  // lane labels
  static constexpr double kRightMargin = 14;
  static constexpr double kHeader = 91;  // title and numbers, verdict (two lines), story, passes
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

  // Also picks the default mode: the heatmap when a trace has kHeatmapMinDevices lanes.
  void set_traces(std::vector<LoadedTrace> traces);
  const std::vector<LoadedTrace>& traces() const { return traces_; }
  void set_mode(ViewMode m);
  ViewMode mode() const { return mode_; }
  // Lanes [first, first + count) of each trace (drill-down); count <= 0: all.
  void set_lane_window(int first, int count);
  int lane_window_first() const { return window_first_; }
  int lane_window_count() const { return window_count_; }
  void set_show_critical_path(bool on) { show_path_ = on; }
  bool show_critical_path() const { return show_path_; }
  // Heatmap cell under a point: band's trace, lane row and column; false if none.
  bool heat_cell(QPointF p, int* trace, int* row, int* col) const;
  // A selected time range and its statistics, shaded over the lanes.
  void paint_range(QPainter& p, const TimeView& view, double t0, double t1,
                   const QString& text) const;
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
  void paint_header(QPainter& p, const Band& band, const TimeView& view) const;
  double paint_colour_bar(QPainter& p, double x, double y, double max_us) const;
  void paint_lane_labels(QPainter& p, const Band& band) const;
  void paint_ring_rules(QPainter& p, const Band& band) const;
  void paint_heatmap(QPainter& p, const Band& band) const;
  void paint_critical_path(QPainter& p, const Band& band, const TimeView& view) const;
  void paint_markers(QPainter& p, const Band& band, const TimeView& view) const;
  double column_x(const Band& band, double col) const;  // heatmap column edge
  void paint_axis(QPainter& p, const TimeView& view) const;
  void paint_legend(QPainter& p) const;

  std::vector<LoadedTrace> traces_;
  std::vector<Band> bands_;
  std::array<bool, kPhaseCount> present_{};  // phases that occur, for the legend
  QSizeF size_{800, 600};
  ViewMode mode_ = ViewMode::Lanes;
  int window_first_ = 0, window_count_ = 0;
  bool show_path_ = true;
  mutable Binner binner_;
};

// "ring · causal · 8 devices" style description of a trace for headers.
QString band_title(const LoadedTrace& t);
QString summary_line(const Summary& s);
// Label of a lane: its name, plus "critical" and a fault it carries.
QString lane_label(const LoadedTrace& t, int lane);
// Range statistics as a few lines for the overlay and the details panel.
QString range_text(const RangeStats& s);

}  // namespace ringsim::gui
