#include "sim/simulate.hpp"

#include <fmt/format.h>
#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <simgrid/s4u.hpp>
#include <stdexcept>

#include "models/analytic/collectives.hpp"
#include "models/analytic/tp_collectives.hpp"
#include "models/core/calls.hpp"
#include "models/core/errors.hpp"
#include "models/core/work.hpp"
#include "sim/guard.hpp"
#include "sim/platform.hpp"
#include "sim/progress.hpp"
#include "sim/recorder.hpp"
#include "sim/recurrence.hpp"
#include "sim/run.hpp"
#include "sim/transfer.hpp"

namespace ringsim::sim {

TopologyOptions topology_options(const Hardware& hw, std::int64_t devices) {
  TopologyOptions t;
  t.platform = hw.platform;
  t.devices = devices;
  t.gpus_per_node = hw.gpus_per_node;
  t.intra_bw = hw.intra_bw;
  t.intra_lat = hw.intra_lat;
  t.inter_bw = hw.inter_bw;
  t.inter_lat = hw.inter_lat;
  t.nics_per_node = hw.nics_per_node;
  t.nvlink_domain = hw.nvlink_domain;
  t.oversubscription = hw.oversubscription;
  t.leaf_ports = hw.leaf_ports;
  t.inter = hw.inter_fattree ? InterTopology::FatTree : InterTopology::Rail;
  t.wraparound = hw.torus_wraparound;
  std::int64_t cells = 1;
  for (int d : hw.torus_dims) cells *= d;
  if (!hw.torus_dims.empty() && cells == devices) t.torus_dims = hw.torus_dims;
  return t;
}

TopologyOptions topology_options(const Hardware& hw, const Workload& w) {
  if (w.tp <= 1) return topology_options(hw, w.devices);
  auto t = topology_options(group_hardware(hw, w.tp), w.devices);
  const auto link = tp_link(hw, w.tp);
  t.tp = w.tp;
  t.tp_bw = link.bandwidth;
  t.tp_lat = link.latency;
  return t;
}

namespace {

namespace sg4 = simgrid::s4u;

// Every transfer carries this pointer; only its simulated size matters.
int g_token = 0;
bool g_engine_used = false;
// The clock stretch of this process's one simulation (build_platform): a
// power of two, 1 unless the run's activities are shorter than ~1 us.
double g_time_scale = 1;

// SimGrid's timing precision is 1 ns: an activity shorter than that ends at
// once (a block of 7 tokens computes in picoseconds and came out free). The
// clock is stretched so the shortest activity lasts at least 2^-20 s (~1 us,
// a thousand times the precision). The shortest activity is sampled: every
// link's latency, each pass's first and last step on the first and last
// device (phases apart), its closing and dense work, and its messages on the
// fastest link, an all-to-all share being the smallest. Jitter can shorten a
// single compute further; its factor is not bounded below.
double choose_time_scale(const Run& r) {
  double m = std::numeric_limits<double>::infinity(), fastest = 0;
  auto take = [&m](double t) {
    if (t > 0) m = std::min(m, t);
  };
  for (const auto& l : r.topo.links()) {
    take(l.latency);
    fastest = std::max(fastest, l.bandwidth);
  }
  for (int p : r.passes) {
    for (std::int64_t d : {std::int64_t{0}, r.n - 1})
      for (std::int64_t st : {std::int64_t{0}, r.steps - 1}) {
        const auto c = r.im.step(r.w, d, st, p == 1, false);
        take(c.launch_s);
        take(c.attention_s);
        take(c.merge_s);
      }
    take(r.im.reduce(r.w, 0, p == 1));
    take(r.dense_s[p]);
    if (fastest > 0) take(static_cast<double>(r.tp_share) / fastest);
    if (fastest > 0) {
      const auto& b = r.bytes[p];
      const double share = static_cast<double>(std::max<std::int64_t>(r.w.devices, 1));
      for (const auto x :
           {b.ring, b.final_hop, b.a2a_in, b.a2a_out, b.gather_block, b.scatter_block})
        take(static_cast<double>(x) / share / fastest);
    }
  }
  const double target = std::ldexp(1.0, -20);
  if (!(m < target)) return 1;
  return std::ldexp(1.0, std::min(60, static_cast<int>(std::ceil(std::log2(target / m)))));
}

CommTimes times_of(const sg4::CommPtr& send, const sg4::CommPtr& recv) {
  const double k = g_time_scale;
  return {send->get_start_time() / k, send->get_finish_time() / k, recv->get_start_time() / k,
          recv->get_finish_time() / k};
}

// Mailbox from GPU `from` to GPU `to` of device d's TP group.
sg4::Mailbox* tp_box(const Topology& topo, std::int64_t d, int from, int to) {
  return sg4::Mailbox::by_name(fmt::format("tp{}>{}", topo.tp_host(d, from), topo.tp_host(d, to)));
}

// One ring collective of device d's TP group as each of its GPUs plays it:
// wait for the whole group (its GPUs compute alike and arrive together), then
// tp - 1 rounds, each sending one share to the next GPU and receiving one from
// the previous; `round(k, t0, t1)` sees round k.
template <typename F>
void tp_ring_rounds(Run& r, std::int64_t d, sg4::Mailbox* out, sg4::Mailbox* in, F&& round) {
  r.tp_barrier[static_cast<std::size_t>(d)]->wait();
  for (int k = 1; k < r.tp; ++k) {
    if (interrupt_requested()) throw Interrupted{};
    const double t0 = sg4::Engine::get_clock() / g_time_scale;
    int* got = nullptr;
    auto send = out->put_async(&g_token, r.tp_share);
    auto recv = in->get_async<int>(&got);
    wait_transfer(recv);
    wait_transfer(send);
    round(k, t0, sg4::Engine::get_clock() / g_time_scale);
  }
}

// One device's schedule: the layout's steps, transfers and collectives, in
// order. What happened is handed to the recorder.
class Device {
 public:
  Device(Run& run, std::int64_t d) : r_(run), w_(run.w), d_(d) {
    // Neighbours inside the device's own ring (job mode: ring r's ranks are
    // devices r x ring .. r x ring + ring - 1).
    std::int64_t hop = 0;
    switch (w_.layout) {
      case Layout::Ulysses:
        break;
      case Layout::Hybrid:
        hop = w_.ulysses();
        break;
      default:
        hop = 1;
    }
    std::tie(prev_, next_) = r_.ring_neighbours(d, hop);
    if (next_ >= 0) {
      out_ = sg4::Mailbox::by_name(fmt::format("{}>{}", d, next_));
      in_ = sg4::Mailbox::by_name(fmt::format("{}>{}", prev_, d));
      slowdown_ = r_.interference(d, next_);
    }
    const auto has_a2a = [](const PassBytes& b) { return b.a2a_in > 0 || b.a2a_out > 0; };
    if (w_.layout == Layout::Ulysses || w_.layout == Layout::Hybrid || has_a2a(r_.bytes[0]) ||
        has_a2a(r_.bytes[1])) {
      // Staged all-to-all inside the group of U consecutive devices (a
      // Ulysses group, or the whole ring for a per-layer layout permutation):
      // in round r, send to the r-th next member and receive from the r-th previous.
      const auto u = alltoall_group(w_), g0 = d / u * u, k = d - g0;
      for (std::int64_t r = 1; r < u; ++r) {
        const auto to = g0 + (k + r) % u, from = g0 + (k - r + u) % u;
        a2a_peer_.push_back(to);
        a2a_out_.push_back(sg4::Mailbox::by_name(fmt::format("{}>{}", d, to)));
        a2a_in_.push_back(sg4::Mailbox::by_name(fmt::format("{}>{}", from, d)));
      }
    }
    if (r_.tp_collectives > 0) {
      tp_out_ = tp_box(r_.topo, d, 0, 1 % r_.tp);
      tp_in_ = tp_box(r_.topo, d, r_.tp - 1, 0);
    }
  }

  void run() {
    for (int layer = 0; layer < w_.layers; ++layer) {
      for (std::size_t pi = 0; pi < r_.passes.size(); ++pi) {
        const int pass = r_.passes[pi];
        // Job mode: meet the FSDP actor (its last collectives done) as the pass starts.
        if (!r_.fsdp_barrier.empty()) r_.fsdp_barrier[static_cast<std::size_t>(d_)]->wait();
        // Backward meets the MLP before attention; forward after. The TP
        // collectives follow the dense part in both (their place in the layer
        // changes nothing: none overlaps anything).
        if (pass == 1) {
          dense(layer, static_cast<int>(pi), pass);
          tp_collectives(layer, pass);
          ep_alltoalls(layer, pass);
        }
        const auto& b = r_.bytes[pass];
        switch (w_.layout) {
          case Layout::Ulysses:
          case Layout::Hybrid:
            alltoall(layer, pass, b.a2a_in);
            ring_steps(layer, static_cast<int>(pi), pass);
            alltoall(layer, pass, b.a2a_out);
            break;
          case Layout::Allgather:
            ring_collective(Phase::AllGather, layer, pass, b.gather_block);
            ring_steps(layer, static_cast<int>(pi), pass);
            if (b.scatter_block)
              ring_collective(Phase::ReduceScatter, layer, pass, b.scatter_block);
            break;
          default:
            // A per-layer layout permutation: Q, K, V (dO) in, O (dQ, dK, dV) back.
            alltoall(layer, pass, b.a2a_in);
            ring_steps(layer, static_cast<int>(pi), pass);
            alltoall(layer, pass, b.a2a_out);
        }
        if (pass == 0) {
          dense(layer, static_cast<int>(pi), pass);
          tp_collectives(layer, pass);
          ep_alltoalls(layer, pass);
        }
      }
    }
    r_.rec.finished(d_, now());
  }

 private:
  Run& r_;
  const Workload& w_;
  std::int64_t d_, next_ = -1, prev_ = -1;
  sg4::Mailbox* out_ = nullptr;
  sg4::Mailbox* in_ = nullptr;
  std::vector<sg4::Mailbox*> a2a_out_, a2a_in_;
  std::vector<std::int64_t> a2a_peer_;
  sg4::Mailbox* tp_out_ = nullptr;  // --tp: to the group's next GPU, from its last
  sg4::Mailbox* tp_in_ = nullptr;
  Interference slowdown_;  // while this device's own send runs

  static double now() { return sg4::Engine::get_clock() / g_time_scale; }
  std::int32_t kv(std::int64_t step) const { return r_.kv(d_, step); }

  // `seconds` of compute. A timed wait, not an exec: every device has a host
  // of its own, so an exec would share its CPU with nothing, and a sleep costs
  // SimGrid no solver variable (docs/sim.md, "Speed").
  static void compute(double seconds) { sg4::this_actor::sleep_for(seconds * g_time_scale); }

  // The step's compute while its own send runs (posted at t0): slowed by the
  // interference until the send ends, at full speed after. Returns when the
  // compute ended; `ends` gets the phase ends (from t0). One timed wait on
  // the send: if it times out the compute ended first; if the send ends
  // first, the rest runs at full speed. No interference: just the compute.
  double overlapped(const StepCost& cost, bool busy, double t0, const sg4::CommPtr& send,
                    PhaseEnds& ends) {
    const auto& f = slowdown_;
    if (f.compute == 1 && f.memory == 1) {
      if (busy) compute(cost.total());
      return now();
    }
    if (!busy) return t0;
    const double slowed = overlap_phases(cost, f, 1e300);
    const bool send_first = sg4::Comm::wait_any_for({send}, slowed * g_time_scale) == 0;
    if (!send_first) wait_transfer(send);
    ends = overlap_phase_ends(cost, f, now() - t0);
    if (send_first) {
      const double rest = t0 + ends.merge - now();
      if (rest > 0) compute(rest);
    }
    return t0 + ends.merge;
  }

  // The ring steps of one pass (one step for ulysses and allgather): send the
  // held block on and receive the next while computing; the next step starts
  // when the compute, the receive and the send (its buffer is reused) are done.
  // While the send runs the compute is slower (interference): the actor runs
  // the phases at their slowed length and, if the send ends first, the rest
  // at full speed; the phase ends are overlap_phase_ends() of the send's
  // actual duration, the same function the closed forms use.
  // With --overlap none the transfer is posted only after the compute.
  void ring_steps(int layer, int pi, int pass) {
    const auto steps = r_.steps;
    const auto bytes = r_.bytes[pass].ring;
    const bool ringed = w_.layout != Layout::Ulysses && w_.layout != Layout::Allgather;
    const bool overlap = r_.o.hardware.overlap;
    for (std::int64_t s = 0; s < steps; ++s) {
      if (interrupt_requested()) throw Interrupted{};
      const double t0 = now();
      const bool xfer = out_ && ringed && s + 1 < steps;
      sg4::CommPtr send, recv;
      int* got = nullptr;
      auto post = [&] {
        send = out_->put_async(&g_token, bytes);
        recv = in_->get_async<int>(&got);
      };
      const auto cost = r_.cost(d_, layer, pass, s, xfer && bytes > 0);
      const bool busy = cost.total() > 0;
      PhaseEnds ends{cost.launch_s, cost.launch_s + cost.attention_s, cost.total()};
      double tc = t0;
      if (xfer && overlap) {
        post();
        tc = overlapped(cost, busy, t0, send, ends);
      } else {
        if (busy) compute(cost.total());
        tc = now();
      }
      if (xfer && !overlap) post();
      CommTimes ct;
      if (xfer) {
        wait_transfer(recv);
        wait_transfer(send);
        ct = times_of(send, recv);
        r_.meter_add(d_, next_, bytes, ct.send_start, ct.send_end);
      }
      r_.record_step(d_, layer, pi, s, cost, busy, ends, t0, tc, now(), xfer, bytes, ct, prev_,
                     next_);
    }
    // Backward: dK/dV of the block held last is one hop short of home.
    if (pass == 1 && ringed && out_ && r_.bytes[1].final_hop) {
      const auto fb = r_.bytes[1].final_hop;
      const double h0 = now();
      int* got = nullptr;
      auto send = out_->put_async(&g_token, fb);
      auto recv = in_->get_async<int>(&got);
      wait_transfer(recv);
      wait_transfer(send);
      r_.rec.hop_time(d_, now() - h0);
      const auto hop = times_of(send, recv);
      r_.meter_add(d_, next_, fb, hop.send_start, hop.send_end);
      r_.rec.final_hop(d_, layer, pass, fb, hop, prev_, next_, kv(steps - 1), kv(0));
    }
    // The pass's closing work: final casts, deferred corrections.
    if (const double red = r_.reduce_seconds(d_, layer, pass); red > 0) {
      const double t0 = now();
      compute(red);
      r_.rec.reduce(d_, layer, pi, pass, t0, now());
    }
  }

  // A collective of `count` rounds; in each the device sends `bytes` to one
  // peer and receives as much from another, and moves on when both are done.
  template <typename Pick>
  void rounds(Phase ph, int layer, int pass, std::int64_t count, std::uint64_t bytes, Pick pick) {
    const double start = now();
    for (std::int64_t r = 0; r < count; ++r) {
      if (interrupt_requested()) throw Interrupted{};
      const double t0 = now();
      const auto [out, in, peer, block] = pick(r);
      int* got = nullptr;
      auto send = out->put_async(&g_token, bytes);
      auto recv = in->template get_async<int>(&got);
      wait_transfer(recv);
      wait_transfer(send);
      r_.rec.round(d_, ph, layer, pass, static_cast<std::int32_t>(r + 1), t0, now(), bytes, peer,
                   block);
      r_.progress.tick();
    }
    r_.rec.collective_time(d_, now() - start);
  }

  void alltoall(int layer, int pass, std::uint64_t bytes_per_device) {
    const auto u = static_cast<std::int64_t>(a2a_out_.size()) + 1;
    if (u <= 1 || bytes_per_device == 0) return;
    // Each peer gets 1/U of the device's data; its own share stays local.
    const auto chunk = bytes_per_device / static_cast<std::uint64_t>(u);
    rounds(Phase::AllToAll, layer, pass, u - 1, chunk, [&](std::int64_t r) {
      return std::tuple{a2a_out_[r], a2a_in_[r], a2a_peer_[r], std::int64_t{-1}};
    });
  }

  void ring_collective(Phase ph, int layer, int pass, std::uint64_t block) {
    if (!out_ || block == 0) return;
    // Round r forwards the block that arrived r rounds ago (own block first).
    rounds(ph, layer, pass, r_.n - 1, block, [&](std::int64_t r) {
      return std::tuple{out_, in_, next_, ((d_ - r) % r_.n + r_.n) % r_.n};
    });
  }

  // --tp: the group's ring collectives of one pass. Sequence parallel:
  // all-gather, reduce-scatter, all-gather, reduce-scatter; without it two
  // all-reduces, each a reduce-scatter then an all-gather (NCCL's ring).
  void tp_collectives(int layer, int pass) {
    if (r_.tp_collectives == 0) return;
    const double start = now();
    for (int c = 0; c < r_.tp_collectives; ++c) {
      const Phase ph =
          (c % 2 == 0) == r_.sequence_parallel ? Phase::AllGather : Phase::ReduceScatter;
      // Each library call pays its base latency once (tp_calls_per_pass):
      // every collective with sequence parallelism, every all-reduce without.
      if (r_.sequence_parallel || c % 2 == 0)
        sg4::this_actor::sleep_for(kCollectiveBaseLatency * g_time_scale);
      tp_ring_rounds(r_, d_, tp_out_, tp_in_, [&](int k, double t0, double t1) {
        r_.rec.round(d_, ph, layer, pass, k, t0, t1, r_.tp_share, -1, -1);
        r_.rec.extra_activities(static_cast<std::uint64_t>(r_.tp - 1));  // the other GPUs' sends
        r_.progress.tick();
      });
    }
    r_.rec.tp_time(d_, now() - start);
  }

  // --ep: the MoE layer's dispatch and combine (Run::ep_s), exposed.
  void ep_alltoalls(int layer, int pass) {
    if (r_.ep_s[pass] <= 0) return;
    const double t0 = now();
    sg4::this_actor::sleep_for(r_.ep_s[pass] * g_time_scale);
    r_.rec.ep_alltoalls(d_, layer, pass, t0, now(), r_.ep_bytes);
  }

  void dense(int layer, int pi, int pass) {
    if (r_.dense_s[pass] <= 0) return;
    const double t0 = now();
    compute(r_.dense_seconds(d_, layer, pass));
    r_.rec.dense(d_, layer, pi, pass, t0, now());
  }
};

void device_main(Run* run, std::int64_t d) {
  try {
    Device(*run, d).run();
  } catch (const Interrupted&) {
    run->rec.result().interrupted = true;
    sg4::Actor::kill_all();
  } catch (const std::exception& e) {
    // An exception escaping an actor aborts the process; report it instead.
    if (run->error.empty()) run->error = fmt::format("device {}: {}", d, e.what());
    sg4::Actor::kill_all();
  }
}

// GPU k (1 .. tp-1) of device d's TP group: it only joins the group's
// collectives, as many as the device plays (layers x passes x per pass).
void tp_peer_main(Run* run, std::int64_t d, int k) {
  try {
    auto& r = *run;
    auto* out = tp_box(r.topo, d, k, (k + 1) % r.tp);
    auto* in = tp_box(r.topo, d, k - 1, k);
    const auto count = static_cast<std::int64_t>(r.w.layers) *
                       static_cast<std::int64_t>(r.passes.size()) * r.tp_collectives;
    for (std::int64_t c = 0; c < count; ++c)
      tp_ring_rounds(r, d, out, in, [](int, double, double) {});
  } catch (const Interrupted&) {
    run->rec.result().interrupted = true;
    sg4::Actor::kill_all();
  } catch (const std::exception& e) {
    if (run->error.empty()) run->error = fmt::format("device {} TP GPU {}: {}", d, k, e.what());
    sg4::Actor::kill_all();
  }
}

// Job mode: device d's FSDP collectives, beside its ring. At the start of
// each pass it meets the device (which so waits for the previous pass's
// gathers: FSDP prefetches one ahead), then plays the pass's ring collectives
// over every rank of the job, d -> d + 1 (the shard group in rank order, tp
// innermost): forward an all-gather of the layer's weights, backward another
// (they were freed after forward) and a reduce-scatter of its gradients.
//
// A ring collective of n ranks is n - 1 rounds in which every rank sends one
// share to the next; in its steady state every hop carries a constant stream.
// So the rounds are played in kFsdpStages stages: in each, every rank sends
// its stage's m rounds as one flow of m shares (the links carry the same
// bytes at the same rate while it runs) and waits out the m - 1 latencies the
// one flow does not pay (each round pays its hop's latency; the slowest
// hop's), and moves on when it has sent its flow and received its
// predecessor's (a slow hop holds its neighbours back a stage at a time, as
// it holds a ring pipeline back). The collective ends when every rank's has
// (a ring pipeline ends with its slowest hop). Uncontended a collective is
// (n - 1) x (share / B + L), the rounds' time, at n x kFsdpStages flows
// instead of n (n - 1) transfers.
void fsdp_main(Run* run, std::int64_t d) {
  try {
    auto& r = *run;
    const auto i = static_cast<std::size_t>(d);
    const auto next = (d + 1) % r.n;
    auto* out = sg4::Mailbox::by_name(fmt::format("fsdp{}>{}", d, next));
    auto* in = sg4::Mailbox::by_name(fmt::format("fsdp{}>{}", (d - 1 + r.n) % r.n, d));
    const auto rounds = r.n - 1, stages = std::min(rounds, kFsdpStages);
    auto collective = [&](std::uint64_t share) {
      for (std::int64_t k = 0; k < stages; ++k) {
        if (interrupt_requested()) throw Interrupted{};
        const auto m = rounds * (k + 1) / stages - rounds * k / stages;
        const auto bytes = share * static_cast<std::uint64_t>(m);
        int* got = nullptr;
        auto send = out->put_async(&g_token, bytes);
        auto recv = in->get_async<int>(&got);
        wait_transfer(recv);
        wait_transfer(send);
        const auto t = times_of(send, recv);
        r.meter_add(d, next, bytes, t.send_start, t.send_end);
        r.rec.extra_activities(1);
        if (m > 1)
          sg4::this_actor::sleep_for(static_cast<double>(m - 1) * r.fsdp_lat * g_time_scale);
      }
      r.fsdp_all->wait();
    };
    for (int layer = 0; layer < r.w.layers; ++layer)
      for (int pass : r.passes) {
        r.fsdp_barrier[i]->wait();
        const double t0 = sg4::Engine::get_clock() / g_time_scale;
        collective(r.fsdp_ag);
        if (pass == 1) collective(r.fsdp_rs);
        const double t1 = sg4::Engine::get_clock() / g_time_scale;
        r.fsdp_s[i] += t1 - t0;
        r.rec.busy_until(d, t1);  // the device is done when its gathers are too
      }
  } catch (const Interrupted&) {
    run->rec.result().interrupted = true;
    sg4::Actor::kill_all();
  } catch (const std::exception& e) {
    if (run->error.empty()) run->error = fmt::format("device {} FSDP: {}", d, e.what());
    sg4::Actor::kill_all();
  }
}

// Job mode's results: each ring's time, the slowest ring, the busiest links
// (all and on the slowest ring's own routes).
JobResult job_result(const Run& r, const SimResult& res) {
  JobResult j;
  j.ring_size = r.ring;
  j.rings = r.n / r.ring;
  j.ring_time_s.assign(static_cast<std::size_t>(j.rings), 0.0);
  for (std::int64_t d = 0; d < r.n; ++d) {
    auto& t = j.ring_time_s[static_cast<std::size_t>(d / r.ring)];
    t = std::max(t, res.device_finish_s[static_cast<std::size_t>(d)]);
  }
  j.slowest_ring = std::max_element(j.ring_time_s.begin(), j.ring_time_s.end()) -
                   j.ring_time_s.begin();  // the first of equals
  for (double x : r.fsdp_s) j.fsdp_s = std::max(j.fsdp_s, x);
  j.fsdp_bytes = r.fsdp_ag;
  if (!r.meter) return j;
  j.links = r.meter->hottest(8, res.time_s, r.topo.links());
  std::vector<Hop> hops;
  double mean = 0;
  for (std::int64_t c = 0; c < r.ring; ++c) {
    const auto d = j.slowest_ring * r.ring + c, next = j.slowest_ring * r.ring + (c + 1) % r.ring;
    hops.clear();
    r.topo.route(d, next, hops);
    for (const auto& h : hops) {
      const double p = r.meter->peak(h.link, h.up), m = r.meter->mean(h.link, h.up, res.time_s);
      if (LinkMeter::busier(p, m, j.slowest_link_peak, mean)) {
        j.slowest_link_peak = p;
        mean = m;
        j.slowest_link =
            r.topo.links()[static_cast<std::size_t>(h.link)].name + (h.up ? " up" : " down");
      }
    }
  }
  return j;
}

std::uint64_t progress_units(const Workload& w, std::int64_t simulated) {
  std::uint64_t per = static_cast<std::uint64_t>(num_steps(w));
  if (w.layout == Layout::Ulysses || w.layout == Layout::Hybrid) per += 2 * (w.ulysses() - 1);
  if (w.layout == Layout::Allgather) per += 2 * (w.devices - 1);
  const std::uint64_t passes = w.pass == Pass::FwdBwd ? 2 : 1;
  return per * passes * static_cast<std::uint64_t>(w.layers) *
         static_cast<std::uint64_t>(simulated);
}

// The simulated platform in words; a symmetric run names the full cluster too.
// The topology's words name the usual fabric ("an NVLink switch", "IB");
// this run's links may be others (--intra/--inter, --catalog, --bandwidth):
// each is named here with its bandwidth.
std::string with_links(std::string s, const Hardware& hw) {
  auto bw = [](double b) { return fmt::format("{:.1f} GB/s/dir", b / 1e9); };
  auto swap = [&s](const std::string& from, const std::string& to) {
    for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
      s.replace(at, from.size(), to);
  };
  if (hw.bandwidth_override) return s + fmt::format(", every link {}", bw(hw.intra_bw));
  switch (hw.platform) {
    case Platform::Nodes:
      swap("on an NVLink switch",
           fmt::format("on a {} switch ({})", hw.intra_name, bw(hw.intra_bw)));
      swap(" IB (", fmt::format(" {} network ({}; ", hw.inter_name, bw(hw.inter_bw)));
      return s;
    case Platform::FatTree:
      return s + fmt::format(" on {} ({})", hw.inter_name, bw(hw.inter_bw));
    default:
      return s + fmt::format(" on {} ({})", hw.intra_name, bw(hw.intra_bw));
  }
}

std::string describe_run(const SimOptions& o, const Topology& topo) {
  if (o.topology.devices == o.workload.devices || o.rings > 1)
    return with_links(topo.describe(), o.hardware);  // one ring, or the whole job
  auto full = o.topology;
  full.platform = o.hardware.platform;
  full.devices = o.workload.devices;
  full.wrap_is_inter = false;
  return with_links(fmt::format("{} (simulated: {})", describe_topology(full), topo.describe()),
                    o.hardware);
}

// The run played as a recurrence (no actors: SimGrid only built the platform
// whose routes it reads).
SimResult play(Run& run, const std::vector<sg4::Host*>& hosts) {
  try {
    play_recurrence(run, hosts, g_time_scale);
  } catch (const Interrupted&) {
    run.rec.result().interrupted = true;
  }
  run.progress.finish();
  if (run.rec.result().interrupted) return std::move(run.rec.result());
  return run.rec.take();
}

}  // namespace

bool simulation_available() {
  return !g_engine_used;
}

void claim_simulation_engine() {
  if (g_engine_used) throw std::logic_error("simulate: SimGrid allows one simulation per process");
  g_engine_used = true;
}

std::unique_ptr<simgrid::s4u::Engine> start_engine(NetworkModel network) {
  claim_simulation_engine();
  static char name[] = "ringsim";
#ifdef RINGSIM_SANITIZER_BUILD
  // Raw context switches confuse ASan/TSan (false reports, and an exception
  // thrown across them, as kill_all does on Ctrl-C, aborts): threads are
  // slower but clean, and sanitizer runs are small. The factory is chosen
  // when the engine starts, so it must come in with the command line.
  static char quiet[] = "--log=xbt_cfg.thres:warning";  // no "Configuration change" line on stderr
  static char factory[] = "--cfg=contexts/factory:thread";
  int argc = 3;
  char* argv[] = {name, quiet, factory, nullptr};
#else
  int argc = 1;
  char* argv[] = {name, nullptr};
#endif
  auto engine = std::make_unique<sg4::Engine>(&argc, argv);
  reinstall_interrupt_handler();
  xbt_log_control_set("root.thres:critical");
  if (network == NetworkModel::Exact) {
    engine->set_config("network/model:CM02");
    engine->set_config("network/crosstraffic:0");
    engine->set_config("network/TCP-gamma:0");
  }
  // Actors only run small loops: a small stack keeps 4K+ actors cheap.
  engine->set_config("contexts/stack-size:256");
  return engine;
}

SimResult simulate(const SimOptions& user) {
  if (!user.compute) throw std::invalid_argument("simulate: no compute model");
  // --tp: one GPU of each group plays the CP schedule with its share of the
  // heads on the ring of groups; the groups' collectives are added below.
  SimOptions o = user;
  if (user.workload.tp > 1) {
    o.workload = tp_rank_workload(user.workload);
    o.hardware = group_hardware(user.hardware, user.workload.tp);
  }

  // A symmetric run simulates one period of the ring (sim/symmetry.hpp):
  // fewer devices than the workload, ring layouts only, nothing per-device.
  if (o.rings > 1 && o.topology.devices != o.rings * o.workload.devices)
    throw std::invalid_argument("simulate: job mode needs rings x devices on the topology");
  if (o.rings <= 1 && o.topology.devices != o.workload.devices) {
    const auto l = o.workload.layout;
    if ((l != Layout::Ring && l != Layout::Striped && l != Layout::Zigzag) || o.faults.any() ||
        o.record_events || o.record_rows || o.topology.devices < 2)
      throw std::invalid_argument(
          "simulate: a reduced ring needs a uniform ring layout and no faults or outputs");
  }
  if (o.recurrence && (o.rings > 1 || o.topology.devices != o.workload.devices))
    throw std::invalid_argument("simulate: a recurrence plays one whole ring");
  Topology topo(o.topology);
  const auto divisors = link_divisors(topo, o.faults.degrades);

  auto engine = start_engine(o.network);

  const auto passes = passes_of(o.workload);
  const auto& uw = user.workload;
  const std::uint64_t tp_rounds =
      uw.tp > 1 && uw.scope == Scope::Layer
          ? static_cast<std::uint64_t>(tp_ring_collectives_per_pass(uw)) *
                static_cast<std::uint64_t>(uw.tp - 1) * passes.size() *
                static_cast<std::uint64_t>(uw.layers) *
                static_cast<std::uint64_t>(o.topology.devices)
          : 0;
  Run run(o, uw, topo, passes, progress_units(o.workload, o.topology.devices) + tp_rounds);
  {
    const auto moe = layer_moe(uw, user.hardware);
    run.ep_s[0] = moe.comm_s[0];
    run.ep_s[1] = moe.comm_s[1];
    run.ep_bytes = static_cast<std::uint64_t>(moe.a2a_bytes);
  }
  // The actors ask for every device-step's calls of this one workload, which
  // holds still while they run: pinned, a call costs its step's documents.
  const DocumentCallsScope documents_pinned(run.w);
  if (run.tp_collectives > 0 && topo.options().tp != run.tp)
    throw std::invalid_argument("simulate: --tp needs the TP groups' topology (topology_options)");
  g_time_scale = choose_time_scale(run);
  const auto hosts = build_platform(topo, divisors, g_time_scale);
  run.rec.result().platform = describe_run(o, topo);
  run.rec.result().simulated_devices = o.topology.devices;
  run.rec.result().recurrence = o.recurrence;
  if (o.recurrence) return play(run, hosts);
  sg4::Engine::on_deadlock_cb([&run] { run.deadlock = true; });
  for (std::int64_t d = 0; d < run.n; ++d)
    sg4::Actor::create(fmt::format("device{}", d), hosts[static_cast<std::size_t>(d)], device_main,
                       &run, d);
  if (o.rings > 1) {
    // Half the time a ring block takes on the fastest link: a lone transfer
    // at full rate fills at least one bin.
    double fastest = 0;
    std::vector<double> bw;
    for (std::size_t i = 0; i < topo.links().size(); ++i) {
      bw.push_back(topo.links()[i].bandwidth / (i < divisors.size() ? divisors[i] : 1.0));
      fastest = std::max(fastest, bw.back());
    }
    const double block = static_cast<double>(std::max<std::uint64_t>(
        run.bytes[passes.front()].ring, std::max<std::uint64_t>(run.fsdp_ag, 1)));
    run.meter = std::make_unique<LinkMeter>(std::move(bw), block / fastest / 2);
  }
  if (run.fsdp_ag > 0) {
    run.fsdp_all = sg4::Barrier::create(static_cast<unsigned>(run.n));
    for (std::int64_t d = 0; d < run.n; ++d)
      run.fsdp_lat = std::max(run.fsdp_lat, topo.route_latency(d, (d + 1) % run.n));
  }
  if (run.fsdp_ag > 0)
    for (std::int64_t d = 0; d < run.n; ++d) {
      run.fsdp_barrier.push_back(sg4::Barrier::create(2));
      sg4::Actor::create(fmt::format("device{}.fsdp", d), hosts[static_cast<std::size_t>(d)],
                         fsdp_main, &run, d);
    }
  if (run.tp_collectives > 0)
    for (std::int64_t d = 0; d < run.n; ++d) {
      run.tp_barrier.push_back(sg4::Barrier::create(static_cast<unsigned>(run.tp)));
      for (int k = 1; k < run.tp; ++k)
        sg4::Actor::create(fmt::format("device{}.tp{}", d, k),
                           hosts[static_cast<std::size_t>(topo.tp_host(d, k))], tp_peer_main, &run,
                           d, k);
    }
  engine->run();
  run.progress.finish();

  if (run.rec.result().interrupted) return std::move(run.rec.result());
  if (!run.error.empty()) throw std::runtime_error("simulation failed: " + run.error);
  if (run.deadlock || !run.rec.all_finished())
    throw std::runtime_error("simulation deadlocked: some devices never received their blocks");
  auto res = run.rec.take();
  if (o.rings > 1) res.job = job_result(run, res);
  return res;
}

}  // namespace ringsim::sim
