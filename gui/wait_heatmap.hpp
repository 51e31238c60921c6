#pragma once
// The large-ring view: a device x step grid of the time each device waited in
// each ring step. Past a few dozen devices, lanes of bars become a uniform
// texture; a grid of waits shows at a glance which devices and steps stall.
// Plain C++ with no Qt (the binning is unit-tested); the scene paints it.
#include <cstdint>
#include <vector>

#include "gui/trace_model.hpp"

namespace ringsim::gui {

// Devices from which a trace opens on the heatmap instead of the lanes.
inline constexpr int kHeatmapMinDevices = 64;

// One column: a ring step of one (layer, pass), in the order the run did them.
struct HeatColumn {
  std::int32_t layer = -1;
  PassKind pass = PassKind::Unknown;
  std::int32_t step = 0;
  double t0 = 0, t1 = 0;  // time the step spans over all devices (us), for drill-down
};

struct WaitHeatmap {
  int rows = 0;                      // one per lane (Trace::lanes order)
  std::vector<HeatColumn> columns;   // sorted by t0
  std::vector<double> wait_us;       // rows x columns, row-major: summed `wait` durations
  double max_us = 0;                 // the largest cell
  std::vector<double> row_total_us;  // per lane
  double at(int row, int col) const {
    return wait_us[static_cast<std::size_t>(row) * columns.size() + static_cast<std::size_t>(col)];
  }
  // The column of (layer, pass, step), -1 if none.
  int column_of(std::int32_t layer, PassKind pass, std::int32_t step) const;
};

// Bins every `wait` event with a step (>= 0) into its lane's row and its
// (layer, pass, step) column. Events outside the ring steps (step -1: final
// reduce, collectives) have no column and are left out.
WaitHeatmap bin_waits(const Trace& trace);

}  // namespace ringsim::gui
