#pragma once
// The run summary when the SimGrid engine ran: the analytic summary's keys
// with the simulated values in them (engine "simgrid"), the analytic time next
// to the simulated one, and what only a simulation sees (stalls, the critical
// device, faults).
#include <nlohmann/json.hpp>
#include <string>

#include "models/analytic.hpp"
#include "sim/faults.hpp"
#include "sim/simulate.hpp"

namespace ringsim::sim {

struct SimContext {
  Platform platform = Platform::Nodes;
  NetworkModel network = NetworkModel::Exact;
  InterTopology inter = InterTopology::Rail;
  Faults faults;
};

// The analytic summary with time, efficiency, exposed communication, compute
// per step, collectives and overlap replaced by the simulated values.
Summary simulated_summary(const Summary& analytic, const SimResult& r);

// summary_json() of the simulated summary plus: analytic_time_s,
// analytic_efficiency, platform, network_model, activities, stalled_steps
// {fwd, bwd}, stalled_device_steps, wait_s, critical_device,
// critical_device_busy_s, faults.
nlohmann::json sim_summary_json(const Summary& analytic, const SimResult& r, const SimContext& c);

// Human summary: inputs, then simulated and analytic side by side.
std::string sim_summary_text(const Summary& analytic, const SimResult& r, const SimContext& c);

// "0-3, 5, 7-9": steps as compact ranges.
std::string step_ranges(const std::vector<std::int64_t>& steps);

}  // namespace ringsim::sim
