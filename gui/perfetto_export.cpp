#include "gui/perfetto_export.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "trace/writer.hpp"

namespace ringsim::gui {

namespace {

using Json = nlohmann::json;

bool all_digits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// Objects whose keys are exactly 0..n-1 were arrays before the reader flattened them.
Json rearray(Json j) {
  if (!j.is_object()) return j;
  for (auto& [k, v] : j.items()) v = rearray(std::move(v));
  bool indexed = !j.empty();
  for (std::size_t i = 0; indexed && i < j.size(); ++i) indexed = j.contains(std::to_string(i));
  for (const auto& [k, v] : j.items()) indexed = indexed && all_digits(k);
  if (!indexed) return j;
  Json arr = Json::array();
  for (std::size_t i = 0; i < j.size(); ++i) arr.push_back(j[std::to_string(i)]);
  return arr;
}

}  // namespace

Json run_metadata(const Trace& trace) {
  const RunInfo& run = trace.run;
  Json meta = Json::object();
  meta["format"] = run.format.empty() ? "ringsim-trace-1" : run.format;
  if (!run.layout.empty()) meta["layout"] = run.layout;
  meta["devices"] = run.devices > 0 ? run.devices : static_cast<std::int64_t>(trace.lanes.size());
  if (run.steps > 0) meta["steps"] = run.steps;
  meta["exported_by"] = "ringsim-gui";
  if (run.summary.empty()) return meta;
  Json summary = Json::object();
  for (const RunInfo::Field& f : run.summary) {
    Json* at = &summary;
    std::size_t pos = 0;
    for (std::size_t dot; (dot = f.key.find('.', pos)) != std::string::npos; pos = dot + 1) {
      Json& next = (*at)[f.key.substr(pos, dot - pos)];
      if (!next.is_object()) next = Json::object();
      at = &next;
    }
    // Integers stay integers (a device, a count), as the simulator wrote them.
    const bool integral =
        f.is_number && f.number == std::floor(f.number) && std::fabs(f.number) < 9e15;
    (*at)[f.key.substr(pos)] = !f.is_number ? Json(f.text)
                               : integral   ? Json(static_cast<std::int64_t>(f.number))
                                            : Json(f.number);
  }
  meta["summary"] = rearray(std::move(summary));
  return meta;
}

void export_perfetto(const Trace& trace, const RunFacts& facts, const std::string& path) {
  std::vector<trace::Lane> lanes;
  std::vector<std::vector<Event>> events(trace.lanes.size());
  for (const Lane& l : trace.lanes) {
    const int node = node_of(facts, l.device);
    lanes.push_back({l.device, node,
                     facts.gpus_per_node > 0 ? "node " + std::to_string(node) : "devices", l.name});
  }
  for (const Event& e : trace.events) {
    const int lane = trace.lane_of_device(e.device);
    if (lane < 0) continue;
    Event out = e;
    out.start += trace.origin_us;  // back to the file's own clock
    events[static_cast<std::size_t>(lane)].push_back(out);
  }
  trace::write_trace(path, "Export for Perfetto", lanes, events, run_metadata(trace));
}

}  // namespace ringsim::gui
