#pragma once
// The SimGrid model of one run: one actor per device playing the layout's
// schedule on the simulated cluster. Per-step work comes from models/core/work.hpp
// and models/analytic/analytic.hpp (step_seconds, pass_bytes), the same functions the
// closed forms use, so the two engines differ only where the network does.
//
// SimGrid allows one engine per process: simulate() may be called once.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/analytic/analytic.hpp"
#include "models/core/profile.hpp"
#include "models/core/workload.hpp"
#include "models/kernel/implementation.hpp"
#include "sim/faults.hpp"
#include "sim/link_meter.hpp"
#include "sim/options.hpp"
#include "sim/topology.hpp"
#include "trace/event.hpp"

namespace simgrid::s4u {
class Engine;
}

namespace ringsim::sim {

// Events are the trace format's own (trace/event.hpp), recorded in
// microseconds as the simulation produces them.
using trace::Event;
using trace::Phase;

// One compute step of one device (--csv).
struct StepRow {
  std::int32_t layer = 0, step = 0, kv_block = -1;
  bool bwd = false;
  std::uint64_t entries = 0, comm_bytes = 0;
  double start = 0, compute_s = 0, comm_end = 0, end = 0, wait_s = 0;
  bool stalled = false;
};

struct SimOptions {
  // As the user gave it: with tp > 1 simulate() runs tp_rank_workload(workload)
  // on group_hardware(hardware, tp) and adds the TP groups' collectives.
  Workload workload;
  Hardware hardware;
  // The implementation (kernel rates, per-step costs, interference); required.
  const Implementation* compute = nullptr;
  // Usually topology.devices == workload.devices. Fewer: the representative
  // period of a symmetric ring (sim/symmetry.hpp); the workload still sets
  // the steps and each step's work.
  TopologyOptions topology;
  NetworkModel network = NetworkModel::Exact;
  Faults faults;
  bool record_events = false;  // keep every activity (--trace)
  bool record_rows = false;    // keep every device-step (--csv)
  bool progress = false;
  // Job mode (--dp): `rings` CP rings of workload.devices ranks each, placed
  // one after another (ring r's rank c is device r x devices + c, so tp is
  // innermost, then cp, then dp), all on one platform of topology.devices =
  // rings x devices. `fsdp`: each layer's FSDP all-gathers (and, backward,
  // reduce-scatter) over all the job's ranks run as flows beside the rings.
  std::int64_t rings = 1;
  bool fsdp = false;
  // Play the schedule as a recurrence instead of SimGrid's actors
  // (sim/recurrence.hpp): only for a run recurrence_refusal() accepts.
  bool recurrence = false;
};

// Job mode's results (SimOptions::rings > 1).
struct JobResult {
  std::int64_t rings = 0, ring_size = 0;
  std::vector<double> ring_time_s;  // per ring: when its last device finished
  std::int64_t slowest_ring = 0;
  double fsdp_s = 0;             // busiest device's time in FSDP collectives
  std::uint64_t fsdp_bytes = 0;  // bytes one rank sends per FSDP round, all-gather
  std::vector<LinkLoad> links;   // the busiest link directions, busiest first
  std::string slowest_link;      // the busiest link on the slowest ring's own route ("" none)
  double slowest_link_peak = 0;
};

struct SimResult {
  double time_s = 0;            // when the last device finished
  double compute_only_s = 0;    // sum over steps of the slowest device's compute (free links)
  double mean_free_s = 0;       // the devices' mean compute with free links (the verdict's losses)
  bool slowed_devices = false;  // --straggler or --jitter slowed some device's compute
  double compute_s_per_step = 0;  // slowest device, heaviest step, first pass
  double collective_s = 0;        // all-to-all / gather / reduce-scatter time, busiest device
  double other_s = 0;             // --scope layer: projections + MLP, busiest device
  double tp_comm_s = 0;           // --tp, --scope layer: TP collectives, busiest device
  double ep_comm_s = 0;           // --ep, --scope layer: MoE dispatch + combine, busiest device
  std::uint64_t activities = 0;   // execs + transfers simulated
  // Stalls: a device that had work waited for a transfer after computing.
  std::vector<std::int64_t> stalled_steps[2];  // [fwd, bwd]: steps (any layer) with a stall
  std::uint64_t stalled_device_steps = 0;
  double wait_s = 0;                 // summed over devices
  std::int64_t critical_device = 0;  // most compute time (ties: finished last, lowest index)
  // The verdict's view (models/analytic/verdict.hpp): the device whose finish
  // sets the time (the first of equals) and where its time beyond its own
  // compute went, all layers.
  struct TimeSetter {
    std::int64_t device = 0;
    double finish_s = 0, free_s = 0, interference_s = 0, final_hop_s = 0;
    double collectives_s = 0, tp_s = 0, ep_s = 0;
    std::array<std::map<std::int64_t, double>, 2> step_wait_s;  // [fwd, bwd][step]
  } setter;
  // The slowest device's compute of the lightest and heaviest step (layer 0).
  double lightest_step_s = 0, heaviest_step_s = 0;
  int lightest_pass = 0, heaviest_pass = 0;
  std::int64_t lightest_step = 0, heaviest_step = 0;
  std::vector<double> device_busy_s, device_finish_s;
  // Topology::describe() of the simulated platform; for a symmetric run the
  // full cluster's, then "(simulated: ...)" and the period's.
  std::string platform;
  std::int64_t simulated_devices = 0;  // < workload.devices: a symmetric run's period
  bool recurrence = false;             // played as a recurrence: no SimGrid activities
  bool interrupted = false;
  std::vector<std::vector<Event>> events;  // per device, in time order
  std::vector<std::vector<StepRow>> rows;  // per device
  JobResult job;                           // job mode only (rings > 1)
};

// The topology the hardware describes (catalog bandwidths and latencies).
TopologyOptions topology_options(const Hardware& hw, std::int64_t devices);
// The topology a workload runs on: with --tp, the CP ring of TP groups on
// group_hardware(hw, tp) and each group's GPUs on their own ports at the TP
// link (models/analytic/tp_collectives.hpp: tp_link), as the closed forms see it.
TopologyOptions topology_options(const Hardware& hw, const Workload& w);

// False once simulate() has run in this process (tests skip rather than fail
// when a binary is run without one-test-per-process filtering).
bool simulation_available();
// Marks this process's one engine as taken; throws std::logic_error if it
// already was.
void claim_simulation_engine();
// Claims and starts this process's engine, configured as every ringsim
// simulation is (network model, quiet logs, small stacks, our Ctrl-C handler).
std::unique_ptr<simgrid::s4u::Engine> start_engine(NetworkModel network);

// Runs the simulation. Throws InputError for inputs the platform rejects,
// std::runtime_error if the simulation deadlocks or an actor fails.
SimResult simulate(const SimOptions& o);

}  // namespace ringsim::sim
