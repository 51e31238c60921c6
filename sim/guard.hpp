#pragma once
// Size guard: estimate a simulation's activities and memory before starting
// it, and refuse (InputError, exit 2) past a budget, pointing to the analytic
// engine. Estimates are upper-ish bounds from the schedule's counts and
// per-object costs measured on SimGrid 3.32 (docs/sim.md).
#include <cstdint>
#include <string>

#include "models/core/workload.hpp"
#include "sim/topology.hpp"

namespace ringsim::sim {

struct SizeEstimate {
  std::uint64_t activities = 0;    // execs + transfers
  std::uint64_t memory_bytes = 0;  // peak resident, including recorded events
  std::uint64_t trace_bytes = 0;   // --trace file (0 if not asked)
  std::uint64_t csv_bytes = 0;     // --csv file (0 if not asked)
};

// Job mode: each FSDP ring collective is played in this many stages, one
// flow per rank each (sim/simulate.cpp, fsdp_main).
constexpr std::int64_t kFsdpStages = 8;

// Job mode (run --dp): adds the FSDP collectives' flows and actors (when
// `fsdp`) and the link meter's bins to an estimate of the rings (`t`: the
// whole job's topology).
void add_job_size(SizeEstimate& e, const Workload& w, const TopologyOptions& t, bool fsdp);

// A run played as a recurrence (sim/recurrence.hpp): no actors, mailboxes or
// SimGrid activities, only the platform's hosts and links (for the routes),
// the recorder and any events and rows. Its arithmetic counts against
// --max-activities as one activity per kRecurrencePerActivity computes and
// transfers played (measured: about 80 ns each against SimGrid's 5-14 us).
constexpr double kRecurrencePerActivity = 64;
SizeEstimate estimate_recurrence_size(const Workload& w, const TopologyOptions& t, bool trace,
                                      bool csv);

struct Budget {
  std::uint64_t max_activities = 0;
  std::uint64_t max_memory_bytes = 0;
};

SizeEstimate estimate_size(const Workload& w, const TopologyOptions& t, bool trace, bool csv);
// Activities: 2^29 (about 16K devices x 16K steps; hours here). Memory: 80% of
// this machine's physical memory.
Budget default_budget();
// The default budget with --max-activities and --max-memory applied ("": the
// default); throws InputError naming the flag for a bad value. Judged whether
// or not a simulation follows, so a bad value is never silently ignored.
Budget budget_from_flags(const std::string& max_activities, const std::string& max_memory);
// Throws InputError with the estimate, the budget and the alternatives.
void check_budget(const SizeEstimate& e, const Budget& b);

}  // namespace ringsim::sim
