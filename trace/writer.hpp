#pragma once
// The one trace writer (docs/trace-format.md): the SimGrid model's --trace and
// the MPI ring's --trace both go through it. Events are written per lane,
// sorted by start then name, with fixed-precision times, so identical inputs
// give byte-identical files; the file appears whole or not at all (AtomicFile).
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/core/atomic_file.hpp"
#include "trace/event.hpp"

namespace ringsim::trace {

// One timeline row: a device (thread `tid` = device) inside a process (`pid`,
// a node or host). Lanes of one process should be adjacent.
struct Lane {
  std::int32_t device = 0;
  std::int64_t pid = 0;
  std::string process;  // process_name metadata, written once per pid
  std::string thread;   // thread_name metadata
};

struct WriteOptions {
  int decimals = 6;            // of ts and dur in microseconds (6: picoseconds)
  std::function<bool()> stop;  // polled between lanes; true: abandon the file
};

// `events[i]` belongs to `lanes[i]`; `ringsim` becomes otherData.ringsim.
// Throws InputError naming `flag` and the path on I/O errors; returns false
// (and leaves no file) when `stop` asked to stop.
bool write_trace(const std::string& path, const std::string& flag, const std::vector<Lane>& lanes,
                 const std::vector<std::vector<Event>>& events, const nlohmann::json& ringsim,
                 const WriteOptions& options = {});
// The same into an open file, left uncommitted (for commit_all with other outputs).
bool write_trace(AtomicFile& file, const std::vector<Lane>& lanes,
                 const std::vector<std::vector<Event>>& events, const nlohmann::json& ringsim,
                 const WriteOptions& options = {});

}  // namespace ringsim::trace
