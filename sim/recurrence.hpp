#pragma once
// Link-disjoint rings played as recurrences (docs/sim.md, "Link-disjoint
// rings: recurrences").
//
// Where no two of a ring's transfers ever share a link, SimGrid's exact model
// (CM02, no cross-traffic, no TCP window) times every transfer alone on its
// route: it starts when both ends have posted (a mailbox pairs the k-th put of
// a device with the k-th get of its successor), pays the route's latency, then
// moves its bytes at the route's slowest link. Each device's compute is a
// timed wait on a host of its own. So the whole schedule is a recurrence over
// (device, step) that needs no simulator objects: this player computes it with
// the same costs (Run) and hands the same recorder calls as the actors, so
// every output agrees with the SimGrid engine's to rounding.
//
// Which runs qualify: sim/recurrence_rules.hpp.
#include <vector>

namespace simgrid::s4u {
class Host;
}

namespace ringsim::sim {

struct Run;

// Plays `run`'s schedule on the platform's `hosts` (built, with degraded
// links, on a clock stretched by `time_scale`), reading each hop's route from
// SimGrid. Throws Interrupted on Ctrl-C, std::logic_error if two hops share a
// link (the rules should have refused the run).
void play_recurrence(Run& run, const std::vector<simgrid::s4u::Host*>& hosts, double time_scale);

}  // namespace ringsim::sim
