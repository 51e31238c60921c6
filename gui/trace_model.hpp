#pragma once
// A loaded trace (docs/trace-format.md) as the timeline needs it: events in one
// flat array, one lane per device, and per lane and row the events sorted by
// start so a view can find the visible ones by binary search. Plain C++ with no
// Qt, so the reader can be fuzzed and the layout tested without a display.
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ringsim::gui {

// The phase names of docs/trace-format.md; the colours of the timeline key on
// these. Names the format does not list (the simulator's "dense" projections,
// other tools' kernels) keep their category: compute, comm, or neither.
enum class Phase : std::uint8_t {
  Partial,
  Merge,
  Send,
  Recv,
  Wait,
  Collective,
  Idle,
  OtherCompute,
  OtherComm,
  Other
};
inline constexpr int kPhaseCount = 10;
const char* phase_label(Phase p);  // "partial", "send", ..., "other compute", "other"
Phase phase_from_name(const std::string& name, const std::string& category);
bool is_compute(Phase p);  // partial, merge, other compute
bool is_comm(Phase p);     // send, recv, wait, collectives, other comm

enum class PassKind : std::uint8_t { Unknown, Fwd, Bwd };

// A lane has three rows: compute (partial, merge, idle), the outgoing link
// (send, collectives) and the incoming link (recv, wait). Send and receive run
// at the same time on a ring, so they need rows of their own to both be seen.
enum class Row : std::uint8_t { Compute, Send, Recv };
inline constexpr int kRowCount = 3;
Row row_of(Phase p);

struct Event {
  double start = 0;  // microseconds since the trace's first event
  double dur = 0;    // microseconds
  std::int64_t bytes = 0;
  double entries = 0;  // attention-matrix entries of a compute step, 0 if absent
  std::int32_t device = 0;
  std::int32_t step = -1;
  std::int32_t kv_block = -1;
  std::int32_t peer = -1;
  std::int32_t layer = -1;    // args.layer of multi-layer runs, -1 if absent
  std::uint32_t name_id = 0;  // index into Trace::names (the event's own name)
  Phase phase = Phase::Other;
  PassKind pass = PassKind::Unknown;
  double end() const { return start + dur; }
};

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

// otherData.ringsim, when the trace has it.
struct RunInfo {
  bool present = false;
  std::string format, layout;
  std::int64_t devices = 0, steps = 0;
  // The summary object flattened to "key" / "a.b" -> value, numbers kept as numbers.
  struct Field {
    std::string key;
    bool is_number = false;
    double number = 0;
    std::string text;
  };
  std::vector<Field> summary;
  const Field* find(const std::string& key) const;
};

struct Trace {
  std::string origin;  // file name or "<memory>", for messages and titles
  std::vector<Event> events;
  std::vector<std::string> names;  // distinct event names
  std::vector<Lane> lanes;         // sorted by device
  RunInfo run;
  double origin_us = 0;  // the first event's raw ts; events are relative to it
  double end_us = 0;     // latest event end (relative)
  std::int32_t max_step = -1;
  std::size_t skipped_events = 0;  // events of kinds the timeline does not show

  int lane_of_device(std::int32_t device) const;  // -1 if none
  const std::string& name_of(const Event& e) const { return names[e.name_id]; }
};

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
