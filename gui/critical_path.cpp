#include "gui/critical_path.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>

namespace ringsim::gui {

namespace {

bool blocking(Phase p) {
  return p != Phase::Send && p != Phase::Recv;
}

// Times are read from text with fixed decimals: "ends when" means within a
// hair of the trace's length, never an exact float compare.
double hair(const Trace& t) {
  return std::max(1e-6, t.end_us * 1e-9);
}

// Per lane, the indices of its events of one kind, sorted by end.
struct ByEnd {
  std::vector<std::vector<std::uint32_t>> lanes;
  ByEnd(const Trace& t, bool (*keep)(const Event&)) : lanes(t.lanes.size()) {
    for (std::uint32_t i = 0; i < t.events.size(); ++i) {
      const Event& e = t.events[i];
      if (!keep(e)) continue;
      const int l = t.lane_of_device(e.device);
      if (l >= 0) lanes[static_cast<std::size_t>(l)].push_back(i);
    }
    for (auto& v : lanes)
      std::stable_sort(v.begin(), v.end(), [&](std::uint32_t a, std::uint32_t b) {
        return t.events[a].end() < t.events[b].end();
      });
  }
};

}  // namespace

int critical_device(const Trace& trace, double tolerance_us) {
  if (tolerance_us < 0) tolerance_us = std::max(hair(trace), trace.end_us * 1e-6);
  const std::size_t n = trace.lanes.size();
  std::vector<double> end(n, -1), wait(n, 0);
  for (const Event& e : trace.events) {
    const int l = trace.lane_of_device(e.device);
    if (l < 0) continue;
    end[static_cast<std::size_t>(l)] = std::max(end[static_cast<std::size_t>(l)], e.end());
    if (e.phase == Phase::Wait) wait[static_cast<std::size_t>(l)] += e.dur;
  }
  double last = -1;
  for (const double v : end) last = std::max(last, v);
  int best = -1;
  for (std::size_t l = 0; l < n; ++l) {
    if (end[l] < 0 || end[l] < last - tolerance_us) continue;
    if (best < 0 || wait[l] < wait[static_cast<std::size_t>(best)]) best = static_cast<int>(l);
  }
  return best < 0 ? -1 : trace.lanes[static_cast<std::size_t>(best)].device;
}

CriticalPath critical_path(const Trace& trace) {
  CriticalPath cp;
  cp.device = critical_device(trace);
  if (cp.device < 0) return cp;
  const double eps = hair(trace);
  const ByEnd block(trace, [](const Event& e) { return blocking(e.phase); });
  const ByEnd recvs(trace, [](const Event& e) { return e.phase == Phase::Recv; });
  const ByEnd sends(trace, [](const Event& e) { return e.phase == Phase::Send; });
  const auto& ev = trace.events;

  const int lane0 = trace.lane_of_device(cp.device);
  for (const Event& e : ev)
    if (e.device == cp.device && e.phase == Phase::Wait) cp.device_wait_us += e.dur;
  const auto& mine = block.lanes[static_cast<std::size_t>(lane0)];
  if (mine.empty()) return cp;
  long cur = mine.back();
  cp.end_us = ev[static_cast<std::size_t>(cur)].end();

  // The event of `list` (sorted by end) that ends last at or before t, skipping `seen`.
  const std::unordered_set<std::uint32_t>* seen_ptr = nullptr;
  auto last_ending_by = [&](const std::vector<std::uint32_t>& list, double t) -> long {
    auto it = std::upper_bound(list.begin(), list.end(), t + eps,
                               [&](double v, std::uint32_t i) { return v < ev[i].end(); });
    while (it != list.begin()) {
      --it;
      if (!seen_ptr->count(*it)) return *it;
    }
    return -1;
  };
  // The event of `list` whose end is nearest t (within eps), preferring `want(e)`.
  auto ending_at = [&](const std::vector<std::uint32_t>& list, double t, auto want) -> long {
    long best = -1;
    auto it = std::lower_bound(list.begin(), list.end(), t - eps,
                               [&](std::uint32_t i, double v) { return ev[i].end() < v; });
    for (; it != list.end() && ev[*it].end() <= t + eps; ++it)
      if (best < 0 || want(ev[*it])) best = *it;
    return best;
  };

  std::unordered_set<std::uint32_t> seen;
  seen_ptr = &seen;
  std::vector<std::uint32_t> chain;
  while (cur >= 0 && !seen.count(static_cast<std::uint32_t>(cur))) {
    seen.insert(static_cast<std::uint32_t>(cur));
    chain.push_back(static_cast<std::uint32_t>(cur));
    const Event& e = ev[static_cast<std::size_t>(cur)];
    const int lane = trace.lane_of_device(e.device);
    if (e.phase == Phase::Wait) {
      // The transfer that ended the wait: the neighbour's send to this device
      // (a receive), else this device's own send to it (a rendezvous send
      // completes when the far end takes it). The wait's peer names the
      // neighbour; traces without it name it through the receive.
      int from = e.peer;
      if (from < 0) {
        const long r = ending_at(recvs.lanes[static_cast<std::size_t>(lane)], e.end(),
                                 [&](const Event& x) { return x.step == e.step; });
        from = r >= 0 ? ev[static_cast<std::size_t>(r)].peer : -1;
      }
      const int from_lane = from >= 0 ? trace.lane_of_device(from) : -1;
      long s = -1;
      if (from_lane >= 0)
        s = ending_at(sends.lanes[static_cast<std::size_t>(from_lane)], e.end(),
                      [&](const Event& x) { return x.peer == e.device; });
      if (s >= 0 && ev[static_cast<std::size_t>(s)].peer != e.device) s = -1;
      if (s < 0 && from >= 0) {
        s = ending_at(sends.lanes[static_cast<std::size_t>(lane)], e.end(),
                      [&](const Event& x) { return x.peer == from; });
        if (s >= 0 && ev[static_cast<std::size_t>(s)].peer != from) s = -1;
      }
      if (s >= 0 && !seen.count(static_cast<std::uint32_t>(s))) {
        seen.insert(static_cast<std::uint32_t>(s));
        chain.push_back(static_cast<std::uint32_t>(s));
        // What the sender did before it could send: its previous blocking event.
        const Event& se = ev[static_cast<std::size_t>(s)];
        cur = last_ending_by(block.lanes[static_cast<std::size_t>(trace.lane_of_device(se.device))],
                             se.start);
        continue;
      }
    }
    if (e.start <= eps) break;  // the run's start
    cur = last_ending_by(block.lanes[static_cast<std::size_t>(lane)], e.start);
  }
  std::reverse(chain.begin(), chain.end());
  cp.events = std::move(chain);
  return cp;
}

}  // namespace ringsim::gui
