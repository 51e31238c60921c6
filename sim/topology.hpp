#pragma once
// The simulated cluster as plain data: full-duplex links and a route between
// any two devices. No SimGrid here, so routes can be tested on their own and
// the SimGrid platform (sim/platform.hpp) is a thin translation of this.
//
// Devices are numbered along the ring: the ring layouts send d -> d+1, so the
// placement of device d on the hardware is what decides which links a ring
// crosses (consecutive GPUs of a node; a snake through a torus).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/torus.hpp"
#include "models/core/workload.hpp"

namespace ringsim::sim {

enum class InterTopology { Rail, FatTree };
const std::vector<std::string>& inter_topology_names();
std::string to_string(InterTopology t);

struct TopologyOptions {
  Platform platform = Platform::Nodes;
  std::int64_t devices = 1;
  int gpus_per_node = 8;
  InterTopology inter = InterTopology::Rail;
  double intra_bw = 0, intra_lat = 0;  // NVLink / torus ICI / flat ring links
  double inter_bw = 0, inter_lat = 0;  // InfiniBand NICs and fabric
  std::vector<int> torus_dims;         // empty: chosen from `devices`
  bool wraparound = true;  // torus: wrap-around links (false: a mesh, a partial TPU slice)
  int leaf_ports = 32;     // NICs per leaf switch (and spines per leaf)
  // nodes: NICs per node (dividing gpus_per_node; GPUs d*g/k .. share NIC d);
  // 0: one per GPU. The GPUs behind one NIC share its link.
  int nics_per_node = 0;
  // nodes: GPUs on one NVLink fabric (a multiple of gpus_per_node, e.g. 72 on
  // GB200 NVL72); 0: one node. Inside it every route is NVLink.
  int nvlink_domain = 0;
  // nodes/fattree: each leaf's uplinks carry 1/R of its NICs' bandwidth.
  double oversubscription = 1;
  // flat only: the closing link (device N-1 -> 0) is an inter-node hop
  // (inter_bw, inter_lat). The ring of one node's GPUs that stands for a
  // uniform multi-node ring (sim/symmetry.hpp).
  bool wrap_is_inter = false;
  // --tp: each device (CP rank) is a TP group of `tp` GPUs in one node. The
  // device's host is the group's first GPU; the other tp - 1 are hosts of
  // their own (numbered after the devices: Topology::tp_host). Every GPU of a
  // group has its own port to the node's switch (tp_bw, half of tp_lat on
  // each side), on which the group's ring collectives run. The CP ring stays
  // on the links above (the first GPU's, standing for its group: each GPU
  // sends its heads' share to the same GPU of the next group, in parallel).
  int tp = 1;
  double tp_bw = 0, tp_lat = 0;
};

// Both directions of a full-duplex link have `bandwidth` and `latency`.
struct TopoLink {
  std::string name;
  double bandwidth = 0, latency = 0;
};

// One link traversed in one direction: `up` is the direction the link's
// name reads (ring5: 5 -> 6; nic3: GPU 3 -> fabric; leaf0-spine2: leaf -> spine).
struct Hop {
  std::int32_t link;
  bool up;
};

class Topology {
 public:
  // Throws InputError for shapes the platform cannot hold (e.g. --torus-dims
  // whose product is not --devices).
  explicit Topology(const TopologyOptions& o);

  const TopologyOptions& options() const { return o_; }
  const std::vector<TopoLink>& links() const { return links_; }
  std::int64_t devices() const { return o_.devices; }
  // Hosts: the devices, then each device's tp - 1 other TP GPUs.
  std::int64_t hosts() const { return o_.devices * std::max(o_.tp, 1); }
  // Host of GPU k (0 .. tp-1) of device d's TP group; k = 0 is d itself.
  std::int64_t tp_host(std::int64_t d, int k) const {
    return k == 0 ? d : o_.devices + d * (o_.tp - 1) + (k - 1);
  }

  // Appends the hops from src to dst (empty when src == dst).
  void route(std::int64_t src, std::int64_t dst, std::vector<Hop>& out) const;
  double route_latency(std::int64_t src, std::int64_t dst) const;

  // Trace process id: the node (host) holding the device; 0 without nodes.
  std::int64_t node_of(std::int64_t device) const;
  // Torus: coordinates of a device (the ring is a snake through them).
  std::vector<int> torus_coords(std::int64_t device) const;
  const std::vector<int>& torus_dims() const { return dims_; }

  // Link index by name, or -1.
  std::int32_t find_link(const std::string& name) const;
  // "nodes: 32 x 8 GPUs, NVLink switch per node, rail-optimised IB (4 leaves, 32 spines)".
  std::string describe() const;

 private:
  TopologyOptions o_;
  std::vector<TopoLink> links_;
  // nodes / fattree fabric
  std::int64_t nodes_ = 1, leaves_ = 0, spines_ = 0, domain_ = 1, nics_per_node_ = 1;
  std::int32_t nvl0_ = -1, nic0_ = -1, uplink0_ = -1;
  std::int32_t tp0_ = -1;  // first TP port (device d, GPU k: tp0_ + d * tp + k)
  // torus
  std::vector<int> dims_;
  std::vector<std::int64_t> coord_of_;   // device -> linear torus node id
  std::vector<std::int64_t> device_at_;  // linear torus node id -> device

  std::int32_t add_link(std::string name, double bw, double lat);
  void build_flat();
  void build_switched(bool with_nvlink);
  void build_torus(int rank);
  // NIC of a device; leaf switch and port of a NIC.
  std::int64_t nic_of(std::int64_t d) const;
  std::int64_t leaf_of(std::int64_t nic) const;
  std::int64_t port_of(std::int64_t nic) const;
  bool rail() const;
  void route_flat(std::int64_t src, std::int64_t dst, std::vector<Hop>& out) const;
  void route_switched(std::int64_t src, std::int64_t dst, std::vector<Hop>& out) const;
  void route_torus(std::int64_t src, std::int64_t dst, std::vector<Hop>& out) const;
  void build_tp_ports();
  std::int32_t tp_port(std::int64_t host) const;
};

// Node, leaf and spine counts of the nodes / fattree fabric.
struct Fabric {
  std::int64_t nodes = 1, leaves = 0, spines = 0;
  std::int64_t nics_per_node = 1;  // k: one per GPU unless the options say fewer
  std::int64_t domain = 1;         // GPUs on one NVLink fabric (nodes only)
};
Fabric fabric_of(const TopologyOptions& o);

// What Topology(o).describe() says, without building the links.
std::string describe_topology(const TopologyOptions& o);

// Trace process id of a device: its node (host) on nodes and torus platforms,
// 0 where devices have no node structure (flat, fattree).
std::int64_t node_of(const TopologyOptions& o, std::int64_t device);

// Torus dimensions for n chips (models/core/torus.hpp).
using ringsim::auto_torus_dims;
// "4x4x8" -> {4, 4, 8}; throws InputError naming --torus-dims for a part that
// is not a positive integer.
std::vector<int> split_torus_dims(const std::string& text);
// Throws InputError naming --torus-dims unless there are `rank` sizes whose
// product is `devices`.
void check_torus_dims(const std::vector<int>& dims, int rank, std::int64_t devices);

}  // namespace ringsim::sim
