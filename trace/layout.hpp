#pragma once
// Where the writer puts each event (docs/trace-format.md, "Tracks, flows and
// counters"): one track (thread) per device and activity, so no two complete
// events of a track overlap; flow arrows from each send to its receive; and
// bytes in flight per link. Pure functions of the events, on integer ticks of
// the printed precision, so what is checked here is exactly what the file says.
#include <cstdint>
#include <string>
#include <vector>

#include "trace/event.hpp"

namespace ringsim::trace {

// The activities a device's tracks are split by. A phase belongs to one.
enum class Activity : std::uint8_t { Compute, Send, Recv, Wait, Collective, Other };
inline constexpr int kActivityCount = 6;
Activity activity_of(Phase p);
const char* activity_name(Activity a);  // "compute", "send", "recv", "wait", "collective", "other"

// A time in ticks of 10^-decimals microseconds (what the file prints).
using Tick = std::int64_t;

// One track of one lane (device): thread id device * per_device + slot.
struct Track {
  Activity activity = Activity::Compute;
  int nth = 0;   // 0: the activity's own track; 1, 2, ...: overflow tracks
  int slot = 0;  // activity index for nth 0; kActivityCount + k for the k-th overflow
};

struct LanePlan {
  std::vector<Track> tracks;       // used tracks, by slot
  std::vector<int> track_of;       // per event (the caller's order): index into tracks
  std::vector<std::size_t> order;  // the events in file order: start, longer first, name
  std::vector<Tick> start, end;    // per event, in ticks
};

struct Flow {
  std::size_t send_lane = 0, send_event = 0;
  std::size_t recv_lane = 0, recv_event = 0;
};

struct Plan {
  std::vector<LanePlan> lanes;
  std::int64_t per_device = 10;  // tid = device * per_device + slot (10, 100, ...)
  Tick first = 0, last = 0;      // earliest start, latest end (ticks)
  std::vector<Flow> flows;       // in the order of their sends (lane, then file order)
};

// Ticks of `us` microseconds at `decimals` (rounded to nearest).
Tick to_ticks(double us, int decimals);

// Places every event. `lane_devices[i]` is the device of `events[i]`'s lane.
// Overlapping events of one activity on one device go to overflow tracks
// (greedy by start: the fewest tracks that avoid overlap).
Plan plan_tracks(const std::vector<std::int32_t>& lane_devices,
                 const std::vector<std::vector<Event>>& events, int decimals);

// A send's matching receive: the receiver's `recv` with peer = sender, and the
// same pass, layer, step and kv_block; sends and receives left over on a link
// (sender, receiver, pass, layer) then pair in start order (the MPI ring's
// backward sends two blocks per step, which its receives label differently).
std::vector<Flow> match_flows(const std::vector<std::int32_t>& lane_devices,
                              const std::vector<std::vector<Event>>& events, const Plan& plan);

// One link's bytes in flight over time: (tick, bytes) at each change, starting
// at the first send's start and ending at 0. From `send` events (ring
// transfers; collectives are not counted).
struct LinkCounter {
  std::int32_t from = 0, to = 0;
  std::size_t lane = 0;  // the sender's lane (its process holds the counter)
  std::vector<std::pair<Tick, std::uint64_t>> points;
};
std::vector<LinkCounter> link_counters(const std::vector<std::int32_t>& lane_devices,
                                       const std::vector<std::vector<Event>>& events,
                                       const Plan& plan);

// "ms" when the trace lasts at least 1 ms, else "ns": the only two values the
// Trace Event Format allows for displayTimeUnit.
const char* display_time_unit(double span_us);

}  // namespace ringsim::trace
