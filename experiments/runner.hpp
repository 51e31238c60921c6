#pragma once
// Chooses the engine for an experiment's simulated points (those run as
// `ringsim run --json` children through the sweep engine, grid_experiment.hpp).
#include <string>
#include <utility>

namespace ringsim::exp {

// Engine for simulated points: `requested` is auto | simgrid | analytic. auto
// takes simgrid when `ringsim run --engine simgrid` answers a 2-device run.
// Returns {engine, note for the report}; throws InputError when simgrid is
// requested but not available.
std::pair<std::string, std::string> choose_engine(const std::string& ringsim,
                                                  const std::string& requested);

}  // namespace ringsim::exp
