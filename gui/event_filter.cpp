#include "gui/event_filter.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>

namespace ringsim::gui {

namespace {

bool parse_int(const std::string& s, int* out) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && *out >= 0;
}

// "N" or "A-B" -> [lo, hi].
bool parse_range(const std::string& s, int* lo, int* hi) {
  const auto dash = s.find('-');
  if (dash == std::string::npos) {
    if (!parse_int(s, lo)) return false;
    *hi = *lo;
    return true;
  }
  return parse_int(s.substr(0, dash), lo) && parse_int(s.substr(dash + 1), hi) && *lo <= *hi;
}

int phase_by_name(const std::string& s) {
  for (int p = 0; p < kPhaseCount; ++p) {
    const auto ph = static_cast<Phase>(p);
    if (s == trace::phase_name(ph) && *trace::phase_name(ph)) return p;
  }
  return -1;
}

std::string phase_list() {
  std::string out;
  for (int p = 0; p < kPhaseCount; ++p)
    if (const char* n = trace::phase_name(static_cast<Phase>(p)); *n)
      out += (out.empty() ? "" : "|") + std::string(n);
  return out;
}

}  // namespace

bool EventFilter::matches(const Event& e) const {
  if (phases != 0 && !(phases & (1u << static_cast<unsigned>(e.phase)))) return false;
  if (device_lo >= 0 && (e.device < device_lo || e.device > device_hi)) return false;
  if (step_lo >= 0 && (e.step < step_lo || e.step > step_hi)) return false;
  if (pass != PassKind::Unknown && e.pass != pass) return false;
  if (layer >= 0 && e.layer != layer) return false;
  return true;
}

bool parse_filter(const std::string& text, EventFilter* out, std::string* error) {
  EventFilter f;
  std::istringstream in(text);
  std::string term;
  auto fail = [&](const std::string& msg) {
    *error = "filter: '" + term + "': " + msg;
    return false;
  };
  while (in >> term) {
    const auto eq = term.find('=');
    const std::string key = eq == std::string::npos ? std::string() : term.substr(0, eq);
    const std::string value = eq == std::string::npos ? term : term.substr(eq + 1);
    if (key.empty() && (value == "fwd" || value == "bwd")) {
      f.pass = value == "fwd" ? PassKind::Fwd : PassKind::Bwd;
    } else if (key.empty() || key == "phase") {
      std::istringstream names(value);
      std::string name;
      bool any = false;
      while (std::getline(names, name, ',')) {
        const int p = phase_by_name(name);
        if (p < 0) return fail("a phase is one of " + phase_list());
        f.phases |= 1u << static_cast<unsigned>(p);
        any = true;
      }
      if (!any) return fail("a phase is one of " + phase_list());
    } else if (key == "device" || key == "dev") {
      if (!parse_range(value, &f.device_lo, &f.device_hi))
        return fail("device=N or device=A-B with 0 <= A <= B");
    } else if (key == "step") {
      if (!parse_range(value, &f.step_lo, &f.step_hi))
        return fail("step=N or step=A-B with 0 <= A <= B");
    } else if (key == "pass") {
      if (value != "fwd" && value != "bwd") return fail("pass=fwd or pass=bwd");
      f.pass = value == "fwd" ? PassKind::Fwd : PassKind::Bwd;
    } else if (key == "layer") {
      if (!parse_int(value, &f.layer)) return fail("layer=N with N >= 0");
    } else {
      return fail("unknown term; use a phase, device=, step=, pass=, layer=");
    }
  }
  *out = f;
  return true;
}

Trace filter_trace(const Trace& trace, const EventFilter& f) {
  Trace out;
  static_cast<trace::Contents&>(out) = static_cast<const trace::Contents&>(trace);
  out.events.clear();
  out.max_step = -1;
  std::set<std::int32_t> devices;
  for (const Event& e : trace.events) {
    if (!f.matches(e)) continue;
    out.events.push_back(e);
    out.max_step = std::max(out.max_step, e.step);
    devices.insert(e.device);
  }
  // Lanes: every device the file described, or with a device term its range.
  std::vector<std::pair<std::int32_t, std::string>> names;
  for (const Lane& l : trace.lanes)
    if (f.device_lo < 0 || (l.device >= f.device_lo && l.device <= f.device_hi))
      names.emplace_back(l.device, l.name);
  // build_lanes adds lanes for devices with events; named lanes without events
  // are kept through the names list below.
  for (const auto& [d, n] : names) devices.insert(d);
  out.lanes.clear();
  build_lanes(out, names, 0);
  // Devices with no events in range are not in `events`: add their empty lanes.
  for (const std::int32_t d : devices) {
    if (out.lane_of_device(d) >= 0) continue;
    Lane lane;
    lane.device = d;
    for (const auto& [nd, n] : names)
      if (nd == d) lane.name = n;
    if (lane.name.empty()) lane.name = "device " + std::to_string(d);
    out.lanes.insert(std::upper_bound(out.lanes.begin(), out.lanes.end(), d,
                                      [](std::int32_t v, const Lane& l) { return v < l.device; }),
                     std::move(lane));
  }
  return out;
}

}  // namespace ringsim::gui
