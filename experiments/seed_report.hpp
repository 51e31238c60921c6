#pragma once
// The seed-reproduction experiment's columns, panels and report (its grid is
// exp_seed_reproduction.cpp): each table beside the published one, the checks,
// and the reading, every number from the finished rows.
#include <functional>
#include <string>
#include <vector>

#include "experiments/grid_experiment.hpp"

namespace ringsim::exp {

std::string seed_caption();
std::string seed_plot_note();
std::vector<Measure> seed_measures();
std::vector<PanelDecl> seed_panels();
using Analysis = std::function<void(const std::vector<GridPoint>&, const Context&, Output&)>;
// The tables, checks, reading and striped panels; `recheck` runs after the
// striped table (the SimGrid re-check, which needs the grid's run specs).
std::vector<Analysis> seed_analyses(Analysis recheck);

}  // namespace ringsim::exp
