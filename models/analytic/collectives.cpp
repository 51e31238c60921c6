#include "models/analytic/collectives.hpp"

#include <algorithm>
#include <cmath>

namespace ringsim {

CollectiveGroup placed_group(const Hardware& hw, std::int64_t ranks, std::int64_t stride) {
  const std::int64_t domain =
      hw.platform == Platform::Nodes && !hw.bandwidth_override ? hw.nvlink_group() : ranks;
  const std::int64_t per_node =
      std::max<std::int64_t>(1, domain / std::max<std::int64_t>(1, stride));
  return {ranks, std::min(ranks, per_node)};
}

CollectiveLink collective_link(const Hardware& hw, const CollectiveGroup& g) {
  CollectiveLink l;
  l.intra_lat = l.inter_lat = hw.intra_lat;
  l.bus_bw = hw.intra_coll_bw > 0 ? hw.intra_coll_bw : hw.intra_bw;
  l.link = hw.intra_name;
  if (hw.bandwidth_override || hw.platform == Platform::Flat || hw.platform == Platform::Torus2D ||
      hw.platform == Platform::Torus3D)
    return l;
  const double inter = hw.inter_coll_bw > 0 ? hw.inter_coll_bw : hw.inter_bw;
  if (hw.platform == Platform::FatTree) {
    l.bus_bw = inter / hw.oversubscription;
    l.intra_lat = l.inter_lat = hw.inter_lat;
    l.link = hw.inter_name;
    l.crosses_nodes = g.ranks > 1;
    return l;
  }
  if (g.ranks <= g.per_node) return l;
  // Across nodes: the NICs the group's members of one node own, one ring
  // channel on each, at the spine's share when the group spans leaves.
  const double stride = std::max<double>(
      1.0, static_cast<double>(hw.nvlink_group()) / static_cast<double>(g.per_node));
  const double spine = hw.ring_crosses_spine(g.ranks * static_cast<std::int64_t>(stride))
                           ? hw.oversubscription
                           : 1.0;
  const double nics = static_cast<double>(g.per_node) / hw.gpus_per_nic();
  const double egress = nics * inter / spine;
  l.crosses_nodes = true;
  l.inter_lat = std::max(hw.intra_lat, hw.inter_lat);
  if (egress < l.bus_bw) {
    l.bus_bw = egress;
    l.link = hw.inter_name;
  }
  return l;
}

namespace {

MeasuredKind measured_kind(Collective c) {
  switch (c) {
    case Collective::AllGather:
      return MeasuredKind::AllGather;
    case Collective::ReduceScatter:
      return MeasuredKind::ReduceScatter;
    case Collective::AllReduce:
      return MeasuredKind::AllReduce;
  }
  return MeasuredKind::AllReduce;
}

// The tier's nccl-tests curve (docs/own-cluster.md). Across nodes the curve
// was timed with m.per_node() GPUs of a node in the group; a group with fewer
// members per node has fewer NICs' worth of egress (collective_link's rule),
// so the part above the latency floor stretches by the ratio.
CollectiveTime measured_time(const MeasuredCurve& m, double bytes, const CollectiveGroup& g,
                             bool crosses_nodes) {
  CollectiveTime t;
  const double n = static_cast<double>(g.ranks);
  const double floor = m.floor_seconds(n);
  double s = m.seconds(bytes, n);
  if (crosses_nodes && g.per_node < m.per_node())
    s = floor + (s - floor) * static_cast<double>(m.per_node()) / static_cast<double>(g.per_node);
  t.seconds = s;
  t.latency_s = std::min(s, floor);
  t.bandwidth_s = s - t.latency_s;
  t.algorithm = "measured";
  return t;
}

}  // namespace

CollectiveTime collective_time(Collective c, double bytes, const CollectiveGroup& g,
                               const Hardware& hw) {
  CollectiveTime t;
  const auto n = g.ranks;
  if (n <= 1 || bytes <= 0) return t;
  const auto l = collective_link(hw, g);
  const auto& tier = l.crosses_nodes ? hw.inter_measured : hw.intra_measured;
  if (const auto* m = find_curve(tier, measured_kind(c)))
    return measured_time(*m, bytes, g, l.crosses_nodes);
  const double nd = static_cast<double>(n);
  const bool ar = c == Collective::AllReduce;
  t.bandwidth_s = (ar ? 2.0 : 1.0) * (nd - 1) / nd * bytes / l.bus_bw;
  // NCCL's ring latency: base + one link latency per step, the steps that
  // leave a node at the network's.
  const auto nodes = l.crosses_nodes ? (n + g.per_node - 1) / g.per_node : 1;
  const double steps = (ar ? 2.0 : 1.0) * (nd - 1);
  const double inter_steps = nodes > 1 ? (ar ? 2.0 * nodes : static_cast<double>(nodes - 1)) : 0;
  t.latency_s =
      kCollectiveBaseLatency + (steps - inter_steps) * l.intra_lat + inter_steps * l.inter_lat;
  if (ar && nodes > 1) {
    // NCCL's tree: a chain inside each node, a binary tree across nodes, up and down.
    const double tree = kCollectiveBaseLatency +
                        2 * (static_cast<double>(g.per_node - 1) * l.intra_lat +
                             std::ceil(std::log2(static_cast<double>(nodes))) * l.inter_lat);
    if (tree < t.latency_s) {
      t.latency_s = tree;
      t.algorithm = "tree";
    }
  }
  t.seconds = t.bandwidth_s + t.latency_s;
  return t;
}

}  // namespace ringsim
