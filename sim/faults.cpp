#include "sim/faults.hpp"

#include <fmt/format.h>

#include <cmath>

#include "models/core/errors.hpp"
#include "models/core/parse.hpp"

namespace ringsim::sim {

namespace {

constexpr double kMaxFactor = 1e6;

// Splits "NAME:FACTOR" at the last colon.
std::pair<std::string, std::string> split_factor(const std::string& flag, const std::string& text,
                                                 const std::string& what) {
  const auto c = text.rfind(':');
  if (c == std::string::npos || c == 0 || c + 1 == text.size())
    throw InputError(fmt::format("{}: expected {}:FACTOR, got '{}'", flag, what, text));
  return {text.substr(0, c), text.substr(c + 1)};
}

// SplitMix64 (Steele, Lea, Flood 2014): a full-avalanche 64-bit mix, enough to
// turn a counter into independent-looking uniforms.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in (0, 1]: 53 random bits, never 0 (log is taken).
double unit(std::uint64_t bits) {
  return (static_cast<double>(bits >> 11) + 1.0) * 0x1.0p-53;
}

}  // namespace

Straggler parse_straggler(const std::string& text, std::int64_t devices) {
  const auto [dev, fac] = split_factor("--straggler", text, "DEVICE");
  Straggler s;
  s.device = parse_count("--straggler", dev, 0, devices - 1);
  s.factor = parse_real("--straggler", fac, 1e-3, kMaxFactor);
  return s;
}

Degrade parse_degrade(const std::string& text) {
  const auto [link, fac] = split_factor("--degrade", text, "LINK");
  return {link, parse_real("--degrade", fac, 1e-3, kMaxFactor)};
}

std::vector<double> link_divisors(const Topology& topo, const std::vector<Degrade>& degrades) {
  std::vector<double> div(topo.links().size(), 1.0);
  for (const auto& d : degrades) {
    const auto idx = topo.find_link(d.link);
    if (idx >= 0) {
      div[idx] *= d.factor;
      continue;
    }
    const auto dash = d.link.find('-');
    if (dash != std::string::npos && d.link.find_first_not_of("0123456789-") == std::string::npos) {
      const auto a = parse_count("--degrade", d.link.substr(0, dash), 0, topo.devices() - 1);
      const auto b = parse_count("--degrade", d.link.substr(dash + 1), 0, topo.devices() - 1);
      std::vector<Hop> hops;
      topo.route(a, b, hops);
      if (hops.empty())
        throw InputError(fmt::format("--degrade: no link between devices {} and {}", a, b));
      for (const auto& h : hops) div[h.link] *= d.factor;
      continue;
    }
    std::vector<std::string> examples;
    const auto& links = topo.links();
    for (std::size_t i = 0; i < links.size() && examples.size() < 4;
         i += std::max<std::size_t>(1, links.size() / 4))
      examples.push_back(links[i].name);
    throw InputError(
        fmt::format("--degrade: unknown link '{}'; give a link of this platform ({}{}) or "
                    "DEVICE-DEVICE for the "
                    "links of that route",
                    d.link, examples.empty() ? "it has none" : "e.g. " + join(examples, ", "),
                    links.size() > examples.size() ? ", ..." : ""));
  }
  // Repeated flags on one link multiply; the product keeps the flag's range.
  for (std::size_t i = 0; i < div.size(); ++i)
    if (div[i] < 1e-3 || div[i] > kMaxFactor)
      throw InputError(
          fmt::format("--degrade: the factors on link {} multiply to {:g}, beyond [0.001, {:g}]",
                      topo.links()[i].name, div[i], kMaxFactor));
  return div;
}

std::vector<double> device_slowdowns(std::int64_t devices, const std::vector<Straggler>& s) {
  std::vector<double> f(static_cast<std::size_t>(devices), 1.0);
  for (const auto& x : s) {
    auto& v = f[static_cast<std::size_t>(x.device)];
    v *= x.factor;  // repeated flags on one device multiply
    if (v < 1e-3 || v > kMaxFactor)
      throw InputError(fmt::format(
          "--straggler: the factors for device {} multiply to {:g}, beyond [0.001, {:g}]", x.device,
          v, kMaxFactor));
  }
  return f;
}

double jitter_factor(double sigma, std::uint64_t seed, std::int64_t device, int layer, int pass,
                     std::int64_t step) {
  if (sigma <= 0) return 1.0;
  std::uint64_t h = splitmix64(seed);
  h = splitmix64(h ^ static_cast<std::uint64_t>(device));
  h = splitmix64(h ^ (static_cast<std::uint64_t>(layer) << 2 | static_cast<std::uint64_t>(pass)));
  h = splitmix64(h ^ static_cast<std::uint64_t>(step));
  const double u1 = unit(h), u2 = unit(splitmix64(h));
  // Box-Muller: one standard normal from two uniforms.
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  return std::exp(sigma * z - 0.5 * sigma * sigma);
}

}  // namespace ringsim::sim
