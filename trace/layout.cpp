#include "trace/layout.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>

namespace ringsim::trace {

Activity activity_of(Phase p) {
  switch (p) {
    case Phase::Send:
      return Activity::Send;
    case Phase::Recv:
      return Activity::Recv;
    case Phase::Wait:
      return Activity::Wait;
    default:
      break;
  }
  if (is_collective(p)) return Activity::Collective;
  if (is_compute(p)) return Activity::Compute;
  return Activity::Other;  // idle, other comm, other
}

const char* activity_name(Activity a) {
  static const char* const names[kActivityCount] = {"compute", "send",       "recv",
                                                    "wait",    "collective", "other"};
  return names[static_cast<int>(a)];
}

Tick to_ticks(double us, int decimals) {
  const double scaled = us * std::pow(10.0, decimals);
  // 9e18 ticks: int64's range; at 6 decimals that is 104 days of trace.
  if (!std::isfinite(scaled) || std::fabs(scaled) > 9e18)
    throw std::invalid_argument("trace writer: a time does not fit the printed precision");
  return static_cast<Tick>(std::llround(scaled));
}

const char* display_time_unit(double span_us) {
  return span_us >= 1000.0 ? "ms" : "ns";
}

namespace {

int name_cmp(const Event& a, const Event& b) {
  return std::strcmp(phase_name(a.phase), phase_name(b.phase));
}

LanePlan plan_lane(const std::vector<Event>& ev, int decimals) {
  LanePlan lp;
  const std::size_t n = ev.size();
  lp.start.resize(n);
  lp.end.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    // The end is rounded on its own (not start + rounded dur), so events that
    // meet in the model still meet in the file.
    lp.start[i] = to_ticks(ev[i].start, decimals);
    lp.end[i] = std::max(lp.start[i], to_ticks(ev[i].start + ev[i].dur, decimals));
  }
  // Placement order: start, then zero-length events (so at a shared start they
  // fit before the longer event instead of inside it), then longer first, name.
  std::vector<std::size_t> place(n);
  for (std::size_t i = 0; i < n; ++i) place[i] = i;
  std::stable_sort(place.begin(), place.end(), [&](std::size_t a, std::size_t b) {
    if (lp.start[a] != lp.start[b]) return lp.start[a] < lp.start[b];
    const bool za = lp.end[a] == lp.start[a], zb = lp.end[b] == lp.start[b];
    if (za != zb) return za;
    if (lp.end[a] != lp.end[b]) return lp.end[a] > lp.end[b];
    return name_cmp(ev[a], ev[b]) < 0;
  });
  // Greedy interval partitioning per activity: an event goes on the first of
  // the activity's tracks that is free by its start (fewest tracks possible).
  // Events that meet in the model can straddle a rounding boundary and overlap
  // by one printed unit (times are sums of doubles): then the earlier one's end
  // is trimmed to the later one's start, a change within the rounding itself.
  std::vector<std::vector<std::size_t>> last_on(kActivityCount);  // per activity, per nth
  std::vector<std::vector<int>> track_idx(kActivityCount);        // per activity, per nth
  lp.track_of.assign(n, -1);
  for (const std::size_t i : place) {
    const int a = static_cast<int>(activity_of(ev[i].phase));
    auto& last = last_on[static_cast<std::size_t>(a)];
    std::size_t k = 0;
    while (k < last.size() && lp.end[last[k]] > lp.start[i] + 1) ++k;
    if (k == last.size()) {
      last.push_back(i);
      track_idx[static_cast<std::size_t>(a)].push_back(-1);
    } else if (lp.end[last[k]] > lp.start[i]) {
      // One unit over, and the earlier event starts before this one (placement
      // is by start), so trimming leaves it a length >= 0.
      lp.end[last[k]] = std::max(lp.start[last[k]], lp.start[i]);
    }
    last[k] = i;
    int& t = track_idx[static_cast<std::size_t>(a)][k];
    if (t < 0) {
      t = static_cast<int>(lp.tracks.size());
      lp.tracks.push_back({static_cast<Activity>(a), static_cast<int>(k), 0});
    }
    lp.track_of[i] = t;
  }
  // File order (after any trim): start, then longer first (how viewers nest
  // ties), then name.
  lp.order.resize(n);
  for (std::size_t i = 0; i < n; ++i) lp.order[i] = i;
  std::stable_sort(lp.order.begin(), lp.order.end(), [&](std::size_t a, std::size_t b) {
    if (lp.start[a] != lp.start[b]) return lp.start[a] < lp.start[b];
    if (lp.end[a] != lp.end[b]) return lp.end[a] > lp.end[b];
    return name_cmp(ev[a], ev[b]) < 0;
  });
  // Slots: each activity's own track at its index; overflow tracks after the
  // six, by activity then rank, so a device's tracks sort together.
  std::vector<int> idx(lp.tracks.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int>(i);
  std::sort(idx.begin(), idx.end(), [&](int x, int y) {
    const auto& a = lp.tracks[static_cast<std::size_t>(x)];
    const auto& b = lp.tracks[static_cast<std::size_t>(y)];
    return std::tuple(a.nth > 0, a.activity, a.nth) < std::tuple(b.nth > 0, b.activity, b.nth);
  });
  std::vector<int> remap(lp.tracks.size());
  std::vector<Track> sorted;
  int overflow = 0;
  for (const int x : idx) {
    Track t = lp.tracks[static_cast<std::size_t>(x)];
    t.slot = t.nth == 0 ? static_cast<int>(t.activity) : kActivityCount + overflow++;
    remap[static_cast<std::size_t>(x)] = static_cast<int>(sorted.size());
    sorted.push_back(t);
  }
  for (int& t : lp.track_of) t = remap[static_cast<std::size_t>(t)];
  lp.tracks = std::move(sorted);
  return lp;
}

}  // namespace

Plan plan_tracks(const std::vector<std::int32_t>& lane_devices,
                 const std::vector<std::vector<Event>>& events, int decimals) {
  if (lane_devices.size() != events.size())
    throw std::invalid_argument("plan_tracks: one device per lane");
  Plan plan;
  bool any = false;
  int max_slot = 0;
  for (const auto& ev : events) {
    plan.lanes.push_back(plan_lane(ev, decimals));
    const auto& lp = plan.lanes.back();
    for (const auto& t : lp.tracks) max_slot = std::max(max_slot, t.slot);
    for (std::size_t i = 0; i < ev.size(); ++i) {
      plan.first = any ? std::min(plan.first, lp.start[i]) : lp.start[i];
      plan.last = any ? std::max(plan.last, lp.end[i]) : lp.end[i];
      any = true;
    }
  }
  // A power of ten keeps the tid readable: device 3's send track is 31.
  while (max_slot >= plan.per_device) plan.per_device *= 10;
  plan.flows = match_flows(lane_devices, events, plan);
  return plan;
}

std::vector<Flow> match_flows(const std::vector<std::int32_t>& lane_devices,
                              const std::vector<std::vector<Event>>& events, const Plan& plan) {
  using Link = std::tuple<std::int32_t, std::int32_t, int, std::int32_t>;  // from, to, pass, layer
  using Key = std::tuple<Link, std::int32_t, std::int32_t>;                // + step, kv_block
  using Ref = std::pair<std::size_t, std::size_t>;                         // lane, event
  auto link_of = [&](std::int32_t from, std::int32_t to, const Event& e) {
    return Link{from, to, static_cast<int>(e.pass), e.layer};
  };
  // Receives by key, in start order (the lanes' file order is start order).
  std::map<Key, std::vector<Ref>> recvs;
  for (std::size_t l = 0; l < events.size(); ++l)
    for (const std::size_t i : plan.lanes[l].order) {
      const Event& e = events[l][i];
      if (e.phase != Phase::Recv || e.peer < 0) continue;
      recvs[{link_of(e.peer, lane_devices[l], e), e.step, e.kv_block}].push_back({l, i});
    }
  std::map<Key, std::size_t> used;  // receives taken per key
  std::vector<Flow> flows;
  std::map<Link, std::vector<Ref>> left_sends;
  for (std::size_t l = 0; l < events.size(); ++l)
    for (const std::size_t i : plan.lanes[l].order) {
      const Event& e = events[l][i];
      if (e.phase != Phase::Send || e.peer < 0) continue;
      const Key k{link_of(lane_devices[l], e.peer, e), e.step, e.kv_block};
      const auto it = recvs.find(k);
      std::size_t& u = used[k];
      if (it != recvs.end() && u < it->second.size()) {
        const Ref r = it->second[u++];
        flows.push_back({l, i, r.first, r.second});
      } else {
        left_sends[std::get<0>(k)].push_back({l, i});
      }
    }
  // Leftovers pair per link in start order.
  std::map<Link, std::vector<Ref>> left_recvs;
  for (const auto& [k, refs] : recvs)
    for (std::size_t u = used.count(k) ? used.at(k) : 0; u < refs.size(); ++u)
      left_recvs[std::get<0>(k)].push_back(refs[u]);
  auto start_of = [&](const Ref& r) { return plan.lanes[r.first].start[r.second]; };
  for (auto& [link, sends] : left_sends) {
    auto it = left_recvs.find(link);
    if (it == left_recvs.end()) continue;
    auto& rs = it->second;
    std::stable_sort(rs.begin(), rs.end(),
                     [&](const Ref& a, const Ref& b) { return start_of(a) < start_of(b); });
    for (std::size_t k = 0; k < sends.size() && k < rs.size(); ++k)
      flows.push_back({sends[k].first, sends[k].second, rs[k].first, rs[k].second});
  }
  // In the order of the sends in the file.
  std::vector<std::vector<std::size_t>> pos(events.size());
  for (std::size_t l = 0; l < events.size(); ++l) {
    const auto& o = plan.lanes[l].order;
    pos[l].resize(o.size());
    for (std::size_t k = 0; k < o.size(); ++k) pos[l][o[k]] = k;
  }
  std::stable_sort(flows.begin(), flows.end(), [&](const Flow& a, const Flow& b) {
    return std::pair(a.send_lane, pos[a.send_lane][a.send_event]) <
           std::pair(b.send_lane, pos[b.send_lane][b.send_event]);
  });
  return flows;
}

std::vector<LinkCounter> link_counters(const std::vector<std::int32_t>& lane_devices,
                                       const std::vector<std::vector<Event>>& events,
                                       const Plan& plan) {
  struct Acc {
    std::size_t lane = 0;
    std::vector<std::pair<Tick, std::int64_t>> deltas;
  };
  std::map<std::pair<std::int32_t, std::int32_t>, Acc> links;
  for (std::size_t l = 0; l < events.size(); ++l)
    for (std::size_t i = 0; i < events[l].size(); ++i) {
      const Event& e = events[l][i];
      if (e.phase != Phase::Send || e.peer < 0 || e.bytes == 0) continue;
      auto [it, fresh] = links.try_emplace({lane_devices[l], e.peer});
      if (fresh) it->second.lane = l;
      const auto b = static_cast<std::int64_t>(e.bytes);
      it->second.deltas.push_back({plan.lanes[l].start[i], b});
      it->second.deltas.push_back({plan.lanes[l].end[i], -b});
    }
  std::vector<LinkCounter> out;
  for (auto& [link, acc] : links) {
    std::stable_sort(acc.deltas.begin(), acc.deltas.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    LinkCounter c;
    c.from = link.first;
    c.to = link.second;
    c.lane = acc.lane;
    std::int64_t v = 0;
    for (std::size_t k = 0; k < acc.deltas.size();) {
      const Tick t = acc.deltas[k].first;
      for (; k < acc.deltas.size() && acc.deltas[k].first == t; ++k) v += acc.deltas[k].second;
      if (c.points.empty() || c.points.back().second != static_cast<std::uint64_t>(v))
        c.points.push_back({t, static_cast<std::uint64_t>(v)});
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace ringsim::trace
