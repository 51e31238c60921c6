#include "sim/symmetry.hpp"

#include <vector>

#include "models/core/work.hpp"

namespace ringsim::sim {

namespace {

Period no(std::string why) {
  Period p;
  p.why_not = std::move(why);
  return p;
}

// Every device computes the same at each step: the full mask, or zigzag's
// balanced chunks (models/core/work.hpp: 2h^2 + h at step 0, 2h^2 after). Checked
// on a few devices as well, in case the rule and work.hpp ever disagree.
bool uniform_work(const Workload& w) {
  const bool rule =
      (w.layout == Layout::Ring || w.layout == Layout::Striped || w.layout == Layout::Zigzag) &&
      (!w.causal || w.layout == Layout::Zigzag);
  if (!rule) return false;
  const auto n = w.devices;
  const std::int64_t probe[] = {0, 1, n / 2, n - 1};
  for (std::int64_t s = 0; s < num_steps(w); ++s) {
    const auto e = step_entries(w, 0, s);
    for (auto d : probe)
      if (step_entries(w, d, s) != e) return false;
  }
  return true;
}

// The implementation's step costs alike on every device: probe devices at
// steps that cover both groups (wrapped and not) and the first, both passes.
bool uniform_cost(const Workload& w, const Implementation& im) {
  const auto n = w.devices, steps = num_steps(w);
  const std::int64_t probe[] = {0, 1, n / 2, n - 1};
  for (bool bwd : {false, true}) {
    if ((bwd && w.pass == Pass::Fwd) || (!bwd && w.pass == Pass::Bwd)) continue;
    for (std::int64_t s : {std::int64_t{0}, std::int64_t{1}, steps / 2, steps - 1}) {
      if (s < 0 || s >= steps) continue;
      const bool sends = s + 1 < steps;
      const double t = im.step(w, 0, s, bwd, sends).total();
      for (auto d : probe)
        if (im.step(w, d, s, bwd, sends).total() != t) return false;
    }
    if (im.reduce(w, 0, bwd) != im.reduce(w, n - 1, bwd)) return false;
  }
  return true;
}

}  // namespace

Period symmetric_period(const Workload& w, const TopologyOptions& t, const Faults& f,
                        bool exact_network, bool outputs, const Implementation* im) {
  if (!w.documents.empty()) return no("packed documents: each device's work depends on them");
  if (!uniform_work(w))
    return no("devices do different work (only non-causal or zigzag rings are uniform)");
  if (im && !uniform_cost(w, *im))
    return no("devices' steps cost differently under " + im->kernel() +
              " (zigzag's two chunk shapes run at different rates)");
  if (f.any()) return no("faults make devices differ");
  if (!exact_network) return no("the lv08 model couples neighbouring hops (cross-traffic)");
  if (outputs) return no("--trace/--csv describe every device");
  if (w.devices < 4) return no("already tiny");
  // One period stands for the ring only when every boundary hop is a lone NIC
  // at full speed; shared NICs, NVLink fabrics across nodes and slowed uplinks
  // are simulated whole.
  if (t.oversubscription != 1) return no("the spine uplinks are oversubscribed");
  if (t.platform == Platform::Nodes && t.nics_per_node > 0 && t.nics_per_node != t.gpus_per_node)
    return no("GPUs share NICs");
  if (t.platform == Platform::Nodes && t.nvlink_domain > t.gpus_per_node)
    return no("the NVLink domain spans nodes");
  Period p;
  p.topology = t;
  p.topology.platform = Platform::Flat;
  p.devices = 2;
  switch (t.platform) {
    case Platform::Flat:
      break;
    case Platform::FatTree:
      // Every hop is NIC to NIC with the catalog's GPU-to-GPU latency.
      p.topology.intra_bw = t.inter_bw;
      p.topology.intra_lat = t.inter_lat;
      break;
    case Platform::Torus2D:
    case Platform::Torus3D: {
      Topology full(t);
      std::vector<Hop> hops;
      full.route(w.devices - 1, 0, hops);
      if (hops.size() != 1)
        return no("the torus has no even dimension: the ring closes over several links");
      break;
    }
    case Platform::Nodes: {
      const std::int64_t g = t.gpus_per_node;
      if (w.devices <= g) break;  // one node: every hop is NVLink
      if (w.devices % g) return no("the last node is partly filled");
      if (g == 1) {
        p.topology.intra_bw = t.inter_bw;
        p.topology.intra_lat = t.inter_lat;
        break;
      }
      p.devices = g;
      p.topology.wrap_is_inter = true;
      break;
    }
  }
  p.topology.devices = p.devices;
  return p;
}

}  // namespace ringsim::sim
