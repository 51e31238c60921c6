#include "sim/infer_sim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <utility>

#include "sim/platform.hpp"
#include "sim/progress.hpp"
#include "sim/simulate.hpp"
#include "sim/transfer.hpp"

namespace ringsim::sim {

namespace {

namespace sg4 = simgrid::s4u;
using trace::Event;
using trace::Phase;

int g_token = 0;
// Clock stretch (a power of two, as in simulate.cpp): SimGrid ends an
// activity shorter than 1 ns at once, and a decode step's pointwise work or
// a small all-reduce share lasts nanoseconds.
double g_scale = 1;
double work(double seconds) {
  return seconds * kHostSpeed * g_scale;
}
double now() {
  return sg4::Engine::get_clock() / g_scale;
}

struct Interrupted {};

struct Run {
  const InferSimOptions& o;
  std::int64_t tp, cp;
  bool overlap;
  InferSimResult res;
  // [stage: prefill, decode][phase: attention, return, merge, dense, tp, head, ep][GPU]
  std::vector<double> busy[2][7];
  std::vector<double> prefill_end;
  std::vector<bool> finished;
  Progress progress;
  std::string error;
  bool deadlock = false;
  std::vector<double> slowdown;  // per GPU: its straggler factor (1: none)

  Run(const InferSimOptions& opt, std::uint64_t units)
      : o(opt),
        tp(opt.request.tp),
        cp(opt.request.cp),
        overlap(opt.hardware.overlap),
        progress(opt.progress, units, "ringsim: simulating inference") {
    const auto n = static_cast<std::size_t>(tp * cp);
    slowdown = device_slowdowns(tp * cp, opt.faults.stragglers);
    for (auto& stage : busy)
      for (auto& b : stage) b.assign(n, 0);
    prefill_end.assign(n, 0);
    finished.assign(n, false);
    if (o.record_events) res.events.resize(n);
  }
  void record(std::int64_t g, Phase ph, int layer, std::int32_t step, double t0, double t1,
              std::uint64_t bytes = 0, std::int64_t peer = -1, std::int32_t round = -1,
              std::uint64_t entries = 0) {
    if (!o.record_events || t1 <= t0) return;
    Event e;
    e.start = t0 * 1e6;
    e.dur = (t1 - t0) * 1e6;
    e.bytes = bytes;
    e.entries = entries;
    e.device = static_cast<std::int32_t>(g);
    e.step = step;
    e.peer = static_cast<std::int32_t>(peer);
    e.layer = layer;
    e.round = round;
    e.phase = ph;
    e.pass = trace::Pass::Fwd;
    res.events[static_cast<std::size_t>(g)].push_back(e);
  }
};

// The shortest activity: latencies, every compute phase, each message on
// the fastest link.
double choose_scale(const Run& r, const Topology& topo) {
  double m = std::numeric_limits<double>::infinity(), fastest = 0;
  auto take = [&m](double t) {
    if (t > 0) m = std::min(m, t);
  };
  for (const auto& link : topo.links()) {
    take(link.latency);
    fastest = std::max(fastest, link.bandwidth);
  }
  take(r.o.prefill_head_s);
  take(r.o.decode_head_s);
  for (const InferLayer* l :
       {&r.o.prefill, &r.o.decode, &r.o.prefill_chunked, &r.o.decode_chunked}) {
    if (l->step_s.empty()) continue;  // no chunked layers
    for (const auto& rank : l->step_s)
      for (double t : rank) take(t);
    take(l->merge_s);
    take(l->dense_s + l->pointwise_s + l->fixed_s);
    take(l->tp_allreduce_s / 2);
    take(l->ep_s / 2);
    if (fastest > 0) {
      const auto cp = static_cast<std::uint64_t>(std::max<std::int64_t>(r.cp, 1));
      for (const auto b : {l->ring_bytes, l->return_bytes / cp})
        take(static_cast<double>(b) / fastest);
    }
  }
  const double target = std::ldexp(1.0, -20);
  if (!(m < target)) return 1;
  return std::ldexp(1.0, std::min(60, static_cast<int>(std::ceil(std::log2(target / m)))));
}

sg4::Mailbox* box(std::int64_t from, std::int64_t to) {
  return sg4::Mailbox::by_name(fmt::format("{}>{}", from, to));
}

// One GPU: CP rank `rank`, TP index `t`; GPU index rank * tp + t.
class Gpu {
 public:
  Gpu(Run& r, std::int64_t g) : r_(r), g_(g), rank_(g / r.tp), t_(g % r.tp) {}

  void run() {
    stage(0, r_.o.prefill, r_.o.prefill_chunked, r_.o.prefill_head_s);
    r_.prefill_end[static_cast<std::size_t>(g_)] = now();
    if (r_.o.with_decode) stage(1, r_.o.decode, r_.o.decode_chunked, r_.o.decode_head_s);
    r_.finished[static_cast<std::size_t>(g_)] = true;
  }

 private:
  Run& r_;
  std::int64_t g_, rank_, t_;
  const InferLayer* l_ = nullptr;
  int stage_ = 0;

  // Every layer of the prefill (stage 0) or of one decode step (stage 1),
  // each a global or (Llama 4) a chunked one. Decode layers are numbered
  // after the prefill's in the trace.
  void stage(int st, const InferLayer& global, const InferLayer& chunked, double head_s) {
    stage_ = st;
    const auto& shape = r_.o.request.shape;
    const int layers = shape.layers;
    for (int i = 0; i < layers; ++i) {
      l_ = layer_attends_in_chunks(shape, i) ? &chunked : &global;
      const auto& l = *l_;
      const int layer = st * layers + i;
      exec(Phase::Dense, 3, layer, l.dense_s + l.pointwise_s + l.fixed_s);
      expert_exchange(layer);
      ring(layer);
      if (l.return_bytes > 0) all_to_all(layer);
      if (l.return_bytes > 0) exec(Phase::Merge, 2, layer, l.merge_s);
      for (int a = 0; a < l.tp_allreduces; ++a) allreduce(layer);
    }
    exec(Phase::Dense, 5, (st + 1) * layers - 1, head_s);
  }
  double& busy(int slot) { return r_.busy[stage_][slot][static_cast<std::size_t>(g_)]; }

  std::int64_t gpu(std::int64_t rank, std::int64_t t) const { return rank * r_.tp + t; }
  std::int64_t cp_peer(std::int64_t k) const {
    return gpu(((rank_ + k) % r_.cp + r_.cp) % r_.cp, t_);
  }
  void check() const {
    if (interrupt_requested()) throw Interrupted{};
  }

  // A compute's time on this GPU: its straggler factor, and the jitter drawn
  // for (GPU, layer, stage, step) (sim/faults.hpp: independent of run order).
  double slowed(double seconds, int layer, std::int64_t step) const {
    const auto& f = r_.o.faults;
    double x = seconds * r_.slowdown[static_cast<std::size_t>(g_)];
    if (f.jitter_sigma > 0) x *= jitter_factor(f.jitter_sigma, f.seed, g_, layer, stage_, step);
    return x;
  }

  void exec(Phase ph, int slot, int layer, double seconds, std::int32_t step = -1) {
    if (seconds <= 0) return;
    const double t0 = now();
    sg4::this_actor::execute(work(slowed(seconds, layer, step)));
    busy(slot) += now() - t0;
    r_.record(g_, ph, layer, step, t0, now());
    ++r_.res.activities;
  }

  // Send `bytes` to `to` and receive as much from `from` (one round).
  void exchange(Phase ph, int slot, int layer, std::int32_t round, std::uint64_t bytes,
                std::int64_t to, std::int64_t from) {
    check();
    const double t0 = now();
    int* got = nullptr;
    auto send = box(g_, to)->put_async(&g_token, bytes);
    auto recv = box(from, g_)->get_async<int>(&got);
    wait_transfer(recv);
    wait_transfer(send);
    busy(slot) += now() - t0;
    r_.record(g_, ph, layer, -1, t0, now(), bytes, to, round);
    r_.res.activities += 2;
    r_.progress.tick();
  }

  // The attention ring: post the step's send and receive, compute, wait.
  void ring(int layer) {
    const auto& l = *l_;
    const std::int64_t next = cp_peer(1), prev = cp_peer(-1);
    const auto steps = static_cast<std::int64_t>(l.step_s.front().size());
    for (std::int64_t s = 0; s < steps; ++s) {
      check();
      const double t0 = now();
      const bool xfer = r_.cp > 1 && s + 1 < steps && l.ring_bytes > 0;
      const double c = l.step_s[static_cast<std::size_t>(rank_)][static_cast<std::size_t>(s)];
      sg4::CommPtr send, recv;
      int* got = nullptr;
      auto post = [&] {
        send = box(g_, next)->put_async(&g_token, l.ring_bytes);
        recv = box(prev, g_)->get_async<int>(&got);
      };
      if (xfer && r_.overlap) post();
      if (c > 0) sg4::this_actor::execute(work(slowed(c, layer, s)));
      const double tc = now();
      if (xfer && !r_.overlap) post();
      if (xfer) {
        wait_transfer(recv);
        wait_transfer(send);
        r_.res.activities += 2;
        r_.record(g_, Phase::Send, layer, static_cast<std::int32_t>(s),
                  send->get_start_time() / g_scale, send->get_finish_time() / g_scale, l.ring_bytes,
                  next);
        r_.record(g_, Phase::Recv, layer, static_cast<std::int32_t>(s),
                  recv->get_start_time() / g_scale, recv->get_finish_time() / g_scale, l.ring_bytes,
                  prev);
      }
      if (r_.o.record_events)
        r_.record(g_, Phase::Partial, layer, static_cast<std::int32_t>(s), t0, tc, 0, -1, -1,
                  step_entries(s));
      r_.record(g_, Phase::Wait, layer, static_cast<std::int32_t>(s), tc, now());
      busy(0) += now() - t0;
      ++r_.res.activities;
      r_.progress.tick();
    }
  }

  // The pairs of this rank's step `s` in the current layer kind, for the
  // trace: counted once per kind and step (under packed documents, chunked
  // attention, counting walks the rank's token lists).
  std::uint64_t step_entries(std::int64_t s) {
    const auto key = std::make_pair(l_, s);
    const auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
    return entries_[key] = infer_step_entries(l_->work, rank_, s);
  }
  std::map<std::pair<const InferLayer*, std::int64_t>, std::uint64_t> entries_;

  // Pass-q: round k sends the partials for rank + k's queries and receives
  // this rank's from rank - k.
  void all_to_all(int layer) {
    const auto chunk = l_->return_bytes / static_cast<std::uint64_t>(r_.cp);
    for (std::int64_t k = 1; k < r_.cp; ++k)
      exchange(Phase::AllToAll, 1, layer, static_cast<std::int32_t>(k), chunk, cp_peer(k),
               cp_peer(-k));
  }

  // EP across CP ranks: the dispatch and combine all-to-alls (prefill) or the
  // EP group's all-reduce (decode, its two halves), timed at the closed
  // form's time as the TP all-reduce below (every GPU of the group carries
  // the same).
  void expert_exchange(int layer) {
    const auto& l = *l_;
    if (l.ep_s <= 0) return;
    const bool a2a = l.moe.alltoall_bytes > 0;
    timed_halves(a2a ? Phase::AllToAll : Phase::ReduceScatter,
                 a2a ? Phase::AllToAll : Phase::AllGather, 6, layer, l.ep_s,
                 static_cast<std::uint64_t>(l.moe.alltoall_bytes), /*numbered=*/true);
  }

  // One TP all-reduce, timed as the collectives model times it
  // (models/analytic/collectives.hpp: NCCL's ring or tree, over NVLink and,
  // for TP across nodes, every NIC of the node): its reduce-scatter half and
  // its all-gather half. A timed phase rather than flows, so that both
  // engines charge the same collective on every placement.
  void allreduce(int layer) {
    const auto& l = *l_;
    if (r_.tp <= 1 || l.tp_allreduce_s <= 0) return;
    timed_halves(Phase::ReduceScatter, Phase::AllGather, 4, layer, l.tp_allreduce_s, l.tp_bytes / 2,
                 /*numbered=*/false);
  }

  // A collective of `seconds` played as two timed halves (phases `a` then
  // `b`), each recorded with `bytes` into busy slot `slot`; `numbered`: the
  // trace numbers the halves' rounds 0 and 1 (the EP exchange's dispatch and
  // combine), else -1 (the TP all-reduce's halves are told apart by phase).
  void timed_halves(Phase a, Phase b, int slot, int layer, double seconds, std::uint64_t bytes,
                    bool numbered) {
    const Phase phases[2] = {a, b};
    for (std::int32_t i = 0; i < 2; ++i) {
      check();
      const double t0 = now();
      sg4::this_actor::sleep_for(seconds / 2 * g_scale);
      busy(slot) += now() - t0;
      r_.record(g_, phases[i], layer, -1, t0, now(), bytes, -1, numbered ? i : -1);
      ++r_.res.activities;
      r_.progress.tick();
    }
  }
};

void gpu_main(Run* run, std::int64_t g) {
  try {
    Gpu(*run, g).run();
  } catch (const Interrupted&) {
    run->res.interrupted = true;
    sg4::Actor::kill_all();
  } catch (const std::exception& e) {
    if (run->error.empty()) run->error = fmt::format("GPU {}: {}", g, e.what());
    sg4::Actor::kill_all();
  }
}

}  // namespace

namespace {

std::uint64_t progress_units(const InferLayer& l, std::int64_t tp, std::int64_t cp) {
  return static_cast<std::uint64_t>(l.step_s.front().size()) +
         static_cast<std::uint64_t>(l.return_bytes > 0 ? cp - 1 : 0) +
         static_cast<std::uint64_t>(tp > 1 ? 2 * l.tp_allreduces : 0) +
         static_cast<std::uint64_t>(l.ep_s > 0 ? 2 : 0);
}

// A pass's units over every layer: its global and its chunked layers.
std::uint64_t pass_units(const InferLayer& global, const InferLayer& chunked, const ModelShape& s,
                         std::int64_t tp, std::int64_t cp) {
  const auto c = static_cast<std::uint64_t>(chunked_attention_layers(s));
  const auto g = static_cast<std::uint64_t>(s.layers) - c;
  return g * progress_units(global, tp, cp) + (c > 0 ? c * progress_units(chunked, tp, cp) : 0);
}

// The phases of the GPU that spent longest in them (ties: lowest index).
InferSimPhases busiest(const std::vector<double> (&busy)[7]) {
  std::size_t best = 0;
  double best_total = -1;
  for (std::size_t g = 0; g < busy[0].size(); ++g) {
    double total = 0;
    for (const auto& b : busy) total += b[g];
    if (total > best_total) {
      best_total = total;
      best = g;
    }
  }
  return {busy[0][best], busy[1][best], busy[2][best], busy[3][best],
          busy[4][best], busy[5][best], busy[6][best]};
}

}  // namespace

SizeEstimate estimate_infer_size(const InferSimOptions& o) {
  const auto& r = o.request;
  const double gpus = static_cast<double>(r.tp * r.cp), layers = r.shape.layers;
  // Per layer and GPU: a ring step is an exec and two transfers, a collective
  // round two transfers, plus the dense exec and the merge.
  auto per_layer = [&](const InferLayer& l) {
    return 3.0 * static_cast<double>(l.step_s.front().size()) +
           4.0 * static_cast<double>(std::max<std::int64_t>(r.cp - 1, 0)) +
           (r.tp > 1 ? 2.0 * l.tp_allreduces : 0) + 5;
  };
  const double chunked = chunked_attention_layers(r.shape), global = layers - chunked;
  auto pass = [&](const InferLayer& g, const InferLayer& c) {
    return global * per_layer(g) + (chunked > 0 ? chunked * per_layer(c) : 0);
  };
  const double acts = gpus * (pass(o.prefill, o.prefill_chunked) +
                              (o.with_decode ? pass(o.decode, o.decode_chunked) : 0));
  SizeEstimate e;
  auto clamp = [](double x) {
    return x >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(x);
  };
  e.activities = clamp(acts);
  double mem = 64.0 * 1024 * 1024 + gpus * 64 * 1024;  // engine, actors, mailboxes
  if (o.record_events) {
    mem += acts * sizeof(Event);
    e.trace_bytes = clamp(acts * 160);  // about one line per event
  }
  e.memory_bytes = clamp(mem);
  return e;
}

InferSimResult simulate_infer(const InferSimOptions& o) {
  const auto& r = o.request;
  Topology topo(topology_options(o.hardware, r.tp * r.cp));
  const auto units =
      pass_units(o.prefill, o.prefill_chunked, r.shape, r.tp, r.cp) +
      (o.with_decode ? pass_units(o.decode, o.decode_chunked, r.shape, r.tp, r.cp) : 0);
  Run run(o, units * static_cast<std::uint64_t>(r.tp * r.cp));
  auto engine = start_engine(o.network);
  g_scale = choose_scale(run, topo);
  const auto hosts = build_platform(topo, link_divisors(topo, o.faults.degrades), g_scale);
  sg4::Engine::on_deadlock_cb([&run] { run.deadlock = true; });
  for (std::int64_t g = 0; g < r.tp * r.cp; ++g)
    sg4::Actor::create(fmt::format("gpu{}", g), hosts[static_cast<std::size_t>(g)], gpu_main, &run,
                       g);
  engine->run();
  run.progress.finish();
  auto& res = run.res;
  res.platform = topo.describe();
  if (res.interrupted) return std::move(res);
  if (!run.error.empty()) throw std::runtime_error("simulation failed: " + run.error);
  if (run.deadlock ||
      !std::all_of(run.finished.begin(), run.finished.end(), [](bool b) { return b; }))
    throw std::runtime_error("simulation deadlocked: some GPUs never received their messages");
  res.ttft_s = *std::max_element(run.prefill_end.begin(), run.prefill_end.end());
  if (o.with_decode) res.decode_s = engine->get_clock() / g_scale - res.ttft_s;
  res.prefill = busiest(run.busy[0]);
  res.decode = busiest(run.busy[1]);
  return std::move(res);
}

}  // namespace ringsim::sim
