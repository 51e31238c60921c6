#pragma once
// The inputs a run's players share (the SimGrid actors of sim/simulate.cpp
// and the recurrence of sim/recurrence.cpp) and the recorder they report to.
// Internal to the `sim` library.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <simgrid/s4u/Barrier.hpp>
#include <string>
#include <vector>

#include "models/analytic/collectives.hpp"
#include "models/analytic/moe.hpp"
#include "models/analytic/tp_collectives.hpp"
#include "models/core/work.hpp"
#include "sim/progress.hpp"
#include "sim/recorder.hpp"
#include "sim/simulate.hpp"

namespace ringsim::sim {

namespace sg4 = simgrid::s4u;

// Thrown by a player that saw Ctrl-C.
struct Interrupted {};

// SimGrid runs actors one at a time in one thread (and the recurrence is one
// loop), so no locking is needed, and the order is deterministic, so sums are too.
struct Run {
  const SimOptions& o;
  const Workload& w;
  const Implementation& im;
  const Topology& topo;
  std::int64_t n, steps;
  std::vector<int> passes;  // 0 = fwd, 1 = bwd, in order
  PassBytes bytes[2];
  double dense_s[2] = {0, 0};
  // --ep on a MoE model: a pass's dispatch and combine all-to-alls, the
  // closed form's seconds (layer_moe on the cluster's hardware, set by
  // simulate()); they are not put on the links: a layer's dispatch follows its
  // attention, so the ring's transfers of that layer are done.
  double ep_s[2] = {0, 0};
  std::uint64_t ep_bytes = 0;
  // --tp: GPUs per group, the bytes each sends per ring round, ring
  // collectives per pass (0: none, e.g. --scope attention), whether they are
  // all-gathers + reduce-scatters (sequence parallel) or all-reduces, and one
  // barrier per group: its GPUs compute alike, so they enter each collective
  // together.
  int tp = 1;
  std::uint64_t tp_share = 0;
  int tp_collectives = 0;
  bool sequence_parallel = true;
  std::vector<sg4::BarrierPtr> tp_barrier;
  std::vector<double> slow;
  // Job mode: ranks per CP ring (n itself outside job mode), the link meter,
  // and the FSDP flows: bytes one rank sends per round (all-gather,
  // reduce-scatter), each device's time in them, and one barrier per device
  // where its FSDP actor meets it at the start of each pass.
  std::int64_t ring = 0;
  std::unique_ptr<LinkMeter> meter;
  std::uint64_t fsdp_ag = 0, fsdp_rs = 0;
  std::vector<double> fsdp_s;
  std::vector<sg4::BarrierPtr> fsdp_barrier;
  // Every FSDP actor meets here as a collective ends; the slowest hop's route
  // latency, paid once per round.
  sg4::BarrierPtr fsdp_all;
  double fsdp_lat = 0;
  Recorder rec;
  Progress progress;
  std::string error;
  bool deadlock = false;

  Run(const SimOptions& opt, const Workload& user, const Topology& t, std::vector<int> ps,
      std::uint64_t units)
      : o(opt),
        w(opt.workload),
        im(*opt.compute),
        topo(t),
        n(opt.topology.devices),
        steps(num_steps(opt.workload)),
        passes(ps),
        ring(opt.rings > 1 ? opt.workload.devices : opt.topology.devices),
        rec(opt, opt.topology.devices, num_steps(opt.workload), std::move(ps)),
        progress(opt.progress, units, "ringsim: simulating") {
    // A MoE model's experts (layer_moe reads the rates alone, which the
    // TP group's hardware keeps; w keeps the experts' TP degree).
    const auto moe = layer_moe(w, o.hardware);
    for (int p : passes) {
      bytes[p] = pass_bytes(w, p == 1, im);
      if (w.scope == Scope::Layer)
        dense_s[p] = other_layer_seconds(w, o.hardware, p == 1) +
                     layer_pointwise_seconds(w, o.hardware, p == 1) +
                     moe.compute_s[static_cast<std::size_t>(p)];
    }
    slow = device_slowdowns(n, o.faults.stragglers);
    // The same collectives and bytes the closed forms charge (tp_pass_seconds).
    tp = std::max(user.tp, 1);
    if (tp > 1 && user.scope == Scope::Layer) {
      tp_collectives = tp_ring_collectives_per_pass(user);
      tp_share =
          tp_share_bytes(user.block * user.batch, user.shape.d_model, dtype_bytes(user.dtype), tp);
    }
    sequence_parallel = user.sequence_parallel;
    if (o.fsdp && o.rings > 1 && user.scope == Scope::Layer) {
      // The layer's TP shard (1/tp of its weights) gathered over every rank
      // of the job (TorchTitan's flattened dp_shard x cp mesh): each of the n
      // rounds' shares is 1/n of it; weights in the run's dtype, gradients
      // reduced in fp32 (TorchTitan's default reduce dtype).
      const double shard = static_cast<double>(layer_params(user.shape)) / tp;
      const double per = shard / static_cast<double>(n);
      fsdp_ag = static_cast<std::uint64_t>(std::ceil(per * dtype_bytes(user.dtype)));
      fsdp_rs = static_cast<std::uint64_t>(std::ceil(per * 4));
      fsdp_s.assign(static_cast<std::size_t>(n), 0.0);
    }
  }

  // Ring-local rank of device d (job mode: device r x ring + c is rank c of ring r).
  std::int64_t rank(std::int64_t d) const { return d % ring; }
  // Job mode: a transfer's bytes on the links of its route.
  void meter_add(std::int64_t from, std::int64_t to, std::uint64_t bytes, double t0, double t1) {
    if (!meter) return;
    thread_local std::vector<Hop> hops;
    hops.clear();
    topo.route(from, to, hops);
    meter->add(hops, static_cast<double>(bytes), t0 + topo.route_latency(from, to), t1);
  }

  // One device-step's phases (models/kernel/implementation.hpp). A straggler
  // or jitter slows all of them alike.
  StepCost cost(std::int64_t d, int layer, int pass, std::int64_t step, bool sends) const {
    auto c = im.step(w, rank(d), step, pass == 1, sends);
    const double k = factor(d, layer, pass, step);
    c.launch_s *= k;
    c.attention_s *= k;
    c.merge_s *= k;
    return c;
  }
  // The pass's closing work (the reduce phase); `step` -2 keeps its jitter
  // apart from the steps' and the dense work's (-1).
  double reduce_seconds(std::int64_t d, int layer, int pass) const {
    const double t = im.reduce(w, rank(d), pass == 1);
    return t > 0 ? t * factor(d, layer, pass, -2) : 0;
  }
  // --scope layer's projections and MLP of one pass; `step` -1 keeps its
  // jitter apart from the steps'.
  double dense_seconds(std::int64_t d, int layer, int pass) const {
    return dense_s[pass] * slow[static_cast<std::size_t>(d)] *
           jitter_factor(o.faults.jitter_sigma, o.faults.seed, d, layer, pass, -1);
  }
  double factor(std::int64_t d, int layer, int pass, std::int64_t step) const {
    return slow[static_cast<std::size_t>(d)] *
           jitter_factor(o.faults.jitter_sigma, o.faults.seed, d, layer, pass, step);
  }
  // The K/V block device d holds at `step`.
  std::int32_t kv(std::int64_t d, std::int64_t step) const {
    return static_cast<std::int32_t>(kv_source(w, rank(d), step));
  }
  // Device d's ring neighbours (-1, -1: a ring of one, or no ring hop).
  std::pair<std::int64_t, std::int64_t> ring_neighbours(std::int64_t d, std::int64_t hop) const {
    const auto c = rank(d), base = d - c;
    if (hop <= 0 || (c + hop) % ring == c) return {-1, -1};
    return {base + (c - hop + ring) % ring, base + (c + hop) % ring};
  }
  // One ring step as both players record it: phase ends `ends` from t0, the
  // compute's end tc and the step's te (the run's seconds); `xfer`: the step
  // sent `bytes` (times `ct`).
  void record_step(std::int64_t d, int layer, int pi, std::int64_t s, const StepCost& cost,
                   bool busy, const PhaseEnds& ends, double t0, double tc, double te, bool xfer,
                   std::uint64_t sent, const CommTimes& ct, std::int64_t prev, std::int64_t next) {
    StepTimes st{t0, t0 + ends.launch, t0 + ends.attention, tc, te};
    st.free_s = cost.total();
    rec.step(d, layer, pi, s, st, busy, cost, xfer ? sent : 0, ct, prev, next, kv(d, s),
             xfer ? kv(d, s + 1) : -1);
    progress.tick();
  }

  // How the implementation's communication library slows device d while its
  // own send to `next` runs: the kind and bandwidth of that route's slowest link.
  Interference interference(std::int64_t d, std::int64_t next) const {
    const auto& hw = o.hardware;
    if (next < 0 || !hw.overlap) return {};
    std::vector<Hop> hops;
    topo.route(d, next, hops);
    double bw = 0;
    for (const auto& h : hops) {
      const double b = topo.links()[static_cast<std::size_t>(h.link)].bandwidth;
      bw = bw == 0 ? b : std::min(bw, b);
    }
    if (bw == 0) bw = hw.ring_bandwidth(w.devices);
    std::string kind = hw.intra_kind;
    if (hw.platform == Platform::FatTree && !hw.bandwidth_override)
      kind = hw.inter_kind;
    else if (bw < o.topology.intra_bw * (1 - 1e-12))
      kind = hw.inter_kind;  // the route leaves the node (NIC) or closes over an inter link
    return im.interference(kind, bw);
  }
};

}  // namespace ringsim::sim
