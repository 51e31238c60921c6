#include "mpi/trace.hpp"

#include <fmt/format.h>

#include <map>

#include "trace/writer.hpp"

namespace ringsim::mpi {

std::string encode_events(const std::vector<Event>& events) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& e : events)
    a.push_back({static_cast<int>(e.phase), static_cast<int>(e.pass), e.start, e.dur, e.step,
                 e.kv_block, e.bytes, e.peer, e.entries});
  return a.dump();
}

std::vector<Event> decode_events(const std::string& text) {
  std::vector<Event> out;
  for (const auto& x : nlohmann::json::parse(text)) {
    Event e;
    e.phase = static_cast<Phase>(x[0].get<int>());
    e.pass = static_cast<trace::Pass>(x[1].get<int>());
    e.start = x[2].get<double>();
    e.dur = x[3].get<double>();
    e.step = x[4].get<std::int32_t>();
    e.kv_block = x[5].get<std::int32_t>();
    e.bytes = x[6].get<std::uint64_t>();
    e.peer = x[7].get<std::int32_t>();
    e.entries = x[8].get<std::uint64_t>();
    out.push_back(e);
  }
  return out;
}

void write_trace(const std::string& path, const std::vector<std::vector<Event>>& events,
                 const std::vector<std::string>& hosts, const nlohmann::json& ringsim) {
  // pid: one per distinct host, numbered in order of its first rank.
  std::map<std::string, std::int64_t> host_pid;
  std::vector<trace::Lane> lanes;
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    const auto [it, added] = host_pid.emplace(hosts[r], static_cast<std::int64_t>(host_pid.size()));
    lanes.push_back({static_cast<std::int32_t>(r), it->second,
                     fmt::format("node {} ({})", it->second, hosts[r]), fmt::format("rank {}", r)});
  }
  std::vector<std::vector<Event>> per_lane(events);
  per_lane.resize(lanes.size());
  for (std::size_t r = 0; r < per_lane.size(); ++r)
    for (auto& e : per_lane[r]) e.device = static_cast<std::int32_t>(r);
  trace::WriteOptions opt;
  opt.decimals = 3;  // nanoseconds: all MPI_Wtime resolves on most systems
  trace::write_trace(path, "--trace", lanes, per_lane, ringsim, opt);
}

}  // namespace ringsim::mpi
