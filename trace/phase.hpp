#pragma once
// The phases of a ring run, defined once for everything that writes or draws a
// trace (docs/trace-format.md): the SimGrid model, the MPI ring, the GUI, the
// experiments and the fuzzers. A phase's name is what the trace file says, its
// category is the file's `cat`, and its colour is the timeline's.
#include <cstdint>
#include <string>

namespace ringsim::trace {

enum class Phase : std::uint8_t {
  Partial,        // a step's blockwise attention on the held K/V block
  Merge,          // the online-softmax merge of that partial into the running output
  Send,           // a ring transfer leaving the device
  Recv,           // a ring transfer arriving
  Wait,           // blocked on a transfer after the step's compute
  AllToAll,       // Ulysses' head/sequence exchange, one event per round; a MoE layer's dispatch +
                  // combine, one per pass
  AllGather,      // all-gather CP's K/V gather, one event per round
  ReduceScatter,  // all-gather CP's dK/dV reduce-scatter, one event per round
  Dense,          // --scope layer: projections and MLP
  Launch,         // host launch time the device's work did not cover
  Accumulate,     // backward: adding a step's dQ/dK/dV into the running sums
  Reduce,         // once per pass: final casts and deferred corrections
  Idle,           // explicitly idle time (other tools' traces)
  OtherCompute,   // a name this format does not list, category "compute"
  OtherComm,      // a name this format does not list, category "comm"
  Other           // anything else
};
inline constexpr int kPhaseCount = 16;

enum class Category : std::uint8_t { Compute, Comm, Idle, None };

// The event name written for a phase ("partial", ..., "dense", "idle"); the
// three Other phases have no name of their own (a reader keeps the file's).
const char* phase_name(Phase p);
// What a legend shows: the name, or "other compute" / "other comm" / "other".
const char* phase_label(Phase p);
Category phase_category(Phase p);
// The file's `cat`: "compute", "comm", "idle", or "" for Other.
const char* category_name(Category c);
// Timeline colour, 0xRRGGBB (colour-blind-safe Tableau 10 hues: compute blue,
// send orange, receive green, waiting red, so the eye finds stalls first).
std::uint32_t phase_rgb(Phase p);

// A phase from a file's name and category (readers of any Chrome trace).
Phase phase_from_name(const std::string& name, const std::string& category);
inline bool is_compute(Phase p) {
  return phase_category(p) == Category::Compute;
}
inline bool is_comm(Phase p) {
  return phase_category(p) == Category::Comm;
}
inline bool is_collective(Phase p) {
  return p == Phase::AllToAll || p == Phase::AllGather || p == Phase::ReduceScatter;
}

}  // namespace ringsim::trace
