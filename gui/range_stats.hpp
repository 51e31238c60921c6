#pragma once
// What the devices did in a selected time range: time per phase, and each
// device's time split into compute, waiting, other communication and idle.
// Plain C++ with no Qt (unit-tested); the timeline shows it for a dragged range.
#include <array>

#include "gui/trace_model.hpp"

namespace ringsim::gui {

struct RangeStats {
  double t0 = 0, t1 = 0;
  int devices = 0;  // lanes counted
  // Sum over the devices of each phase's event time clipped to [t0, t1]
  // (events of one phase on one device that overlap count once).
  std::array<double, kPhaseCount> phase_us{};
  // Per device d, over [t0, t1], summed over the devices:
  //   compute = |compute(d)|                        (any compute phase)
  //   wait    = |wait(d) \ compute(d)|              (blocked on a transfer)
  //   comm    = |comm(d) \ (compute(d) U wait(d))|  (a link busy, nothing else)
  //   idle    = (t1 - t0) - |everything(d)|         (idle phase included)
  double compute_us = 0, wait_us = 0, comm_us = 0, idle_us = 0;
  double device_us() const { return devices * (t1 - t0); }  // the whole: compute+wait+comm+idle
};

// Lanes [first, last) of the trace (all when last < 0) over [t0, t1].
RangeStats range_stats(const Trace& trace, double t0, double t1, int first = 0, int last = -1);

}  // namespace ringsim::gui
