#include "sim/simulate.hpp"

#include <fmt/format.h>
#include <xbt/log.h>

#include <algorithm>
#include <set>
#include <simgrid/s4u.hpp>
#include <stdexcept>

#include "models/errors.hpp"
#include "models/work.hpp"
#include "sim/platform.hpp"
#include "sim/progress.hpp"

namespace ringsim::sim {

const std::vector<std::string>& network_model_names() {
  static const std::vector<std::string> n{"exact", "lv08"};
  return n;
}
std::string to_string(NetworkModel m) {
  return network_model_names()[static_cast<int>(m)];
}

const char* phase_name(Phase p) {
  static const char* const n[] = {"partial",   "send",          "recv",  "wait", "alltoall",
                                  "allgather", "reducescatter", "dense", "merge"};
  return n[static_cast<int>(p)];
}

const char* phase_category(Phase p) {
  return p == Phase::Partial || p == Phase::Dense || p == Phase::Merge ? "compute" : "comm";
}

TopologyOptions topology_options(const Hardware& hw, std::int64_t devices) {
  TopologyOptions t;
  t.platform = hw.platform;
  t.devices = devices;
  t.gpus_per_node = hw.gpus_per_node;
  t.intra_bw = hw.intra_bw;
  t.intra_lat = hw.intra_lat;
  t.inter_bw = hw.inter_bw;
  t.inter_lat = hw.inter_lat;
  return t;
}

namespace {

namespace sg4 = simgrid::s4u;

// Every transfer carries this pointer; only its simulated size matters.
int g_token = 0;
bool g_engine_used = false;

struct Interrupted {};

// A wait counts as a stall when it is longer than rounding noise: SimGrid's
// event dates carry ~1e-16 relative error, so 1e-9 of the step is far above it.
bool stalled(double wait, double span) {
  return wait > 1e-9 * span + 1e-15;
}

// Everything the actors share: inputs, and the statistics they accumulate.
// SimGrid runs actors one at a time in one thread, so no locking is needed,
// and the order is deterministic, so sums are too.
struct Run {
  const SimOptions& o;
  const Workload& w;
  std::int64_t n, steps;
  std::vector<int> passes;  // 0 = fwd, 1 = bwd, in order
  PassBytes bytes[2];
  double dense_s[2] = {0, 0};
  std::vector<double> slow;
  // Per (layer, pass, step) slot: the slowest compute and whether anyone stalled.
  std::vector<double> slot_compute;
  std::vector<char> slot_stalled;
  std::vector<double> dense_max;          // per (layer, pass)
  std::vector<double> collective, other;  // per device
  std::vector<char> finished;
  SimResult res;
  Progress progress;
  std::string error;
  bool deadlock = false;

  Run(const SimOptions& opt, std::uint64_t units)
      : o(opt),
        w(opt.workload),
        n(opt.topology.devices),
        steps(num_steps(opt.workload)),
        progress(opt.progress, units, "ringsim: simulating") {
    if (w.pass != Pass::Bwd) passes.push_back(0);
    if (w.pass != Pass::Fwd) passes.push_back(1);
    for (int p : passes) {
      bytes[p] = pass_bytes(w, p == 1);
      if (w.scope == Scope::Layer)
        dense_s[p] = other_layer_flops(w, p == 1) / o.hardware.effective_flops();
    }
    slow = device_slowdowns(n, o.faults.stragglers);
    const auto slots =
        static_cast<std::size_t>(w.layers) * passes.size() * static_cast<std::size_t>(steps);
    slot_compute.assign(slots, 0.0);
    slot_stalled.assign(slots, 0);
    dense_max.assign(static_cast<std::size_t>(w.layers) * passes.size(), 0.0);
    collective.assign(static_cast<std::size_t>(n), 0.0);
    other.assign(static_cast<std::size_t>(n), 0.0);
    finished.assign(static_cast<std::size_t>(n), 0);
    res.device_busy_s.assign(static_cast<std::size_t>(n), 0.0);
    res.device_finish_s.assign(static_cast<std::size_t>(n), 0.0);
    if (o.record_events) res.events.resize(static_cast<std::size_t>(n));
    if (o.record_rows) res.rows.resize(static_cast<std::size_t>(n));
  }

  std::size_t slot(int layer, int pi, std::int64_t step) const {
    return (static_cast<std::size_t>(layer) * passes.size() + static_cast<std::size_t>(pi)) *
               static_cast<std::size_t>(steps) +
           static_cast<std::size_t>(step);
  }

  double compute_seconds(std::int64_t d, int layer, int pass, std::int64_t step) const {
    return scaled(step_seconds(w, *o.compute, d, step, pass == 1), d, layer, pass, step);
  }
  double merge_seconds(std::int64_t d, int layer, int pass, std::int64_t step) const {
    return scaled(merge_step_seconds(w, *o.compute, d, step, pass == 1), d, layer, pass, step);
  }
  // A straggler or jitter slows the whole step's compute, merge included.
  double scaled(double t, std::int64_t d, int layer, int pass, std::int64_t step) const {
    if (t <= 0) return 0;
    return t * slow[static_cast<std::size_t>(d)] *
           jitter_factor(o.faults.jitter_sigma, o.faults.seed, d, layer, pass, step);
  }
};

class Device {
 public:
  Device(Run& run, std::int64_t d) : r_(run), w_(run.w), d_(d) {
    const auto n = r_.n;
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
    if (hop > 0 && (d + hop) % n != d) {
      next_ = (d + hop) % n;
      prev_ = (d - hop + n) % n;
      out_ = sg4::Mailbox::by_name(fmt::format("{}>{}", d, next_));
      in_ = sg4::Mailbox::by_name(fmt::format("{}>{}", prev_, d));
    }
    if (w_.layout == Layout::Ulysses || w_.layout == Layout::Hybrid) {
      // Staged all-to-all inside the group of U consecutive devices: in round
      // r, send to the r-th next member and receive from the r-th previous.
      const auto u = w_.ulysses(), g0 = d / u * u, k = d - g0;
      for (std::int64_t r = 1; r < u; ++r) {
        const auto to = g0 + (k + r) % u, from = g0 + (k - r + u) % u;
        a2a_peer_.push_back(to);
        a2a_out_.push_back(sg4::Mailbox::by_name(fmt::format("{}>{}", d, to)));
        a2a_in_.push_back(sg4::Mailbox::by_name(fmt::format("{}>{}", from, d)));
      }
    }
  }

  void run() {
    for (int layer = 0; layer < w_.layers; ++layer) {
      for (std::size_t pi = 0; pi < r_.passes.size(); ++pi) {
        const int pass = r_.passes[pi];
        // Backward meets the MLP before attention; forward after.
        if (pass == 1) dense(layer, static_cast<int>(pi), pass);
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
            ring_steps(layer, static_cast<int>(pi), pass);
        }
        if (pass == 0) dense(layer, static_cast<int>(pi), pass);
      }
    }
    const auto i = static_cast<std::size_t>(d_);
    r_.res.device_finish_s[i] = sg4::Engine::get_clock();
    r_.finished[i] = 1;
  }

 private:
  Run& r_;
  const Workload& w_;
  std::int64_t d_, next_ = -1, prev_ = -1;
  sg4::Mailbox* out_ = nullptr;
  sg4::Mailbox* in_ = nullptr;
  std::vector<sg4::Mailbox*> a2a_out_, a2a_in_;
  std::vector<std::int64_t> a2a_peer_;

  static double now() { return sg4::Engine::get_clock(); }

  void event(Event e) {
    if (r_.o.record_events) r_.res.events[static_cast<std::size_t>(d_)].push_back(e);
  }

  void comm_events(const sg4::CommPtr& send, const sg4::CommPtr& recv, std::uint64_t bytes,
                   int layer, int pass, std::int32_t step, std::int32_t kv_sent,
                   std::int32_t kv_received) {
    if (!r_.o.record_events) return;
    Event s;
    s.phase = Phase::Send;
    s.start = send->get_start_time();
    s.end = send->get_finish_time();
    s.bytes = bytes;
    s.peer = next_;
    s.step = step;
    s.kv_block = kv_sent;
    s.layer = layer;
    s.bwd = pass == 1;
    event(s);
    Event v = s;
    v.phase = Phase::Recv;
    v.start = recv->get_start_time();
    v.end = recv->get_finish_time();
    v.peer = prev_;
    v.kv_block = kv_received;
    event(v);
  }

  // One ring step as it happened: start, end of the partial, end of the
  // compute (after the merge), end of the step.
  struct StepTimes {
    double t0, tp, tc, te;
  };

  // The ring steps of one pass (one step for ulysses and allgather): send the
  // held block on and receive the next while computing; the next step starts
  // when the compute, the receive and the send (its buffer is reused) are done.
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
      if (xfer && overlap) post();
      const double dur = r_.compute_seconds(d_, layer, pass, s);
      if (dur > 0) sg4::this_actor::execute(dur * kHostSpeed);
      const double tp = now();
      const double mdur = r_.merge_seconds(d_, layer, pass, s);
      if (mdur > 0) sg4::this_actor::execute(mdur * kHostSpeed);
      const double tc = now();
      if (xfer && !overlap) post();
      if (xfer) {
        recv->wait();
        send->wait();
      }
      record_step(layer, pi, pass, s, {t0, tp, tc, now()}, dur > 0, xfer ? bytes : 0, send, recv);
    }
    // Backward: dK/dV of the block held last is one hop short of home.
    if (pass == 1 && ringed && out_ && r_.bytes[1].final_hop) {
      const auto fb = r_.bytes[1].final_hop;
      int* got = nullptr;
      auto send = out_->put_async(&g_token, fb);
      auto recv = in_->get_async<int>(&got);
      recv->wait();
      send->wait();
      r_.res.activities += 1;
      comm_events(send, recv, fb, layer, pass, -1,
                  static_cast<std::int32_t>(kv_source(w_, d_, steps - 1)),
                  static_cast<std::int32_t>(kv_source(w_, d_, 0)));
    }
  }

  // Statistics, events (--trace) and rows (--csv) of one ring step. `bytes`
  // is 0 when the step had no transfer (then send and recv are null).
  void record_step(int layer, int pi, int pass, std::int64_t s, const StepTimes& t, bool computed,
                   std::uint64_t bytes, const sg4::CommPtr& send, const sg4::CommPtr& recv) {
    const bool xfer = bytes > 0;
    const auto i = static_cast<std::size_t>(d_);
    const auto step = static_cast<std::int32_t>(s);
    r_.res.activities += (computed ? 1 : 0) + (xfer ? 1 : 0);
    r_.res.device_busy_s[i] += t.tc - t.t0;
    const auto slot = r_.slot(layer, pi, s);
    r_.slot_compute[slot] = std::max(r_.slot_compute[slot], t.tc - t.t0);
    const bool waited = xfer && stalled(t.te - t.tc, t.te - t.t0);
    const bool stall = computed && waited;
    if (stall) {
      r_.slot_stalled[slot] = 1;
      ++r_.res.stalled_device_steps;
      r_.res.wait_s += t.te - t.tc;
    }
    const auto kv = static_cast<std::int32_t>(kv_source(w_, d_, s));
    if (r_.o.record_events) {
      Event e;
      e.step = step;
      e.kv_block = kv;
      e.layer = layer;
      e.bwd = pass == 1;
      if (computed) {
        e.phase = Phase::Partial;
        e.start = t.t0;
        e.end = t.tp;
        e.entries = step_entries(w_, d_, s);
        event(e);
        e.entries = 0;
        if (t.tc > t.tp) {
          e.phase = Phase::Merge;
          e.start = t.tp;
          e.end = t.tc;
          event(e);
        }
      }
      if (xfer)
        comm_events(send, recv, bytes, layer, pass, step, kv,
                    static_cast<std::int32_t>(kv_source(w_, d_, s + 1)));
      if (waited) {
        e.phase = Phase::Wait;
        e.start = t.tc;
        e.end = t.te;
        // The neighbour whose end of a transfer came last: a late sender, or
        // a late receiver holding up the send.
        e.peer = recv->get_finish_time() >= send->get_finish_time() ? prev_ : next_;
        event(e);
      }
    }
    if (r_.o.record_rows) {
      StepRow row;
      row.layer = layer;
      row.step = step;
      row.kv_block = kv;
      row.bwd = pass == 1;
      row.entries = step_entries(w_, d_, s);
      row.comm_bytes = bytes;
      row.start = t.t0;
      row.compute_s = t.tc - t.t0;
      row.comm_end = xfer ? std::max(recv->get_finish_time(), send->get_finish_time()) : t.t0;
      row.end = t.te;
      row.wait_s = t.te - t.tc;
      row.stalled = stall;
      r_.res.rows[i].push_back(row);
    }
    r_.progress.tick();
  }

  // A collective of `rounds` rounds; in each the device sends `bytes` to one
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
      recv->wait();
      send->wait();
      r_.res.activities += 1;
      Event e;
      e.phase = ph;
      e.start = t0;
      e.end = now();
      e.bytes = bytes;
      e.peer = peer;
      e.kv_block = static_cast<std::int32_t>(block);
      e.round = static_cast<std::int32_t>(r + 1);
      e.layer = layer;
      e.bwd = pass == 1;
      event(e);
      r_.progress.tick();
    }
    r_.collective[static_cast<std::size_t>(d_)] += now() - start;
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

  void dense(int layer, int pi, int pass) {
    if (r_.dense_s[pass] <= 0) return;
    const double t0 = now();
    const double dur =
        r_.dense_s[pass] * r_.slow[static_cast<std::size_t>(d_)] *
        jitter_factor(r_.o.faults.jitter_sigma, r_.o.faults.seed, d_, layer, pass, -1);
    sg4::this_actor::execute(dur * kHostSpeed);
    const double t1 = now();
    r_.res.activities += 1;
    const auto i = static_cast<std::size_t>(d_);
    r_.res.device_busy_s[i] += t1 - t0;
    r_.other[i] += t1 - t0;
    auto& m = r_.dense_max[static_cast<std::size_t>(layer) * r_.passes.size() +
                           static_cast<std::size_t>(pi)];
    m = std::max(m, t1 - t0);
    Event e;
    e.phase = Phase::Dense;
    e.start = t0;
    e.end = t1;
    e.layer = layer;
    e.bwd = pass == 1;
    event(e);
  }
};

void device_main(Run* run, std::int64_t d) {
  try {
    Device(*run, d).run();
  } catch (const Interrupted&) {
    run->res.interrupted = true;
    sg4::Actor::kill_all();
  } catch (const std::exception& e) {
    // An exception escaping an actor aborts the process; report it instead.
    if (run->error.empty()) run->error = fmt::format("device {}: {}", d, e.what());
    sg4::Actor::kill_all();
  }
}

std::uint64_t progress_units(const Workload& w, std::int64_t simulated) {
  std::uint64_t per = static_cast<std::uint64_t>(num_steps(w));
  if (w.layout == Layout::Ulysses || w.layout == Layout::Hybrid) per += 2 * (w.ulysses() - 1);
  if (w.layout == Layout::Allgather) per += 2 * (w.devices - 1);
  const std::uint64_t passes = w.pass == Pass::FwdBwd ? 2 : 1;
  return per * passes * static_cast<std::uint64_t>(w.layers) *
         static_cast<std::uint64_t>(simulated);
}

void finalize(Run& run) {
  auto& res = run.res;
  const auto np = run.passes.size();
  for (std::size_t k = 0; k < run.slot_compute.size(); ++k) {
    res.compute_only_s += run.slot_compute[k];
    const auto pi = (k / static_cast<std::size_t>(run.steps)) % np;
    const auto step = static_cast<std::int64_t>(k % static_cast<std::size_t>(run.steps));
    if (k / static_cast<std::size_t>(run.steps) == 0)
      res.compute_s_per_step = std::max(res.compute_s_per_step, run.slot_compute[k]);
    if (run.slot_stalled[k]) res.stalled_steps[run.passes[pi]].push_back(step);
  }
  for (double m : run.dense_max) res.compute_only_s += m;
  for (auto& v : res.stalled_steps) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  if (run.n != run.w.devices) {
    // One period stood for the whole ring: every period stalls alike.
    const auto n = static_cast<std::uint64_t>(run.n),
               all = static_cast<std::uint64_t>(run.w.devices);
    res.stalled_device_steps = res.stalled_device_steps / n * all;
    res.wait_s = res.wait_s / static_cast<double>(n) * static_cast<double>(all);
  }
  res.time_s = *std::max_element(res.device_finish_s.begin(), res.device_finish_s.end());
  res.collective_s = *std::max_element(run.collective.begin(), run.collective.end());
  res.other_s = *std::max_element(run.other.begin(), run.other.end());
  std::int64_t best = 0;
  for (std::int64_t d = 1; d < run.n; ++d) {
    const auto i = static_cast<std::size_t>(d), b = static_cast<std::size_t>(best);
    const double bd = res.device_busy_s[i], bb = res.device_busy_s[b];
    // Busy times equal to rounding noise count as a tie.
    if (bd > bb * (1 + 1e-12) ||
        (bd >= bb * (1 - 1e-12) && res.device_finish_s[i] > res.device_finish_s[b] * (1 + 1e-12)))
      best = d;
  }
  res.critical_device = best;
}

}  // namespace

bool simulation_available() {
  return !g_engine_used;
}

SimResult simulate(const SimOptions& o) {
  if (!o.compute) throw std::invalid_argument("simulate: no compute model");
  if (g_engine_used) throw std::logic_error("simulate: SimGrid allows one simulation per process");
  g_engine_used = true;

  // A symmetric run simulates one period of the ring (sim/symmetry.hpp):
  // fewer devices than the workload, ring layouts only, nothing per-device.
  if (o.topology.devices != o.workload.devices) {
    const auto l = o.workload.layout;
    if ((l != Layout::Ring && l != Layout::Striped && l != Layout::Zigzag) || o.faults.any() ||
        o.record_events || o.record_rows || o.topology.devices < 2)
      throw std::invalid_argument(
          "simulate: a reduced ring needs a uniform ring layout and no faults or outputs");
  }
  Topology topo(o.topology);
  const auto divisors = link_divisors(topo, o.faults.degrades);

  int argc = 1;
  char name[] = "ringsim";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  reinstall_interrupt_handler();
  xbt_log_control_set("root.thres:critical");
  if (o.network == NetworkModel::Exact) {
    engine.set_config("network/model:CM02");
    engine.set_config("network/crosstraffic:0");
    engine.set_config("network/TCP-gamma:0");
  }
  // Actors only run the loops above: a small stack keeps 4K+ actors cheap.
  engine.set_config("contexts/stack-size:256");
#ifdef RINGSIM_SANITIZER_BUILD
  // Raw context switches confuse ASan/TSan (false reports); threads are
  // slower but clean, and sanitizer runs are small.
  engine.set_config("contexts/factory:thread");
#endif

  const auto hosts = build_platform(topo, divisors);
  Run run(o, progress_units(o.workload, o.topology.devices));
  run.res.platform = topo.describe();
  run.res.simulated_devices = o.topology.devices;
  sg4::Engine::on_deadlock_cb([&run] { run.deadlock = true; });
  for (std::int64_t d = 0; d < run.n; ++d)
    sg4::Actor::create(fmt::format("device{}", d), hosts[static_cast<std::size_t>(d)], device_main,
                       &run, d);
  engine.run();
  run.progress.finish();

  if (run.res.interrupted) return std::move(run.res);
  if (!run.error.empty()) throw std::runtime_error("simulation failed: " + run.error);
  const bool all_done =
      std::all_of(run.finished.begin(), run.finished.end(), [](char c) { return c; });
  if (run.deadlock || !all_done)
    throw std::runtime_error("simulation deadlocked: some devices never received their blocks");
  finalize(run);
  return std::move(run.res);
}

}  // namespace ringsim::sim
