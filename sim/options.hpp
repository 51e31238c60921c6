#pragma once
// Simulator choices that a run spec carries (proc/run_spec.hpp) and the
// SimGrid model reads; plain data, no SimGrid.
#include <string>
#include <vector>

namespace ringsim::sim {

// exact: CM02 without cross-traffic or TCP window, so S bytes over an idle
// link take S/B + L (hand-checkable). lv08: SimGrid's default, calibrated on
// TCP (latency x 13.01, bandwidth x 0.97, 5% reverse traffic, window cap).
enum class NetworkModel { Exact, LV08 };
const std::vector<std::string>& network_model_names();
std::string to_string(NetworkModel m);

// --symmetry: simulate one period of a uniform ring (sim/symmetry.hpp).
enum class Symmetry { Auto, On, Off };
const std::vector<std::string>& symmetry_names();
std::string to_string(Symmetry s);

// --recurrence: play a ring whose hops share no link as arithmetic, without
// SimGrid's activities (sim/recurrence.hpp).
enum class Recurrence { Auto, On, Off };
const std::vector<std::string>& recurrence_names();
std::string to_string(Recurrence r);

}  // namespace ringsim::sim
