#pragma once
// The real run's timeline in the trace format (docs/trace-format.md), written
// by the one trace writer (trace/writer.hpp): one process per host, one
// thread per rank. Each rank serialises its events; rank 0 writes the file.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mpi/ring.hpp"

namespace ringsim::mpi {

// One rank's events as compact text for gathering, and back.
std::string encode_events(const std::vector<Event>& events);
std::vector<Event> decode_events(const std::string& text);

// Rank 0: writes the trace. `events[r]` and `hosts[r]` belong to rank r;
// `ringsim` becomes otherData.ringsim (run description and summary).
void write_trace(const std::string& path, const std::vector<std::vector<Event>>& events,
                 const std::vector<std::string>& hosts, const nlohmann::json& ringsim);

}  // namespace ringsim::mpi
