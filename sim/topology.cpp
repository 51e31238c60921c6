#include "sim/topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/core/torus.hpp"

namespace ringsim::sim {

namespace {
std::int64_t mod(std::int64_t a, std::int64_t n) {
  return ((a % n) + n) % n;
}
const char* const kAxis[3] = {"x", "y", "z"};

}  // namespace

const std::vector<std::string>& inter_topology_names() {
  static const std::vector<std::string> n{"rail", "fattree"};
  return n;
}
std::string to_string(InterTopology t) {
  return inter_topology_names()[static_cast<int>(t)];
}

std::vector<int> split_torus_dims(const std::string& text) {
  std::vector<int> d;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto x = text.find('x', pos);
    const auto part = text.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    d.push_back(static_cast<int>(parse_count("--torus-dims", part, 1, 1 << 20)));
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  return d;
}

void check_torus_dims(const std::vector<int>& d, int rank, std::int64_t devices) {
  std::int64_t prod = 1;
  for (int v : d) prod = std::min<std::int64_t>(prod * v, std::int64_t{1} << 40);
  if (static_cast<int>(d.size()) != rank || prod != devices) {
    std::string text;
    for (int v : d) text += (text.empty() ? "" : "x") + std::to_string(v);
    throw InputError(fmt::format(
        "--torus-dims: expected {} sizes joined by 'x' whose product is --devices ({}), got '{}'",
        rank, devices, text));
  }
}

Topology::Topology(const TopologyOptions& o) : o_(o) {
  if (o_.devices < 1) throw InputError("--devices: must be at least 1");
  if (o_.gpus_per_node < 1) throw InputError("--gpus-per-node: must be at least 1");
  switch (o_.platform) {
    case Platform::Flat:
      build_flat();
      break;
    case Platform::Nodes:
      build_switched(true);
      break;
    case Platform::FatTree:
      build_switched(false);
      break;
    case Platform::Torus2D:
      build_torus(2);
      break;
    case Platform::Torus3D:
      build_torus(3);
      break;
  }
  build_tp_ports();
}

// --- TP groups: one port per GPU to its node's switch, both directions at
// tp_bw, half the latency on each side (as the NVLink ports above), so a ring
// round inside a group costs share / tp_bw + tp_lat with every port carrying
// one flow each way.
void Topology::build_tp_ports() {
  if (o_.tp <= 1) return;
  if (o_.tp_bw <= 0) throw std::invalid_argument("topology: TP groups need a TP link bandwidth");
  tp0_ = static_cast<std::int32_t>(links_.size());
  for (std::int64_t d = 0; d < o_.devices; ++d)
    for (int k = 0; k < o_.tp; ++k) add_link(fmt::format("tp{}.{}", d, k), o_.tp_bw, o_.tp_lat / 2);
}

std::int32_t Topology::tp_port(std::int64_t host) const {
  if (host < o_.devices) return static_cast<std::int32_t>(tp0_ + host * o_.tp);
  const std::int64_t q = host - o_.devices, per = o_.tp - 1;
  return static_cast<std::int32_t>(tp0_ + (q / per) * o_.tp + 1 + q % per);
}

std::int32_t Topology::add_link(std::string name, double bw, double lat) {
  links_.push_back({std::move(name), bw, lat});
  return static_cast<std::int32_t>(links_.size() - 1);
}

// --- flat: a ring of point-to-point links; link i joins device i and i+1.
void Topology::build_flat() {
  const auto n = o_.devices;
  if (n == 1) return;
  for (std::int64_t i = 0; i < n; ++i) {
    const bool inter = o_.wrap_is_inter && i == n - 1;
    add_link(fmt::format("ring{}", i), inter ? o_.inter_bw : o_.intra_bw,
             inter ? o_.inter_lat : o_.intra_lat);
  }
}

void Topology::route_flat(std::int64_t src, std::int64_t dst, std::vector<Hop>& out) const {
  const auto n = o_.devices;
  const auto f = mod(dst - src, n);
  if (f == 0) return;
  if (f <= n - f) {
    for (std::int64_t k = 0; k < f; ++k)
      out.push_back({static_cast<std::int32_t>(mod(src + k, n)), true});
  } else {
    for (std::int64_t k = 0; k < n - f; ++k)
      out.push_back({static_cast<std::int32_t>(mod(src - 1 - k, n)), false});
  }
}

Fabric fabric_of(const TopologyOptions& o) {
  Fabric f;
  const auto n = o.devices;
  const bool nodes = o.platform == Platform::Nodes;
  const std::int64_t g = nodes ? o.gpus_per_node : 1;
  const std::int64_t p = o.leaf_ports;
  f.nics_per_node = nodes && o.nics_per_node > 0 ? o.nics_per_node : g;
  f.domain = nodes ? std::max<std::int64_t>(o.nvlink_domain, g) : 1;
  f.nodes = (n + g - 1) / g;
  if (f.nodes <= 1 || n <= f.domain) return f;  // every route stays on NVLink
  const auto k = f.nics_per_node;
  if (o.inter == InterTopology::Rail && k > 1)
    f.leaves = k * ((f.nodes + p - 1) / p);  // one leaf per rail and group of p nodes
  else
    f.leaves = (f.nodes * k + p - 1) / p;
  if (f.leaves > 1) f.spines = p;
  return f;
}

// --- nodes / fattree: GPUs on an NVLink switch per node (nodes only; or one
// NVLink fabric across nvlink_domain GPUs), NICs (one per GPU, or
// nics_per_node shared by consecutive GPUs) into a two-level leaf/spine
// fabric. Switches are non-blocking crossbars (no link of their own); the
// leaf-spine cables are links of 1/R of a NIC's bandwidth each (R the
// oversubscription), routed by destination port (D-mod-k), so contention
// appears where real static routing puts two flows on one cable. The catalog
// latency is GPU-to-GPU, so it sits on the ports (half on each side) and every
// inter-node route has exactly the catalog latency whatever the number of
// switches.
void Topology::build_switched(bool with_nvlink) {
  const auto n = o_.devices;
  if (o_.oversubscription < 1) throw InputError("--oversubscription: must be at least 1");
  const auto f = fabric_of(o_);
  if (with_nvlink && f.nics_per_node > 0 && o_.gpus_per_node % f.nics_per_node != 0)
    throw InputError(fmt::format("--nics-per-node: must divide --gpus-per-node ({}), got {}",
                                 o_.gpus_per_node, f.nics_per_node));
  if (with_nvlink && f.domain % o_.gpus_per_node != 0)
    throw InputError(
        fmt::format("--nvlink-domain: must be a multiple of --gpus-per-node ({}), got {}",
                    o_.gpus_per_node, f.domain));
  nodes_ = f.nodes;
  leaves_ = f.leaves;
  spines_ = f.spines;
  domain_ = f.domain;
  nics_per_node_ = f.nics_per_node;
  if (with_nvlink && std::min(n, domain_) > 1) {
    nvl0_ = static_cast<std::int32_t>(links_.size());
    for (std::int64_t d = 0; d < n; ++d)
      add_link(fmt::format("nvl{}", d), o_.intra_bw, o_.intra_lat / 2);
  }
  if (nodes_ <= 1 || n <= domain_) return;
  nic0_ = static_cast<std::int32_t>(links_.size());
  for (std::int64_t c = 0; c <= nic_of(n - 1); ++c)
    add_link(fmt::format("nic{}", c), o_.inter_bw, o_.inter_lat / 2);
  if (leaves_ <= 1) return;
  uplink0_ = static_cast<std::int32_t>(links_.size());
  for (std::int64_t l = 0; l < leaves_; ++l)
    for (std::int64_t s = 0; s < spines_; ++s)
      add_link(fmt::format("leaf{}-spine{}", l, s), o_.inter_bw / o_.oversubscription, 0);
}

std::int64_t Topology::nic_of(std::int64_t d) const {
  if (o_.platform != Platform::Nodes) return d;
  const std::int64_t g = o_.gpus_per_node, k = nics_per_node_;
  return (d / g) * k + (d % g) / (g / k);
}

bool Topology::rail() const {
  return o_.platform == Platform::Nodes && o_.inter == InterTopology::Rail && nics_per_node_ > 1;
}

std::int64_t Topology::leaf_of(std::int64_t nic) const {
  const std::int64_t p = o_.leaf_ports;
  if (rail()) {
    const std::int64_t k = nics_per_node_, groups = (nodes_ + p - 1) / p;
    return (nic % k) * groups + (nic / k) / p;  // rail (NIC rank in its node), then group of nodes
  }
  return nic / p;
}

std::int64_t Topology::port_of(std::int64_t nic) const {
  const std::int64_t p = o_.leaf_ports;
  if (rail()) return (nic / nics_per_node_) % p;
  return nic % p;
}

void Topology::route_switched(std::int64_t src, std::int64_t dst, std::vector<Hop>& out) const {
  if (src == dst) return;
  if (src / domain_ == dst / domain_) {
    out.push_back({static_cast<std::int32_t>(nvl0_ + src), true});
    out.push_back({static_cast<std::int32_t>(nvl0_ + dst), false});
    return;
  }
  const auto ns = nic_of(src), nd = nic_of(dst);
  out.push_back({static_cast<std::int32_t>(nic0_ + ns), true});
  const auto ls = leaf_of(ns), ld = leaf_of(nd);
  if (ls != ld) {
    const auto s = port_of(nd) % spines_;
    out.push_back({static_cast<std::int32_t>(uplink0_ + ls * spines_ + s), true});
    out.push_back({static_cast<std::int32_t>(uplink0_ + ld * spines_ + s), false});
  }
  out.push_back({static_cast<std::int32_t>(nic0_ + nd), false});
}

// --- torus: the ring is a snake (reflected mixed-radix order) through the
// chips, so consecutive devices are torus neighbours; link v.k joins chip v to
// its + neighbour in dimension k, wrap-around included. Dimension-order routing,
// shorter way round in each dimension.
void Topology::build_torus(int rank) {
  const auto n = o_.devices;
  dims_ = o_.torus_dims.empty() ? auto_torus_dims(n, rank) : o_.torus_dims;
  std::int64_t prod = 1;
  for (int v : dims_) prod *= v;
  if (static_cast<int>(dims_.size()) != rank || prod != n)
    throw InputError(fmt::format("--torus-dims: product must be --devices ({})", n));
  coord_of_.resize(static_cast<std::size_t>(n));
  device_at_.resize(static_cast<std::size_t>(n));
  for (std::int64_t p = 0; p < n; ++p) {
    const auto c = snake_coords(dims_, p);
    std::int64_t below = 1, lin = 0;
    for (int k = 0; k < rank; ++k) {
      lin += c[static_cast<std::size_t>(k)] * below;
      below *= dims_[k];
    }
    coord_of_[p] = lin;
    device_at_[lin] = p;
  }
  // Links in linear chip order so names are stable: torus<chip>.<axis>.
  for (std::int64_t v = 0; v < n; ++v)
    for (int k = 0; k < rank; ++k)
      if (dims_[k] > 1) add_link(fmt::format("torus{}.{}", v, kAxis[k]), o_.intra_bw, o_.intra_lat);
}

std::vector<int> Topology::torus_coords(std::int64_t device) const {
  std::vector<int> c;
  auto lin = coord_of_.at(static_cast<std::size_t>(device));
  for (int dk : dims_) {
    c.push_back(static_cast<int>(lin % dk));
    lin /= dk;
  }
  return c;
}

void Topology::route_torus(std::int64_t src, std::int64_t dst, std::vector<Hop>& out) const {
  const int rank = static_cast<int>(dims_.size());
  // Index of link (chip, k): links exist only for dimensions larger than 1.
  int per_chip = 0, slot[3] = {-1, -1, -1};
  for (int k = 0; k < rank; ++k)
    if (dims_[k] > 1) slot[k] = per_chip++;
  auto c = torus_coords(src);
  const auto t = torus_coords(dst);
  auto linear = [&] {
    std::int64_t lin = 0, below = 1;
    for (int k = 0; k < rank; ++k) {
      lin += c[k] * below;
      below *= dims_[k];
    }
    return lin;
  };
  for (int k = 0; k < rank; ++k) {
    const int dk = dims_[k];
    const auto f = mod(t[k] - c[k], dk);
    if (f == 0) continue;
    // Without wrap-around links (a mesh) the only way is the direct one.
    const bool forward = o_.wraparound ? f <= dk - f : t[k] > c[k];
    if (forward) {
      for (std::int64_t i = 0; i < f; ++i) {
        out.push_back({static_cast<std::int32_t>(linear() * per_chip + slot[k]), true});
        c[k] = (c[k] + 1) % dk;
      }
    } else {
      for (std::int64_t i = 0; i < dk - f; ++i) {
        c[k] = (c[k] - 1 + dk) % dk;
        out.push_back({static_cast<std::int32_t>(linear() * per_chip + slot[k]), false});
      }
    }
  }
}

void Topology::route(std::int64_t src, std::int64_t dst, std::vector<Hop>& out) const {
  // A route with a TP GPU at either end is a TP group's collective (device
  // hosts talk to other devices only on the CP ring): port up, port down.
  if (o_.tp > 1 && src != dst && (src >= o_.devices || dst >= o_.devices)) {
    out.push_back({tp_port(src), true});
    out.push_back({tp_port(dst), false});
    return;
  }
  switch (o_.platform) {
    case Platform::Flat:
      return route_flat(src, dst, out);
    case Platform::Nodes:
    case Platform::FatTree:
      return route_switched(src, dst, out);
    case Platform::Torus2D:
    case Platform::Torus3D:
      return route_torus(src, dst, out);
  }
}

double Topology::route_latency(std::int64_t src, std::int64_t dst) const {
  std::vector<Hop> hops;
  route(src, dst, hops);
  double lat = 0;
  for (const auto& h : hops) lat += links_[h.link].latency;
  return lat;
}

std::int64_t node_of(const TopologyOptions& o, std::int64_t device) {
  switch (o.platform) {
    case Platform::Nodes:
    case Platform::Torus2D:
    case Platform::Torus3D:
      return device / o.gpus_per_node;
    default:
      return 0;
  }
}

std::int64_t Topology::node_of(std::int64_t device) const {
  return sim::node_of(o_, device);
}

std::int32_t Topology::find_link(const std::string& name) const {
  for (std::size_t i = 0; i < links_.size(); ++i)
    if (links_[i].name == name) return static_cast<std::int32_t>(i);
  return -1;
}

std::string Topology::describe() const {
  return describe_topology(o_);
}

namespace {
std::string describe_cp(const TopologyOptions& o);
}  // namespace

std::string describe_topology(const TopologyOptions& o) {
  auto s = describe_cp(o);
  if (o.tp > 1)
    s += fmt::format("; each of the {} CP ranks a TP group of {} GPUs on their own switch ports",
                     o.devices, o.tp);
  return s;
}

namespace {

std::string describe_cp(const TopologyOptions& o) {
  const auto n = o.devices;
  switch (o.platform) {
    case Platform::Flat:
      if (o.wrap_is_inter)
        return fmt::format("one node's {} GPUs as a ring closed over the inter-node hop", n);
      return fmt::format("flat ring of {} point-to-point links", n > 1 ? n : 0);
    case Platform::Torus2D:
    case Platform::Torus3D: {
      const auto dims = o.torus_dims.empty()
                            ? auto_torus_dims(n, o.platform == Platform::Torus2D ? 2 : 3)
                            : o.torus_dims;
      std::vector<std::string> d;
      for (int v : dims) d.push_back(std::to_string(v));
      if (!o.wraparound)
        return fmt::format(
            "{} mesh {} without wrap-around links (ring snaked through it; it "
            "closes over {} links)",
            to_string(o.platform), join(d, "x"), closing_hops(dims, false));
      return fmt::format("{} torus {} (ring snaked through it)", to_string(o.platform),
                         join(d, "x"));
    }
    case Platform::Nodes:
    case Platform::FatTree: {
      const auto f = fabric_of(o);
      if (o.platform == Platform::FatTree)
        return fmt::format("fat-tree of {} devices ({} leaf switch(es) of {} ports, {} spine(s){})",
                           n, std::max<std::int64_t>(f.leaves, 1), o.leaf_ports, f.spines,
                           o.oversubscription != 1
                               ? fmt::format(", {}:1 oversubscribed", o.oversubscription)
                               : std::string());
      auto s = fmt::format("{} node(s) x {} GPUs on an NVLink switch", f.nodes,
                           std::min<std::int64_t>(o.gpus_per_node, n));
      if (f.domain > o.gpus_per_node)
        s += fmt::format(" (one NVLink fabric per {} GPUs)", f.domain);
      if (f.leaves > 0 || (f.nodes > 1 && n > f.domain)) {
        const auto nics = f.nics_per_node == o.gpus_per_node
                              ? std::string("one NIC per GPU")
                              : fmt::format("{} NICs per node", f.nics_per_node);
        s += fmt::format(", {}, {} IB ({} leaf switch(es), {} spine(s))", nics,
                         o.inter == InterTopology::Rail ? "rail-optimised" : "fat-tree", f.leaves,
                         f.spines);
      }
      if (o.oversubscription != 1)
        s += fmt::format(", {}:1 oversubscribed uplinks", o.oversubscription);
      return s;
    }
  }
  return "";
}

}  // namespace

}  // namespace ringsim::sim
