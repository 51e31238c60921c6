#pragma once
// Search/filter of a timeline: which phases, devices, steps, pass and layer
// to show. Written as words, e.g. "wait device=0-7 step=3 pass=bwd"; the
// filtered trace is an ordinary Trace, so every view, the statistics and the
// Perfetto export work on it unchanged. Plain C++ with no Qt (unit-tested).
#include <cstdint>
#include <string>

#include "gui/trace_model.hpp"

namespace ringsim::gui {

struct EventFilter {
  std::uint32_t phases = 0;            // bit p for Phase p; 0: every phase
  int device_lo = -1, device_hi = -1;  // inclusive; -1: any
  int step_lo = -1, step_hi = -1;      // inclusive; -1: any
  PassKind pass = PassKind::Unknown;   // Unknown: any
  int layer = -1;                      // -1: any
  bool any() const {
    return phases != 0 || device_lo >= 0 || step_lo >= 0 || pass != PassKind::Unknown || layer >= 0;
  }
  bool matches(const Event& e) const;
};

// Parses space-separated terms: a phase name ("wait", "send"; "phase=wait,send"),
// "device=N" or "device=A-B" ("dev"), "step=N" or "step=A-B", "pass=fwd|bwd"
// (or just "fwd" / "bwd"), "layer=N". Empty text: no filter. On a bad term,
// returns false with a one-line `error` that names the term and what is allowed.
bool parse_filter(const std::string& text, EventFilter* out, std::string* error);

// The events that match, with lanes for the devices that keep any (and, with
// no device term, every lane, so idle devices still show).
Trace filter_trace(const Trace& trace, const EventFilter& f);

}  // namespace ringsim::gui
