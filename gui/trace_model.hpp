#pragma once
// A loaded trace (docs/trace-format.md) as the timeline needs it: events in one
// flat array, one lane per device, and per lane and row the events sorted by
// start so a view can find the visible ones by binary search. Plain C++ with no
// Qt, so the reader can be fuzzed and the layout tested without a display.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/reader.hpp"

namespace ringsim::gui {

// The trace format's own types (trace/): one definition of the phases and the
// event record, shared with the simulator and the MPI ring.
using trace::Event;
using trace::kPhaseCount;
using trace::Phase;
using trace::phase_label;
using trace::RunInfo;
using PassKind = trace::Pass;

// A lane has three rows: compute (partial, merge, idle), the outgoing link
// (send, collectives) and the incoming link (recv, wait). Send and receive run
// at the same time on a ring, so they need rows of their own to both be seen.
enum class Row : std::uint8_t { Compute, Send, Recv };
inline constexpr int kRowCount = 3;
Row row_of(Phase p);

// One event list of a lane row, sorted by start. `max_end[i]` is the largest
// end among the first i+1 events, which is non-decreasing even when events
// overlap, so the first event that can reach into a time range is a binary
// search away.
struct RowIndex {
  std::vector<std::uint32_t> events;
  std::vector<double> max_end;
  // [first, last) positions in `events` whose event may overlap [t0, t1).
  std::pair<std::size_t, std::size_t> overlapping(const std::vector<Event>& all, double t0,
                                                  double t1) const;
};

struct Lane {
  std::int32_t device = 0;
  std::string name;  // from thread_name metadata, else "device N"
  std::array<RowIndex, kRowCount> rows;
  std::vector<double> step_starts;  // start of each ring step on this device, sorted
};

// A trace as the timeline needs it: the file's contents plus one lane per
// device with its rows indexed.
struct Trace : trace::Contents {
  std::vector<Lane> lanes;  // sorted by device

  int lane_of_device(std::int32_t device) const;  // -1 if none
};

// Reads with the trace module's reader, then builds the lanes.
Trace parse_trace(std::string_view json, const std::string& origin = "<memory>");
Trace read_trace_file(const std::string& path);

// [t0, t1] spanned by the events of ring step `step` on all devices; false if
// the step has no events. A run over several layers or passes repeats the
// steps; the earliest (layer, pass) that has the step is taken.
bool step_range(const Trace& trace, std::int32_t step, double* t0, double* t1);

// Builds lanes, row indexes and step starts from `trace.events` and the lane
// names collected by the reader. `described_devices` (otherData.ringsim.devices,
// 0 if absent) adds empty lanes for devices 0..N-1 that have no events, so an
// idle device still shows as a lane.
void build_lanes(Trace& trace, const std::vector<std::pair<std::int32_t, std::string>>& lane_names,
                 std::int64_t described_devices);

}  // namespace ringsim::gui
