#pragma once
// What-if faults for the simulator: a slow device, a degraded link, noisy
// compute. Parsed from flags here so the errors name the flag; applied by the
// simulation (compute multipliers) and the platform (bandwidth divisors).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/topology.hpp"

namespace ringsim::sim {

struct Straggler {
  std::int64_t device = 0;
  double factor = 1;  // the device's compute takes factor x as long
  bool operator==(const Straggler&) const = default;
};

struct Degrade {
  std::string link;   // a link name (nic7, ring3, torus5.x, leaf0-spine2) or "A-B" (route A -> B)
  double factor = 1;  // bandwidth divided by factor
  bool operator==(const Degrade&) const = default;
};

struct Faults {
  std::vector<Straggler> stragglers;
  std::vector<Degrade> degrades;
  double jitter_sigma = 0;  // lognormal sigma of each compute's noise; 0 = none
  std::uint64_t seed = 1;
  bool any() const { return !stragglers.empty() || !degrades.empty() || jitter_sigma > 0; }
  bool operator==(const Faults&) const = default;
};

// "DEVICE:FACTOR", e.g. "3:2" (device 3 computes twice as slowly).
Straggler parse_straggler(const std::string& text, std::int64_t devices);
// "LINK:FACTOR", e.g. "nic7:4" or "7-8:4".
Degrade parse_degrade(const std::string& text);

// Bandwidth divisor of every topology link (1 = nominal). "A-B" degrades every
// link on the route from device A to device B. Throws InputError naming
// --degrade for an unknown link, with examples of the names this platform has.
std::vector<double> link_divisors(const Topology& topo, const std::vector<Degrade>& degrades);

// Compute multiplier of each device (1 = nominal).
std::vector<double> device_slowdowns(std::int64_t devices, const std::vector<Straggler>& s);

// Multiplier of one compute: exp(sigma Z - sigma^2 / 2), lognormal with mean 1,
// Z standard normal drawn from a counter-based hash of (seed, device, layer,
// pass, step). No generator state: the value does not depend on the order in
// which SimGrid runs the actors, so a seed always gives the same run.
double jitter_factor(double sigma, std::uint64_t seed, std::int64_t device, int layer, int pass,
                     std::int64_t step);

}  // namespace ringsim::sim
