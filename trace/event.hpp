#pragma once
// One activity of one device: the record the simulator and the MPI ring write
// and the reader returns (docs/trace-format.md). Times are microseconds, the
// format's unit: absolute in a writer's hands, relative to the trace's first
// event once read.
#include <cstdint>

#include "trace/phase.hpp"

namespace ringsim::trace {

enum class Pass : std::uint8_t { Unknown, Fwd, Bwd };
const char* pass_name(Pass p);  // "fwd", "bwd", "" for Unknown

struct Event {
  double start = 0;  // microseconds
  double dur = 0;    // microseconds
  std::uint64_t bytes = 0;
  std::uint64_t entries = 0;   // score entries of a `partial`, 0 otherwise
  std::uint64_t executed = 0;  // of a `partial`: entries its kernel computes in tiles (0: unknown)
  std::int32_t device = 0;
  std::int32_t step = -1;      // ring step, -1 outside the ring steps
  std::int32_t kv_block = -1;  // whose K/V block, -1 when not applicable
  std::int32_t peer = -1;      // the other end of a transfer, -1 when none
  std::int32_t layer = -1;     // -1: not written (single-layer tools)
  std::int32_t round = -1;     // collectives: 1-based round, -1 otherwise
  std::uint32_t name_id = 0;   // read traces: index into the file's names
  Phase phase = Phase::Other;
  Pass pass = Pass::Unknown;
  double end() const { return start + dur; }
};

}  // namespace ringsim::trace
