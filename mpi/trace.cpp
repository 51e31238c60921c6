#include "mpi/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "models/errors.hpp"

namespace ringsim::mpi {

namespace {

const char* category(const std::string& name) {
  return name == "partial" || name == "merge" ? "compute" : "comm";
}

// Microseconds with fixed precision (the format's unit); nanosecond resolution
// is all MPI_Wtime offers on most systems.
std::string micros(double seconds) {
  return fmt::format("{:.3f}", seconds * 1e6);
}

}  // namespace

std::string encode_events(const std::vector<Event>& events) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& e : events)
    a.push_back({e.name, e.pass, e.ts, e.dur, e.step, e.kv_block, e.bytes, e.peer, e.entries});
  return a.dump();
}

std::vector<Event> decode_events(const std::string& text) {
  std::vector<Event> out;
  for (const auto& x : nlohmann::json::parse(text)) {
    Event e;
    e.name = x[0].get<std::string>();
    e.pass = x[1].get<std::string>();
    e.ts = x[2].get<double>();
    e.dur = x[3].get<double>();
    e.step = x[4].get<std::int64_t>();
    e.kv_block = x[5].get<std::int64_t>();
    e.bytes = x[6].get<std::int64_t>();
    e.peer = x[7].get<std::int64_t>();
    e.entries = x[8].get<std::uint64_t>();
    out.push_back(std::move(e));
  }
  return out;
}

void write_trace(const std::string& path, const std::vector<std::vector<Event>>& events,
                 const std::vector<std::string>& hosts, const nlohmann::json& ringsim) {
  // pid: one per distinct host, numbered in order of its first rank.
  std::map<std::string, int> host_pid;
  std::vector<int> pid(hosts.size());
  std::vector<std::string> pid_host;
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    auto [it, added] = host_pid.emplace(hosts[r], static_cast<int>(pid_host.size()));
    if (added) pid_host.push_back(hosts[r]);
    pid[r] = it->second;
  }

  std::vector<std::string> lines;
  for (std::size_t p = 0; p < pid_host.size(); ++p)
    lines.push_back(fmt::format(
        R"({{"name": "process_name", "ph": "M", "pid": {}, "tid": 0, "args": {{"name": {}}}}})", p,
        nlohmann::json(fmt::format("node {} ({})", p, pid_host[p])).dump()));
  for (std::size_t r = 0; r < hosts.size(); ++r)
    lines.push_back(fmt::format(
        R"({{"name": "thread_name", "ph": "M", "pid": {}, "tid": {}, "args": {{"name": "rank {}"}}}})",
        pid[r], r, r));
  for (std::size_t r = 0; r < events.size(); ++r) {
    auto ev = events[r];
    std::stable_sort(ev.begin(), ev.end(), [](const Event& a, const Event& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.name < b.name;
    });
    for (const auto& e : ev) {
      std::string args = fmt::format(R"("device": {}, "step": {}, "kv_block": {}, "bytes": {})", r,
                                     e.step, e.kv_block, e.bytes);
      if (e.name == "partial") args += fmt::format(R"(, "entries": {})", e.entries);
      if (e.peer >= 0) args += fmt::format(R"(, "peer": {})", e.peer);
      args += fmt::format(R"(, "pass": "{}")", e.pass);
      lines.push_back(fmt::format(
          R"({{"name": "{}", "cat": "{}", "ph": "X", "pid": {}, "tid": {}, "ts": {}, "dur": {}, "args": {{{}}}}})",
          e.name, category(e.name), pid[r], r, micros(e.ts), micros(e.dur), args));
    }
  }

  std::ofstream f(path);
  if (!f) throw InputError(fmt::format("--trace {}: cannot open for writing", path));
  f << "{\n  \"displayTimeUnit\": \"ns\",\n  \"traceEvents\": [\n";
  for (std::size_t i = 0; i < lines.size(); ++i)
    f << "    " << lines[i] << (i + 1 < lines.size() ? ",\n" : "\n");
  f << "  ],\n  \"otherData\": {\"ringsim\": " << ringsim.dump() << "}\n}\n";
  if (!f) throw InputError(fmt::format("--trace {}: write failed", path));
}

}  // namespace ringsim::mpi
