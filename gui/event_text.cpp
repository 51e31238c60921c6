#include "gui/event_text.hpp"

#include <cstdio>

#include "gui/trace_summary.hpp"

namespace ringsim::gui {

namespace {

const char* pass_text(PassKind p) {
  return p == PassKind::Fwd ? "fwd" : p == PassKind::Bwd ? "bwd" : "";
}

std::string maybe(std::int32_t v) {
  return v < 0 ? std::string("-") : std::to_string(v);
}

std::string lane_name(const Trace& trace, const Event& e) {
  const int lane = trace.lane_of_device(e.device);
  return lane >= 0 ? trace.lanes[static_cast<std::size_t>(lane)].name
                   : "device " + std::to_string(e.device);
}

}  // namespace

std::string event_tooltip(const Trace& trace, const Event& e) {
  std::string s = lane_name(trace, e) + " \u00b7 " + trace.name_of(e);
  if (e.pass != PassKind::Unknown) s += std::string(" (") + pass_text(e.pass) + ")";
  s += "\nstep " + maybe(e.step) + " \u00b7 KV block " + maybe(e.kv_block);
  s += "\nstart " + format_us(e.start) + " \u00b7 duration " + format_us(e.dur);
  s += "\nbytes " + format_bytes(static_cast<double>(e.bytes));
  if (e.peer >= 0)
    s += (e.phase == Phase::Send ? " \u2192 device " : " \u2190 device ") + std::to_string(e.peer);
  return s;
}

std::string event_details(const Trace& trace, const Event& e) {
  char raw[64];
  std::string s;
  s += "device: " + lane_name(trace, e) + " (index " + std::to_string(e.device) + ")\n";
  s += "phase: " + trace.name_of(e) + " (" + phase_label(e.phase) + ")\n";
  if (e.pass != PassKind::Unknown) s += std::string("pass: ") + pass_text(e.pass) + "\n";
  s += "step: " + maybe(e.step) + "\n";
  s += "KV block: " + maybe(e.kv_block) + "\n";
  std::snprintf(raw, sizeof raw, "%.3f", e.start);
  s += "start: " + format_us(e.start) + " (" + raw + " us after the first event)\n";
  std::snprintf(raw, sizeof raw, "%.3f", e.end());
  s += "end: " + format_us(e.end()) + " (" + raw + " us)\n";
  std::snprintf(raw, sizeof raw, "%.3f", e.dur);
  s += "duration: " + format_us(e.dur) + " (" + raw + " us)\n";
  s += "bytes: " + format_bytes(static_cast<double>(e.bytes)) + " (" + std::to_string(e.bytes) +
       ")\n";
  if (e.dur > 0 && e.bytes > 0) {
    // bytes / us = MB/s; shown in GB/s.
    std::snprintf(raw, sizeof raw, "%.3g GB/s", static_cast<double>(e.bytes) / e.dur / 1e3);
    s += std::string("rate: ") + raw + "\n";
  }
  if (e.peer >= 0)
    s += std::string(e.phase == Phase::Send ? "to" : "from") +
         " device: " + std::to_string(e.peer) + "\n";
  if (e.entries > 0) {
    std::snprintf(raw, sizeof raw, "%.6g", static_cast<double>(e.entries));
    s += std::string("attention entries: ") + raw + "\n";
  }
  return s;
}

}  // namespace ringsim::gui
