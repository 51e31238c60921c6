#pragma once
// The critical device and the critical path of a trace. The run ends when its
// last device does; walking back from that device's last event through what
// it waited for - the previous event on its own lane, or, after a `wait`, the
// `send` on the neighbour whose arrival released it - gives the chain of
// events that set the total time. Shortening anything off the chain does not
// shorten the run. Plain C++ with no Qt (unit-tested on hand-built traces).
#include <cstdint>
#include <vector>

#include "gui/trace_model.hpp"

namespace ringsim::gui {

struct CriticalPath {
  int device = -1;            // the device that finishes last (ties: the one that waits least)
  double end_us = 0;          // when it finishes
  double device_wait_us = 0;  // its total `wait` time
  std::vector<std::uint32_t> events;  // the chain, earliest first (indices into Trace::events)
};

// The device whose last event ends last; among devices that end within
// `tolerance` us of it, the one with the least `wait` time (the device the
// others wait for, not one that merely finishes with them). -1 if no events.
int critical_device(const Trace& trace, double tolerance_us = -1);

// Walks back from the critical device's last blocking event. "Blocking" is
// every phase but `send` and `recv` (those run beside the compute on a ring).
// A `wait` is released by the `send` from its `recv`'s peer that ends when the
// wait ends; any other event by the blocking event that ended just before it
// started on the same device. Stops at the trace's start.
CriticalPath critical_path(const Trace& trace);

}  // namespace ringsim::gui
