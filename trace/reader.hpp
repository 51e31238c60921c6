#pragma once
// The one trace reader (docs/trace-format.md; Chrome Trace Event JSON, object
// or bare-array form). Streams the JSON (SAX), so a 200k-event file never
// exists as a DOM. Anything malformed - bad JSON, truncation, wrong types,
// non-finite or out-of-range numbers, no events - throws ringsim::InputError
// with one line that names the origin and the event. Plain C++: the GUI, the
// tests and the fuzzers read traces with it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/event.hpp"

namespace ringsim::trace {

// Limits that keep a hostile file from asking for absurd memory or overflowing.
inline constexpr std::int64_t kMaxDevices = std::int64_t{1} << 20;
inline constexpr std::int64_t kMaxSteps = std::int64_t{1} << 24;
inline constexpr double kMaxTimeUs = 1e15;  // about 31 years
inline constexpr std::size_t kMaxEvents = 50'000'000;
inline constexpr std::size_t kMaxFileBytes = std::size_t{2} << 30;

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

// What a trace file holds.
struct Contents {
  std::string origin;  // file name or "<memory>", for messages and titles
  std::vector<Event> events;
  std::vector<std::string> names;  // distinct event names (Event::name_id indexes them)
  std::vector<std::pair<std::int32_t, std::string>> lane_names;  // thread_name metadata
  RunInfo run;
  double origin_us = 0;  // the first event's raw ts; events are relative to it
  double end_us = 0;     // latest event end (relative)
  std::int32_t max_step = -1;
  std::size_t skipped_events = 0;  // events of kinds a timeline does not show (not "X")
  // Flow events and ringsim's own counters (cat "derived"): not drawn, and not
  // in skipped_events, since they only restate the complete events.
  std::size_t derived_events = 0;

  const std::string& name_of(const Event& e) const { return names[e.name_id]; }
};

Contents parse_trace(std::string_view json, const std::string& origin = "<memory>");
Contents read_trace_file(const std::string& path);

}  // namespace ringsim::trace
