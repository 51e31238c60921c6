#pragma once
// Level of detail: what to draw for one lane row at the current zoom. Either
// the events themselves (when few are visible) or, per pixel column, the phase
// that covers most of that column, merged into runs of equal columns. Either
// way a row costs at most O(columns) drawing primitives, whatever the trace size.
#include <array>
#include <cstdint>
#include <vector>

#include "gui/lane_layout.hpp"
#include "gui/trace_model.hpp"

namespace ringsim::gui {

inline constexpr int kDensityLevels = 4;

struct ColumnRun {
  int x0 = 0, x1 = 0;  // pixel columns [x0, x1) of the plot
  Phase phase = Phase::Other;
  std::uint8_t level = kDensityLevels;  // 1..kDensityLevels: how busy the columns are
};

class Binner {
 public:
  // Runs for rows `rows` of lanes [first, last) over [t0, t1) split into
  // `columns` columns. The result lives until the next call.
  const std::vector<ColumnRun>& runs(const Trace& trace, int first, int last, RowMask rows,
                                     double t0, double t1, int columns);
  // Fraction of [t0, t1) each phase covers in rows `rows` of lanes [first,
  // last), averaged over the lanes; for tooltips on grouped lanes.
  static std::array<double, kPhaseCount> cover(const Trace& trace, int first, int last,
                                               RowMask rows, double t0, double t1);

 private:
  std::vector<float> cover_;  // columns x kPhaseCount
  std::vector<ColumnRun> runs_;
};

// Events in rows `rows` of a lane that overlap [t0, t1).
std::size_t visible_count(const Trace& trace, int lane, RowMask rows, double t0, double t1);
// The event in rows `rows` of a lane under time t (within `tolerance` us),
// preferring one that contains t, then the shortest (the most specific); -1
// if none.
long hit_event(const Trace& trace, int lane, RowMask rows, double t, double tolerance);

}  // namespace ringsim::gui
