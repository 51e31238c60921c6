#pragma once
// The run summary when the SimGrid engine ran: the analytic summary's keys
// with the simulated values in them (engine "simgrid"), the analytic time next
// to the simulated one, and what only a simulation sees (stalls, the critical
// device, faults).
#include <nlohmann/json.hpp>
#include <string>

#include "models/analytic/analytic.hpp"
#include "models/analytic/report.hpp"
#include "models/analytic/verdict.hpp"  // step_ranges
#include "sim/faults.hpp"
#include "sim/simulate.hpp"

namespace ringsim::sim {

// The analytic summary with time, efficiency, exposed communication, compute
// per step, collectives and overlap replaced by the simulated values.
Summary simulated_summary(const Summary& analytic, const SimResult& r);

// The simulated summary with its simulated part (RunSummary::Simulated):
// the analytic time beside the simulated one, the platform, stalls, the
// critical device, the faults. `o` is what was simulated.
RunSummary sim_summary(const Summary& analytic, const SimResult& r, const SimOptions& o);

// Human summary: inputs, then simulated and analytic side by side.
std::string sim_summary_text(const Summary& analytic, const SimResult& r, const SimOptions& o);

}  // namespace ringsim::sim
