#pragma once
// Reads a trace in the format of docs/trace-format.md (Chrome Trace Event JSON,
// object or bare-array form). Streams the JSON (SAX), so a 200k-event file
// never exists as a DOM. Anything malformed - bad JSON, truncation, wrong
// types, non-finite or out-of-range numbers, no events - throws
// ringsim::InputError with one line that names the origin and the event.
#include <cstddef>
#include <string>
#include <string_view>

#include "gui/trace_model.hpp"

namespace ringsim::gui {

// Limits that keep a hostile file from asking for absurd memory or overflowing.
inline constexpr std::int64_t kMaxDevices = std::int64_t{1} << 20;
inline constexpr std::int64_t kMaxSteps = std::int64_t{1} << 24;
inline constexpr double kMaxTimeUs = 1e15;  // about 31 years
inline constexpr std::size_t kMaxEvents = 50'000'000;
inline constexpr std::size_t kMaxFileBytes = std::size_t{2} << 30;

Trace parse_trace(std::string_view json, const std::string& origin = "<memory>");
Trace read_trace_file(const std::string& path);

}  // namespace ringsim::gui
