#include "gui/range_stats.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "gui/intervals.hpp"

namespace ringsim::gui {

namespace {

Intervals join(Intervals a, const Intervals& b) {
  a.insert(a.end(), b.begin(), b.end());
  return unite(std::move(a));
}

}  // namespace

RangeStats range_stats(const Trace& trace, double t0, double t1, int first, int last) {
  RangeStats s;
  if (t1 < t0) std::swap(t0, t1);
  s.t0 = t0;
  s.t1 = t1;
  const int n = static_cast<int>(trace.lanes.size());
  if (last < 0 || last > n) last = n;
  first = std::clamp(first, 0, last);
  s.devices = last - first;
  for (int l = first; l < last; ++l) {
    const Lane& lane = trace.lanes[static_cast<std::size_t>(l)];
    std::array<Intervals, kPhaseCount> per_phase;
    for (const RowIndex& row : lane.rows) {
      const auto [a, b] = row.overlapping(trace.events, t0, t1);
      for (std::size_t k = a; k < b; ++k) {
        const Event& e = trace.events[row.events[k]];
        const double lo = std::max(e.start, t0), hi = std::min(e.end(), t1);
        if (hi > lo) per_phase[static_cast<std::size_t>(e.phase)].emplace_back(lo, hi);
      }
    }
    Intervals compute, wait, comm, all;
    for (int p = 0; p < kPhaseCount; ++p) {
      Intervals u = unite(std::move(per_phase[static_cast<std::size_t>(p)]));
      s.phase_us[static_cast<std::size_t>(p)] += length(u);
      const auto phase = static_cast<Phase>(p);
      if (phase == Phase::Wait)
        wait.insert(wait.end(), u.begin(), u.end());
      else if (is_compute(phase))
        compute.insert(compute.end(), u.begin(), u.end());
      else if (is_comm(phase))
        comm.insert(comm.end(), u.begin(), u.end());
      all.insert(all.end(), u.begin(), u.end());
    }
    compute = unite(std::move(compute));
    const Intervals cw = join(compute, wait);
    const Intervals cwc = join(cw, comm);
    const double c = length(compute);
    s.compute_us += c;
    s.wait_us += length(cw) - c;
    s.comm_us += length(cwc) - length(cw);
    // Idle-phase events and unknown "other" phases count as not busy: idle.
    s.idle_us += (t1 - t0) - length(cwc);
  }
  return s;
}

}  // namespace ringsim::gui
