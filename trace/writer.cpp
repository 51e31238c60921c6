#include "trace/writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <stdexcept>

#include "models/core/atomic_file.hpp"
#include "trace/layout.hpp"

namespace ringsim::trace {

const char* pass_name(Pass p) {
  return p == Pass::Fwd ? "fwd" : p == Pass::Bwd ? "bwd" : "";
}

namespace {

std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump();
}

// Ticks of 10^-decimals us as a fixed-point number: exact, so what the track
// plan checked (integer ticks) is what the file says.
std::string ticks_text(Tick t, int decimals) {
  if (decimals <= 0) return std::to_string(t);
  std::int64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  const bool neg = t < 0;
  const auto a = neg ? -static_cast<std::uint64_t>(t) : static_cast<std::uint64_t>(t);
  return fmt::format("{}{}.{:0{}}", neg ? "-" : "", a / static_cast<std::uint64_t>(scale),
                     a % static_cast<std::uint64_t>(scale), decimals);
}

}  // namespace

bool write_trace(const std::string& path, const std::string& flag, const std::vector<Lane>& lanes,
                 const std::vector<std::vector<Event>>& events, const nlohmann::json& ringsim,
                 const WriteOptions& options) {
  AtomicFile file(path, flag);
  if (!write_trace(file, lanes, events, ringsim, options)) return false;
  file.commit();
  return true;
}

bool write_trace(AtomicFile& file, const std::vector<Lane>& lanes,
                 const std::vector<std::vector<Event>>& events, const nlohmann::json& ringsim,
                 const WriteOptions& options) {
  if (events.size() != lanes.size())
    throw std::invalid_argument("write_trace: one event list per lane");
  const int p = options.decimals;
  std::vector<std::int32_t> devices;
  for (const auto& l : lanes) devices.push_back(l.device);
  const Plan plan = plan_tracks(devices, events, p);
  const std::int64_t k = plan.per_device;
  auto tid = [&](std::size_t lane, int slot) { return lanes[lane].device * k + slot; };
  auto ts = [&](Tick t) { return ticks_text(t, p); };

  FormattedOut out(file);
  out.put("{{\n\"displayTimeUnit\": \"{}\",\n\"traceEvents\": [\n",
          display_time_unit(static_cast<double>(plan.last - plan.first) / std::pow(10.0, p)));
  bool first = true;
  auto sep = [&] {
    if (!first) out.put(",\n");
    first = false;
  };
  std::set<std::int64_t> named;
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    const auto& l = lanes[i];
    if (named.insert(l.pid).second) {
      sep();
      out.put(
          R"({{"name": "process_name", "ph": "M", "pid": {}, "tid": 0, "args": {{"name": {}}}}})",
          l.pid, json_string(l.process));
      sep();
      out.put(
          R"({{"name": "process_sort_index", "ph": "M", "pid": {}, "tid": 0, "args": {{"sort_index": {}}}}})",
          l.pid, l.pid);
    }
    // A lane with no events still gets its compute track named (every device listed).
    std::vector<Track> tracks = plan.lanes[i].tracks;
    if (tracks.empty()) tracks.push_back({});
    for (const auto& t : tracks) {
      const std::string name =
          t.nth == 0
              ? fmt::format("{} \u00b7 {}", l.thread, activity_name(t.activity))
              : fmt::format("{} \u00b7 {} {}", l.thread, activity_name(t.activity), t.nth + 1);
      sep();
      // args.device: readers map the track back to its device (trace/reader.hpp).
      out.put(
          R"({{"name": "thread_name", "ph": "M", "pid": {}, "tid": {}, "args": {{"name": {}, "device": {}}}}})",
          l.pid, tid(i, t.slot), json_string(name), l.device);
      sep();
      out.put(
          R"({{"name": "thread_sort_index", "ph": "M", "pid": {}, "tid": {}, "args": {{"sort_index": {}}}}})",
          l.pid, tid(i, t.slot), tid(i, t.slot));
    }
  }
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    if (options.stop && options.stop()) return false;
    const auto& l = lanes[i];
    const auto& lp = plan.lanes[i];
    for (const std::size_t j : lp.order) {
      const Event* e = &events[i][j];
      sep();
      out.put(R"({{"name": "{}", "cat": "{}", "ph": "X", "pid": {}, "tid": {}, "ts": {}, )",
              phase_name(e->phase), category_name(phase_category(e->phase)), l.pid,
              tid(i, lp.tracks[static_cast<std::size_t>(lp.track_of[j])].slot), ts(lp.start[j]));
      out.put(R"("dur": {}, "args": {{"device": {}, "step": {}, "kv_block": {}, "bytes": {})",
              ts(lp.end[j] - lp.start[j]), l.device, e->step, e->kv_block, e->bytes);
      if (e->phase == Phase::Partial) out.put(R"(, "entries": {})", e->entries);
      if (e->executed > 0) out.put(R"(, "executed": {})", e->executed);
      if (e->peer >= 0) out.put(R"(, "peer": {})", e->peer);
      if (e->round >= 0) out.put(R"(, "round": {})", e->round);
      if (e->pass != Pass::Unknown) out.put(R"(, "pass": "{}")", pass_name(e->pass));
      if (e->layer >= 0) out.put(R"(, "layer": {})", e->layer);
      out.put("}}}}");
    }
  }
  // Flow arrows, send to receive. Each flow event carries its slice's cat, pid,
  // tid and ts, so it binds to that slice in every viewer ("bp": "e": the
  // enclosing slice for the finish).
  std::int64_t id = 0;
  for (const auto& f : plan.flows) {
    ++id;
    const auto& s = plan.lanes[f.send_lane];
    const auto& r = plan.lanes[f.recv_lane];
    sep();
    out.put(
        R"({{"name": "transfer", "cat": "comm", "ph": "s", "id": {}, "pid": {}, "tid": {}, "ts": {}}})",
        id, lanes[f.send_lane].pid,
        tid(f.send_lane, s.tracks[static_cast<std::size_t>(s.track_of[f.send_event])].slot),
        ts(s.start[f.send_event]));
    sep();
    out.put(
        R"({{"name": "transfer", "cat": "comm", "ph": "f", "bp": "e", "id": {}, "pid": {}, "tid": {}, "ts": {}}})",
        id, lanes[f.recv_lane].pid,
        tid(f.recv_lane, r.tracks[static_cast<std::size_t>(r.track_of[f.recv_event])].slot),
        ts(r.start[f.recv_event]));
  }
  for (const auto& c : link_counters(devices, events, plan)) {
    if (options.stop && options.stop()) return false;
    for (const auto& [t, bytes] : c.points) {
      sep();
      out.put(
          R"({{"name": "link {}->{}", "cat": "derived", "ph": "C", "pid": {}, "ts": {}, "args": {{"bytes in flight": {}}}}})",
          c.from, c.to, lanes[c.lane].pid, ts(t), bytes);
    }
  }
  out.put("\n],\n\"otherData\": {{\"ringsim\": {}}}\n}}\n", ringsim.dump());
  out.flush();
  return !(options.stop && options.stop());
}

}  // namespace ringsim::trace
