// Fuzz target: trace JSON (the trace reader, then the timeline's lanes), what
// `ringsim-gui FILE` opens.
// An accepted trace must be one the timeline can draw without checking again:
// finite times inside the documented limits, every event on exactly one lane
// row, rows sorted by start with a running max end, and range queries that
// stay inside their row; and a summary panel whose numbers are finite and in
// range.
#include <cmath>

#include "fuzz/target.hpp"
#include "gui/trace_model.hpp"
#include "gui/trace_summary.hpp"
#include "models/core/errors.hpp"

namespace ringsim::fuzz {

namespace {

void check(const gui::Trace& t) {
  using trace::kMaxTimeUs;
  if (t.events.empty()) finding("trace: accepted a trace without events");
  if (!std::isfinite(t.end_us) || t.end_us < 0 || t.end_us > 2 * kMaxTimeUs + kMaxTimeUs)
    finding("trace: end_us out of range");
  std::size_t placed = 0;
  for (std::size_t l = 0; l < t.lanes.size(); ++l) {
    const auto& lane = t.lanes[l];
    if (l > 0 && t.lanes[l - 1].device >= lane.device) finding("trace: lanes not sorted by device");
    if (t.lane_of_device(lane.device) != static_cast<int>(l))
      finding("trace: lane_of_device wrong");
    for (const auto& row : lane.rows) {
      if (row.max_end.size() != row.events.size()) finding("trace: max_end size differs");
      for (std::size_t k = 0; k < row.events.size(); ++k) {
        if (row.events[k] >= t.events.size()) finding("trace: row index out of range");
        const auto& e = t.events[row.events[k]];
        if (e.device != lane.device) finding("trace: event on another device's lane");
        if (k > 0 && t.events[row.events[k - 1]].start > e.start) finding("trace: row not sorted");
        if (k > 0 && row.max_end[k] < row.max_end[k - 1]) finding("trace: max_end decreases");
      }
      placed += row.events.size();
      // A few views: whole trace, an empty one, one in the middle.
      for (auto [a, b] : {std::pair{0.0, t.end_us}, std::pair{t.end_us / 2, t.end_us / 2},
                          std::pair{t.end_us / 3, t.end_us * 2 / 3}}) {
        const auto [first, last] = row.overlapping(t.events, a, b);
        if (first > last || last > row.events.size()) finding("trace: overlapping() out of range");
      }
    }
    for (std::size_t k = 1; k < lane.step_starts.size(); ++k)
      if (lane.step_starts[k - 1] > lane.step_starts[k]) finding("trace: step_starts not sorted");
  }
  if (placed != t.events.size()) finding("trace: not every event is on exactly one row");
  for (const auto& e : t.events) {
    if (!std::isfinite(e.start) || !std::isfinite(e.dur) || e.start < 0 || e.dur < 0 ||
        e.end() > t.end_us)
      finding("trace: event time out of range");
    if (e.name_id >= t.names.size()) finding("trace: name id out of range");
    if (e.device < 0 || e.device >= trace::kMaxDevices) finding("trace: event field out of range");
    if (e.step > t.max_step) finding("trace: max_step is not the largest step");
  }
  double t0 = 0, t1 = 0;
  if (t.max_step >= 0 && (!gui::step_range(t, t.max_step, &t0, &t1) || t0 > t1))
    finding("trace: step_range of max_step");
  // The summary panel's headline: finite, times >= 0, fractions in [0, 1],
  // whatever otherData.ringsim.summary says (an out-of-range value is listed,
  // never drawn as a headline); nothing listed claims to be a non-finite number.
  const auto s = gui::summarize(t);
  for (const auto* v : {&s.total_us, &s.ideal_us, &s.exposed_comm_us})
    if (!std::isfinite(v->value) || v->value < 0) finding("trace: summary time out of range");
  for (const auto* v : {&s.efficiency, &s.idle_fraction})
    if (!std::isfinite(v->value) || v->value < 0 || v->value > 1 + 1e-9)
      finding("trace: summary fraction out of range");
  for (const auto& f : s.other)
    if (f.is_number && !std::isfinite(f.number)) finding("trace: a listed number is not finite");
  for (const auto& st : s.per_step)
    if (!std::isfinite(st.compute_max_us) || !std::isfinite(st.transfer_max_us) ||
        !std::isfinite(st.bytes))
      finding("trace: per-step summary not finite");
}

}  // namespace

int trace(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    check(gui::parse_trace(text, "fuzz.json"));
  } catch (const InputError& e) {
    check_message("trace", e.what(), true);
  }
  return 0;
}

}  // namespace ringsim::fuzz

RINGSIM_FUZZ_ENTRY(trace)
