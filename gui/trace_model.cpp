#include "gui/trace_model.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace ringsim::gui {

Row row_of(Phase p) {
  switch (p) {
    case Phase::Send:
    case Phase::AllToAll:
    case Phase::AllGather:
    case Phase::ReduceScatter:
    case Phase::OtherComm:
      return Row::Send;
    case Phase::Recv:
    case Phase::Wait:
      return Row::Recv;
    default:
      return Row::Compute;
  }
}

std::pair<std::size_t, std::size_t> RowIndex::overlapping(const std::vector<Event>& all, double t0,
                                                          double t1) const {
  // First event whose running max end passes t0: nothing before it reaches t0.
  const auto first = std::upper_bound(max_end.begin(), max_end.end(), t0) - max_end.begin();
  // One past the last event that starts before t1.
  const auto last = std::partition_point(events.begin() + first, events.end(),
                                         [&](std::uint32_t i) { return all[i].start < t1; }) -
                    events.begin();
  return {static_cast<std::size_t>(first), static_cast<std::size_t>(std::max(first, last))};
}

int Trace::lane_of_device(std::int32_t device) const {
  const auto it = std::lower_bound(lanes.begin(), lanes.end(), device,
                                   [](const Lane& l, std::int32_t d) { return l.device < d; });
  if (it == lanes.end() || it->device != device) return -1;
  return static_cast<int>(it - lanes.begin());
}

bool step_range(const Trace& trace, std::int32_t step, double* t0, double* t1) {
  // (layer, pass) -> [start, end] of the step within it.
  std::map<std::pair<std::int32_t, int>, std::pair<double, double>> groups;
  for (const Event& e : trace.events) {
    if (e.step != step) continue;
    auto [it, fresh] =
        groups.emplace(std::pair{e.layer, static_cast<int>(e.pass)}, std::pair{e.start, e.end()});
    if (!fresh) {
      it->second.first = std::min(it->second.first, e.start);
      it->second.second = std::max(it->second.second, e.end());
    }
  }
  if (groups.empty()) return false;
  const auto earliest = std::min_element(
      groups.begin(), groups.end(),
      [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
  *t0 = earliest->second.first;
  *t1 = earliest->second.second;
  return true;
}

void build_lanes(Trace& trace, const std::vector<std::pair<std::int32_t, std::string>>& lane_names,
                 std::int64_t described_devices) {
  std::set<std::int32_t> devices;
  for (std::int64_t d = 0; d < described_devices; ++d) devices.insert(static_cast<std::int32_t>(d));
  for (const auto& e : trace.events) devices.insert(e.device);

  std::map<std::int32_t, std::string> names(lane_names.begin(), lane_names.end());
  trace.lanes.clear();
  trace.lanes.reserve(devices.size());
  for (const std::int32_t d : devices) {
    Lane lane;
    lane.device = d;
    const auto it = names.find(d);
    lane.name =
        it != names.end() && !it->second.empty() ? it->second : "device " + std::to_string(d);
    trace.lanes.push_back(std::move(lane));
  }

  for (std::size_t i = 0; i < trace.events.size(); ++i) {
    const Event& e = trace.events[i];
    Lane& lane = trace.lanes[static_cast<std::size_t>(trace.lane_of_device(e.device))];
    lane.rows[static_cast<int>(row_of(e.phase))].events.push_back(static_cast<std::uint32_t>(i));
  }

  const auto& ev = trace.events;
  for (Lane& lane : trace.lanes) {
    // A step starts once per (layer, pass) in runs that cover several.
    std::map<std::tuple<std::int32_t, int, std::int32_t>, double> step_start;
    for (RowIndex& row : lane.rows) {
      std::stable_sort(row.events.begin(), row.events.end(),
                       [&](std::uint32_t a, std::uint32_t b) { return ev[a].start < ev[b].start; });
      row.max_end.resize(row.events.size());
      double running = -1e300;
      for (std::size_t k = 0; k < row.events.size(); ++k) {
        const Event& e = ev[row.events[k]];
        running = std::max(running, e.end());
        row.max_end[k] = running;
        if (e.step >= 0) {
          auto [it, fresh] =
              step_start.emplace(std::tuple{e.layer, static_cast<int>(e.pass), e.step}, e.start);
          if (!fresh) it->second = std::min(it->second, e.start);
        }
      }
    }
    for (const auto& [key, start] : step_start) lane.step_starts.push_back(start);
    std::sort(lane.step_starts.begin(), lane.step_starts.end());
  }
}

Trace parse_trace(std::string_view json, const std::string& origin) {
  Trace t;
  static_cast<trace::Contents&>(t) = trace::parse_trace(json, origin);
  build_lanes(t, t.lane_names, t.run.devices);
  return t;
}

Trace read_trace_file(const std::string& path) {
  Trace t;
  static_cast<trace::Contents&>(t) = trace::read_trace_file(path);
  build_lanes(t, t.lane_names, t.run.devices);
  return t;
}

}  // namespace ringsim::gui
