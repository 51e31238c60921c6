#include "gui/lod.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ringsim::gui {

namespace {

template <typename F>
void for_rows(const Trace& trace, int lane, RowMask rows, F&& f) {
  const Lane& l = trace.lanes[static_cast<std::size_t>(lane)];
  for (int r = 0; r < kRowCount; ++r)
    if (rows & (1u << r)) f(l.rows[static_cast<std::size_t>(r)]);
}

}  // namespace

const std::vector<ColumnRun>& Binner::runs(const Trace& trace, int first, int last, RowMask rows,
                                           double t0, double t1, int columns) {
  runs_.clear();
  if (columns <= 0 || !(t1 > t0) || first >= last) return runs_;
  cover_.assign(static_cast<std::size_t>(columns) * kPhaseCount, 0.0f);
  const double col_us = (t1 - t0) / columns;
  for (int lane = first; lane < last; ++lane) {
    for_rows(trace, lane, rows, [&](const RowIndex& idx) {
      const auto [a, b] = idx.overlapping(trace.events, t0, t1);
      for (std::size_t k = a; k < b; ++k) {
        const Event& e = trace.events[idx.events[k]];
        const double x0 = std::max(0.0, (e.start - t0) / col_us);
        const double x1 = std::min(static_cast<double>(columns), (e.end() - t0) / col_us);
        if (!(x1 > x0)) continue;
        const int c0 = static_cast<int>(x0);
        const int c1 = std::min(columns, static_cast<int>(std::ceil(x1)));
        float* cell =
            &cover_[static_cast<std::size_t>(c0) * kPhaseCount + static_cast<int>(e.phase)];
        for (int c = c0; c < c1; ++c, cell += kPhaseCount)
          *cell += static_cast<float>(std::min(x1, c + 1.0) - std::max(x0, static_cast<double>(c)));
      }
    });
  }
  const float lanes = static_cast<float>(last - first);
  for (int c = 0; c < columns; ++c) {
    const float* cell = &cover_[static_cast<std::size_t>(c) * kPhaseCount];
    int best = 0;
    float total = 0;
    for (int p = 0; p < kPhaseCount; ++p) {
      total += cell[p];
      if (cell[p] > cell[best]) best = p;
    }
    // Rows that overlap in time (compute under a send) can sum past 1.
    const float busy = std::min(1.0f, total / lanes);
    // Below 1/20 of a column the colour would be noise; leave it blank.
    if (busy < 0.05f) continue;
    const auto level = static_cast<std::uint8_t>(
        std::clamp(static_cast<int>(std::ceil(busy * kDensityLevels)), 1, kDensityLevels));
    const auto phase = static_cast<Phase>(best);
    if (!runs_.empty() && runs_.back().x1 == c && runs_.back().phase == phase &&
        runs_.back().level == level)
      runs_.back().x1 = c + 1;
    else
      runs_.push_back({c, c + 1, phase, level});
  }
  return runs_;
}

std::array<double, kPhaseCount> Binner::cover(const Trace& trace, int first, int last, RowMask rows,
                                              double t0, double t1) {
  std::array<double, kPhaseCount> out{};
  if (!(t1 > t0) || first >= last) return out;
  for (int lane = first; lane < last; ++lane) {
    for_rows(trace, lane, rows, [&](const RowIndex& idx) {
      const auto [a, b] = idx.overlapping(trace.events, t0, t1);
      for (std::size_t k = a; k < b; ++k) {
        const Event& e = trace.events[idx.events[k]];
        const double len = std::min(t1, e.end()) - std::max(t0, e.start);
        if (len > 0) out[static_cast<int>(e.phase)] += len;
      }
    });
  }
  for (double& v : out) v /= (t1 - t0) * (last - first);
  return out;
}

std::size_t visible_count(const Trace& trace, int lane, RowMask rows, double t0, double t1) {
  std::size_t n = 0;
  for_rows(trace, lane, rows, [&](const RowIndex& idx) {
    const auto [a, b] = idx.overlapping(trace.events, t0, t1);
    n += b - a;
  });
  return n;
}

long hit_event(const Trace& trace, int lane, RowMask rows, double t, double tolerance) {
  if (lane < 0 || lane >= static_cast<int>(trace.lanes.size())) return -1;
  long best = -1;
  double best_dist = std::numeric_limits<double>::infinity(), best_dur = best_dist;
  for_rows(trace, lane, rows, [&](const RowIndex& idx) {
    const auto [a, b] = idx.overlapping(trace.events, t - tolerance, t + tolerance);
    for (std::size_t k = a; k < b; ++k) {
      const Event& e = trace.events[idx.events[k]];
      const double dist = t < e.start ? e.start - t : t > e.end() ? t - e.end() : 0.0;
      if (dist > tolerance) continue;
      if (dist < best_dist || (dist == best_dist && e.dur < best_dur)) {
        best = idx.events[k];
        best_dist = dist;
        best_dur = e.dur;
      }
    }
  });
  return best;
}

}  // namespace ringsim::gui
