#include "sim/recorder.hpp"

#include <algorithm>

#include "models/core/work.hpp"

namespace ringsim::sim {

namespace {

// A wait counts as a stall when it is longer than rounding noise: SimGrid's
// event dates carry ~1e-16 relative error, so 1e-9 of the step is far above it.
bool stalled(double wait, double span) {
  return wait > 1e-9 * span + 1e-15;
}

// Microseconds, the trace format's unit.
double us(double s) {
  return s * 1e6;
}

trace::Pass pass_of(int pass) {
  return pass == 1 ? trace::Pass::Bwd : trace::Pass::Fwd;
}

// A phase of one layer's pass on a device, from t0 to t1 (seconds).
Event span(Phase ph, int layer, int pass, double t0, double t1) {
  Event e;
  e.phase = ph;
  e.start = us(t0);
  e.dur = us(t1 - t0);
  e.layer = layer;
  e.pass = pass_of(pass);
  return e;
}

}  // namespace

Recorder::Recorder(const SimOptions& o, std::int64_t n, std::int64_t steps, std::vector<int> passes)
    : o_(o), w_(o.workload), n_(n), steps_(steps), passes_(std::move(passes)) {
  const auto slots =
      static_cast<std::size_t>(w_.layers) * passes_.size() * static_cast<std::size_t>(steps_);
  slot_compute_.assign(slots, 0.0);
  slot_stalled_.assign(slots, 0);
  dense_max_.assign(static_cast<std::size_t>(w_.layers) * passes_.size(), 0.0);
  reduce_max_.assign(static_cast<std::size_t>(w_.layers) * passes_.size(), 0.0);
  collective_.assign(static_cast<std::size_t>(n_), 0.0);
  other_.assign(static_cast<std::size_t>(n_), 0.0);
  tp_.assign(static_cast<std::size_t>(n_), 0.0);
  ep_.assign(static_cast<std::size_t>(n_), 0.0);
  free_.assign(static_cast<std::size_t>(n_), 0.0);
  interference_.assign(static_cast<std::size_t>(n_), 0.0);
  hop_.assign(static_cast<std::size_t>(n_), 0.0);
  waits_.resize(static_cast<std::size_t>(n_));
  finished_.assign(static_cast<std::size_t>(n_), 0);
  res_.device_busy_s.assign(static_cast<std::size_t>(n_), 0.0);
  res_.device_finish_s.assign(static_cast<std::size_t>(n_), 0.0);
  if (o_.record_events) res_.events.resize(static_cast<std::size_t>(n_));
  if (o_.record_rows) res_.rows.resize(static_cast<std::size_t>(n_));
}

std::size_t Recorder::slot(int layer, int pi, std::int64_t step) const {
  return (static_cast<std::size_t>(layer) * passes_.size() + static_cast<std::size_t>(pi)) *
             static_cast<std::size_t>(steps_) +
         static_cast<std::size_t>(step);
}

void Recorder::event(std::int64_t d, Event e) {
  e.device = static_cast<std::int32_t>(d);
  res_.events[static_cast<std::size_t>(d)].push_back(e);
}

void Recorder::comm_events(std::int64_t d, int layer, int pass, std::int32_t step,
                           std::uint64_t bytes, const CommTimes& c, std::int64_t prev,
                           std::int64_t next, std::int32_t kv_sent, std::int32_t kv_received) {
  if (!o_.record_events) return;
  Event s;
  s.phase = Phase::Send;
  s.start = us(c.send_start);
  s.dur = us(c.send_end - c.send_start);
  s.bytes = bytes;
  s.peer = static_cast<std::int32_t>(next);
  s.step = step;
  s.kv_block = kv_sent;
  s.layer = layer;
  s.pass = pass_of(pass);
  event(d, s);
  Event v = s;
  v.phase = Phase::Recv;
  v.start = us(c.recv_start);
  v.dur = us(c.recv_end - c.recv_start);
  v.peer = static_cast<std::int32_t>(prev);
  v.kv_block = kv_received;
  event(d, v);
}

void Recorder::step(std::int64_t d, int layer, int pi, std::int64_t s, const StepTimes& t,
                    bool computed, const StepCost& cost, std::uint64_t bytes, const CommTimes& comm,
                    std::int64_t prev, std::int64_t next, std::int32_t kv, std::int32_t kv_next) {
  const int pass = passes_[static_cast<std::size_t>(pi)];
  const bool xfer = bytes > 0;
  const auto i = static_cast<std::size_t>(d);
  const auto step = static_cast<std::int32_t>(s);
  res_.activities += (computed ? 1 : 0) + (xfer ? 1 : 0);
  res_.device_busy_s[i] += t.tc - t.t0;
  const auto k = slot(layer, pi, s);
  // Compute-only time is the compute free links would have left: without
  // interference (which counts as exposed communication).
  slot_compute_[k] = std::max(slot_compute_[k], t.free_s);
  free_[i] += t.free_s;
  const bool waited = xfer && stalled(t.te - t.tc, t.te - t.t0);
  const bool stall = computed && waited;
  // The verdict's sources: compute slowed while the send ran, and any wait
  // after the compute (a device with nothing to compute waits too: its
  // time goes to the transfer all the same).
  if (computed) interference_[i] += std::max(0.0, (t.tc - t.t0) - t.free_s);
  if (waited) waits_[i].push_back({pass, step, t.te - t.tc});
  if (stall) {
    slot_stalled_[k] = 1;
    ++res_.stalled_device_steps;
    res_.wait_s += t.te - t.tc;
  }
  if (o_.record_events) {
    Event e;
    e.step = step;
    e.kv_block = kv;
    e.layer = layer;
    e.pass = pass_of(pass);
    if (computed) {
      // Phases the step has (not rounding slivers between SimGrid's clock
      // and the arithmetic phase ends).
      if (cost.launch_s > 0) {
        e.phase = Phase::Launch;
        e.start = us(t.t0);
        e.dur = us(t.tl - t.t0);
        event(d, e);
      }
      if (cost.attention_s > 0) {
        e.phase = Phase::Partial;
        e.start = us(t.tl);
        e.dur = us(t.tp - t.tl);
        e.entries = cost.useful_pairs;
        e.executed = cost.executed_pairs;
        event(d, e);
        e.entries = 0;
        e.executed = 0;
      }
      if (cost.merge_s > 0) {
        e.phase = pass == 1 ? Phase::Accumulate : Phase::Merge;
        e.start = us(t.tp);
        e.dur = us(std::max(0.0, t.tc - t.tp));
        event(d, e);
      }
    }
    if (xfer) comm_events(d, layer, pass, step, bytes, comm, prev, next, kv, kv_next);
    if (waited) {
      // A step with nothing to compute (the causal mask skips the block) is
      // idle, not a stall: its own phase and colour, so the timeline's red
      // is only for compute held up by a transfer.
      e.phase = computed ? Phase::Wait : Phase::Idle;
      e.start = us(t.tc);
      e.dur = us(t.te - t.tc);
      // The neighbour whose end of a transfer came last: a late sender, or
      // a late receiver holding up the send.
      e.peer = static_cast<std::int32_t>(comm.recv_end >= comm.send_end ? prev : next);
      event(d, e);
    }
  }
  if (o_.record_rows) {
    StepRow row;
    row.layer = layer;
    row.step = step;
    row.kv_block = kv;
    row.bwd = pass == 1;
    row.entries = step_entries(w_, d, s);
    row.comm_bytes = bytes;
    row.start = t.t0;
    row.compute_s = t.tc - t.t0;
    row.comm_end = xfer ? std::max(comm.recv_end, comm.send_end) : t.t0;
    row.end = t.te;
    row.wait_s = t.te - t.tc;
    row.stalled = stall;
    res_.rows[i].push_back(row);
  }
}

void Recorder::final_hop(std::int64_t d, int layer, int pass, std::uint64_t bytes,
                         const CommTimes& comm, std::int64_t prev, std::int64_t next,
                         std::int32_t kv_sent, std::int32_t kv_received) {
  res_.activities += 1;
  comm_events(d, layer, pass, -1, bytes, comm, prev, next, kv_sent, kv_received);
}

void Recorder::round(std::int64_t d, Phase ph, int layer, int pass, std::int32_t r, double t0,
                     double t1, std::uint64_t bytes, std::int64_t peer, std::int64_t block) {
  res_.activities += 1;
  if (!o_.record_events) return;
  Event e = span(ph, layer, pass, t0, t1);
  e.bytes = bytes;
  e.peer = static_cast<std::int32_t>(peer);
  e.kv_block = static_cast<std::int32_t>(block);
  e.round = r;
  event(d, e);
}

void Recorder::reduce(std::int64_t d, int layer, int pi, int pass, double t0, double t1) {
  res_.activities += 1;
  res_.device_busy_s[static_cast<std::size_t>(d)] += t1 - t0;
  free_[static_cast<std::size_t>(d)] += t1 - t0;
  auto& m =
      reduce_max_[static_cast<std::size_t>(layer) * passes_.size() + static_cast<std::size_t>(pi)];
  m = std::max(m, t1 - t0);
  if (!o_.record_events) return;
  event(d, span(Phase::Reduce, layer, pass, t0, t1));
}

void Recorder::collective_time(std::int64_t d, double seconds) {
  collective_[static_cast<std::size_t>(d)] += seconds;
}

void Recorder::hop_time(std::int64_t d, double seconds) {
  hop_[static_cast<std::size_t>(d)] += seconds;
}

void Recorder::tp_time(std::int64_t d, double seconds) {
  tp_[static_cast<std::size_t>(d)] += seconds;
}

void Recorder::ep_alltoalls(std::int64_t d, int layer, int pass, double t0, double t1,
                            std::uint64_t bytes) {
  res_.activities += 1;
  ep_[static_cast<std::size_t>(d)] += t1 - t0;
  if (!o_.record_events) return;
  Event e = span(Phase::AllToAll, layer, pass, t0, t1);
  e.bytes = bytes;
  event(d, e);
}

void Recorder::dense(std::int64_t d, int layer, int pi, int pass, double t0, double t1) {
  res_.activities += 1;
  const auto i = static_cast<std::size_t>(d);
  res_.device_busy_s[i] += t1 - t0;
  other_[i] += t1 - t0;
  free_[i] += t1 - t0;
  auto& m =
      dense_max_[static_cast<std::size_t>(layer) * passes_.size() + static_cast<std::size_t>(pi)];
  m = std::max(m, t1 - t0);
  if (!o_.record_events) return;
  event(d, span(Phase::Dense, layer, pass, t0, t1));
}

void Recorder::finished(std::int64_t d, double t) {
  // Job mode: a device's FSDP actor may finish after it, or before.
  auto& f = res_.device_finish_s[static_cast<std::size_t>(d)];
  f = std::max(f, t);
  finished_[static_cast<std::size_t>(d)] = 1;
}

void Recorder::busy_until(std::int64_t d, double t) {
  auto& f = res_.device_finish_s[static_cast<std::size_t>(d)];
  f = std::max(f, t);
}

bool Recorder::all_finished() const {
  return std::all_of(finished_.begin(), finished_.end(), [](char c) { return c; });
}

SimResult Recorder::take() {
  auto& res = res_;
  const auto np = passes_.size();
  const auto steps = static_cast<std::size_t>(steps_);
  // Compute-only: the same schedule with free links, where every device
  // runs its own compute back to back; the slowest device's sum.
  res.compute_only_s = *std::max_element(free_.begin(), free_.end());
  res.mean_free_s = 0;
  for (const double x : free_) res.mean_free_s += x / static_cast<double>(free_.size());
  res.slowed_devices = !o_.faults.stragglers.empty() || o_.faults.jitter_sigma > 0;
  bool any_light = false;
  for (std::size_t k = 0; k < slot_compute_.size(); ++k) {
    const auto pi = (k / steps) % np;
    const auto step = static_cast<std::int64_t>(k % steps);
    if (k / steps == 0) res.compute_s_per_step = std::max(res.compute_s_per_step, slot_compute_[k]);
    if (slot_stalled_[k]) res.stalled_steps[passes_[pi]].push_back(step);
    if (k >= np * steps) continue;  // layer 0 stands for every layer
    const double c = slot_compute_[k];
    if (c > res.heaviest_step_s) {
      res.heaviest_step_s = c;
      res.heaviest_pass = passes_[pi];
      res.heaviest_step = step;
    }
    if (c > 0 && (!any_light || c < res.lightest_step_s)) {
      any_light = true;
      res.lightest_step_s = c;
      res.lightest_pass = passes_[pi];
      res.lightest_step = step;
    }
  }
  for (auto& v : res.stalled_steps) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  if (n_ < w_.devices) {
    // One period stood for the whole ring: every period stalls alike.
    const auto n = static_cast<std::uint64_t>(n_), all = static_cast<std::uint64_t>(w_.devices);
    res.stalled_device_steps = res.stalled_device_steps / n * all;
    res.wait_s = res.wait_s / static_cast<double>(n) * static_cast<double>(all);
  }
  const auto last = std::max_element(res.device_finish_s.begin(), res.device_finish_s.end());
  res.time_s = *last;
  {
    const auto i = static_cast<std::size_t>(last - res.device_finish_s.begin());
    auto& ts = res.setter;
    ts.device = static_cast<std::int64_t>(i);
    ts.finish_s = res.device_finish_s[i];
    ts.free_s = free_[i];
    ts.interference_s = interference_[i];
    ts.final_hop_s = hop_[i];
    ts.collectives_s = collective_[i];
    ts.tp_s = tp_[i];
    ts.ep_s = ep_[i];
    for (const auto& w : waits_[i]) ts.step_wait_s[static_cast<std::size_t>(w.pass)][w.step] += w.s;
  }
  res.collective_s = *std::max_element(collective_.begin(), collective_.end());
  res.other_s = *std::max_element(other_.begin(), other_.end());
  res.tp_comm_s = *std::max_element(tp_.begin(), tp_.end());
  res.ep_comm_s = *std::max_element(ep_.begin(), ep_.end());
  std::int64_t best = 0;
  for (std::int64_t d = 1; d < n_; ++d) {
    const auto i = static_cast<std::size_t>(d), b = static_cast<std::size_t>(best);
    const double bd = res.device_busy_s[i], bb = res.device_busy_s[b];
    // Busy times equal to rounding noise count as a tie.
    if (bd > bb * (1 + 1e-12) ||
        (bd >= bb * (1 - 1e-12) && res.device_finish_s[i] > res.device_finish_s[b] * (1 + 1e-12)))
      best = d;
  }
  res.critical_device = best;
  return std::move(res);
}

}  // namespace ringsim::sim
