#include "sim/recurrence_rules.hpp"

#include <fmt/format.h>

#include <vector>

#include "models/analytic/analytic.hpp"
#include "models/core/workload.hpp"

namespace ringsim::sim {

std::string shared_ring_link(const Topology& topo, std::int64_t ring) {
  const auto devices = topo.devices();
  if (ring < 2) return "";
  // Per link direction, the first hop that crossed it (-1: none yet).
  std::vector<std::int64_t> user(2 * topo.links().size(), -1);
  std::vector<Hop> hops;
  // Each ring of `ring` consecutive devices closes on its own first device.
  const auto next_of = [ring](std::int64_t d) { return d - d % ring + (d % ring + 1) % ring; };
  for (std::int64_t d = 0; d < devices; ++d) {
    const auto next = next_of(d);
    hops.clear();
    topo.route(d, next, hops);
    for (const auto& h : hops) {
      auto& first = user[2 * static_cast<std::size_t>(h.link) + (h.up ? 0 : 1)];
      if (first >= 0)
        return fmt::format("hop {}->{} and {}->{} both cross {} {}", first, next_of(first), d, next,
                           topo.links()[static_cast<std::size_t>(h.link)].name,
                           h.up ? "up" : "down");
      first = d;
    }
  }
  return "";
}

std::string recurrence_refusal(const Workload& w, const Implementation& im,
                               const TopologyOptions& t, NetworkModel network) {
  const auto l = w.layout;
  if (l != Layout::Ring && l != Layout::Striped && l != Layout::Zigzag)
    return fmt::format("only the ring layouts (ring, striped, zigzag) are recurrences, not {}",
                       to_string(l));
  if (network != NetworkModel::Exact)
    return "the lv08 model couples neighbouring hops (cross-traffic)";
  if (w.tp > 1 && w.scope == Scope::Layer)
    return "--tp with --scope layer adds the TP groups' collectives";
  // A per-layer layout permutation moves all-to-alls over the whole ring.
  const auto rank = tp_rank_workload(w);
  for (bool bwd : {false, true}) {
    if ((bwd && w.pass == Pass::Fwd) || (!bwd && w.pass == Pass::Bwd)) continue;
    const auto b = pass_bytes(rank, bwd, im);
    if (b.a2a_in > 0 || b.a2a_out > 0)
      return "the implementation permutes the layout each layer (all-to-alls share links)";
  }
  const Topology topo(t);
  if (auto s = shared_ring_link(topo, t.devices); !s.empty()) return "links are shared (" + s + ")";
  return "";
}

}  // namespace ringsim::sim
