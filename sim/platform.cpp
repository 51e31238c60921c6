#include "sim/platform.hpp"

#include <fmt/format.h>

#include <array>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <stdexcept>

namespace ringsim::sim {

namespace {

namespace kr = simgrid::kernel::routing;
using simgrid::kernel::resource::StandardLinkImpl;

// The only zone of the platform: every host is a direct member (so a
// netpoint's id is its device index) and routes come from the Topology.
class TopologyZone final : public kr::NetZoneImpl {
 public:
  TopologyZone(const std::string& name, const Topology& topo, double time_scale)
      : NetZoneImpl(name), topo_(topo), scale_(time_scale) {}

  // Per link: the SimGrid link of each direction (index 0 = up, 1 = down).
  std::vector<std::array<StandardLinkImpl*, 2>> impl;

  void get_local_route(const kr::NetPoint* src, const kr::NetPoint* dst, kr::Route* into,
                       double* latency) override {
    hops_.clear();
    topo_.route(static_cast<std::int64_t>(src->id()), static_cast<std::int64_t>(dst->id()), hops_);
    const auto& links = topo_.links();
    for (const auto& h : hops_) {
      into->link_list_.push_back(impl[h.link][h.up ? 0 : 1]);
      // Null when SimGrid only wants the links (the reverse route of LV08's
      // cross-traffic).
      if (latency) *latency += links[h.link].latency * scale_;
    }
  }

 private:
  const Topology& topo_;
  double scale_;
  std::vector<Hop> hops_;  // scratch, reused: routing runs once per transfer
};

}  // namespace

std::vector<simgrid::s4u::Host*> build_platform(const Topology& topo,
                                                const std::vector<double>& bw_divisor,
                                                double time_scale) {
  // Owned by the engine from here on (it deletes the root zone at exit).
  auto* zone = new TopologyZone("ringsim", topo, time_scale);
  auto* iface = zone->get_iface();
  std::vector<simgrid::s4u::Host*> hosts;
  hosts.reserve(static_cast<std::size_t>(topo.hosts()));
  for (std::int64_t d = 0; d < topo.hosts(); ++d) {
    hosts.push_back(iface->create_host(fmt::format("d{}", d), kHostSpeed));
    if (hosts.back()->get_netpoint()->id() != static_cast<unsigned long>(d))
      throw std::logic_error("platform: host netpoint ids must follow device order");
  }
  const auto& links = topo.links();
  zone->impl.reserve(links.size());
  for (std::size_t i = 0; i < links.size(); ++i) {
    const double div = i < bw_divisor.size() ? bw_divisor[i] : 1.0;
    auto* l =
        iface->create_split_duplex_link(links[i].name, links[i].bandwidth / (div * time_scale));
    l->set_latency(links[i].latency * time_scale);
    l->seal();
    zone->impl.push_back({l->get_link_up()->get_impl(), l->get_link_down()->get_impl()});
  }
  iface->seal();
  return hosts;
}

}  // namespace ringsim::sim
