#include "gui/trace_summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "gui/intervals.hpp"

namespace ringsim::gui {

namespace {

// Both sorted and disjoint (outputs of unite).
double overlap(const Intervals& a, const Intervals& b) {
  double s = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double lo = std::max(a[i].first, b[j].first);
    const double hi = std::min(a[i].second, b[j].second);
    if (hi > lo) s += hi - lo;
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return s;
}

struct StepAcc {
  double compute_max = 0, compute_sum = 0, transfer_max = 0, transfer_sum = 0, bytes = 0;
  int devices = 0;
};

struct DeviceStep {
  double compute = 0, transfer = 0, bytes = 0;
};

}  // namespace

Summary compute_summary(const Trace& trace) {
  Summary s;
  s.devices = static_cast<int>(trace.lanes.size());
  const double total = trace.end_us;
  s.total_us.value = total;

  double compute_sum = 0, exposed_sum = 0, idle_sum = 0;
  using StepKey = std::tuple<std::int32_t, int, std::int32_t>;  // layer, pass, step
  std::map<StepKey, StepAcc> steps;
  for (const Lane& lane : trace.lanes) {
    Intervals compute, comm;
    std::map<StepKey, DeviceStep> mine;
    for (const RowIndex& row : lane.rows) {
      for (const std::uint32_t i : row.events) {
        const Event& e = trace.events[i];
        if (is_compute(e.phase)) compute.emplace_back(e.start, e.end());
        if (is_comm(e.phase)) comm.emplace_back(e.start, e.end());
        if (e.step < 0) continue;
        DeviceStep& d = mine[StepKey{e.layer, static_cast<int>(e.pass), e.step}];
        if (is_compute(e.phase)) d.compute += e.dur;
        if (e.phase == Phase::Send) {
          d.transfer += e.dur;
          d.bytes += static_cast<double>(e.bytes);
        }
      }
    }
    compute = unite(std::move(compute));
    comm = unite(std::move(comm));
    const double both = overlap(compute, comm);
    const double busy = length(compute) + length(comm) - both;
    compute_sum += length(compute);
    exposed_sum += length(comm) - both;
    idle_sum += std::max(0.0, total - busy);
    for (const auto& [key, d] : mine) {
      StepAcc& a = steps[key];
      a.compute_max = std::max(a.compute_max, d.compute);
      a.compute_sum += d.compute;
      a.transfer_max = std::max(a.transfer_max, d.transfer);
      a.transfer_sum += d.transfer;
      a.bytes += d.bytes;
      ++a.devices;
    }
  }
  const double n = std::max(1, s.devices);
  s.ideal_us.value = compute_sum / n;
  s.efficiency.value = total > 0 ? s.ideal_us.value / total : 0;
  s.exposed_comm_us.value = exposed_sum / n;
  s.idle_fraction.value = total > 0 ? idle_sum / n / total : 0;
  std::set<std::int32_t> distinct;
  for (const auto& [key, a] : steps) distinct.insert(std::get<2>(key));
  s.steps = static_cast<int>(distinct.size());
  std::set<std::pair<std::int32_t, int>> groups;
  for (const auto& [key, a] : steps) {
    StepStats st;
    st.layer = std::get<0>(key);
    st.pass = static_cast<PassKind>(std::get<1>(key));
    st.step = std::get<2>(key);
    groups.emplace(st.layer, std::get<1>(key));
    st.devices = a.devices;
    st.compute_max_us = a.compute_max;
    st.compute_mean_us = a.compute_sum / a.devices;
    st.transfer_max_us = a.transfer_max;
    st.transfer_mean_us = a.transfer_sum / a.devices;
    st.bytes = a.bytes;
    s.per_step.push_back(st);
  }
  s.steps_repeat = groups.size() > 1;
  return s;
}

namespace {

// Splits "total_ms" into base "total" and the factor to microseconds. Names
// without a time unit get factor 0 (not a time).
std::pair<std::string, double> base_and_unit(const std::string& last) {
  static const std::pair<const char*, double> units[] = {
      {"_us", 1.0}, {"_ms", 1e3}, {"_ns", 1e-3}, {"_s", 1e6}};
  for (const auto& [suffix, factor] : units) {
    const std::string suf = suffix;
    if (last.size() > suf.size() && last.compare(last.size() - suf.size(), suf.size(), suf) == 0)
      return {last.substr(0, last.size() - suf.size()), factor};
  }
  return {last, 0.0};
}

}  // namespace

Summary summarize(const Trace& trace) {
  Summary s = compute_summary(trace);
  if (!trace.run.present) return s;
  // The simulator's --json names (cli/); a few synonyms so traces from
  // earlier or other writers still fill the panel.
  struct Target {
    SummaryValue* value;
    std::set<std::string> names;
    bool is_time;
    // What the headline can show: a time is >= 0, a fraction in [0, 1]. A
    // value outside is never drawn as a headline (a negative time, an
    // efficiency of 7); it stays listed with the other fields, marked.
    bool valid(double v) const { return std::isfinite(v) && v >= 0 && (is_time || v <= 1); }
  };
  Target targets[] = {
      {&s.total_us, {"total", "total_time", "makespan", "time"}, true},
      {&s.ideal_us, {"ideal", "ideal_time"}, true},
      {&s.exposed_comm_us, {"exposed_comm", "exposed_communication", "exposed_comm_time"}, true},
      {&s.efficiency, {"efficiency", "parallel_efficiency"}, false},
      {&s.idle_fraction, {"idle_fraction"}, false},
  };
  for (const RunInfo::Field& f : trace.run.summary) {
    bool used = false;
    if (f.is_number && !std::isfinite(f.number)) {
      RunInfo::Field bad = f;  // drawn as what it is, never as a number
      bad.is_number = false;
      bad.text = "not a finite number";
      s.other.push_back(std::move(bad));
      continue;
    }
    if (f.is_number) {
      const std::string last = f.key.substr(f.key.rfind('.') + 1);  // npos + 1 == 0
      const auto [base, factor] = base_and_unit(last);
      for (Target& t : targets) {
        const bool match = t.is_time ? factor != 0 && t.names.count(base) : t.names.count(last);
        if (!match || t.value->from_trace) continue;
        if (!t.valid(f.number)) {
          RunInfo::Field bad = f;
          bad.is_number = false;
          char buf[96];
          std::snprintf(buf, sizeof buf, "%.6g (out of range, not used: computed from the events)",
                        f.number);
          bad.text = buf;
          s.other.push_back(std::move(bad));
          used = true;
          break;
        }
        t.value->value = t.is_time ? f.number * factor : f.number;
        t.value->from_trace = true;
        used = true;
        break;
      }
    }
    if (!used) s.other.push_back(f);
  }
  return s;
}

std::string format_us(double us) {
  char buf[48];
  const double a = std::fabs(us);
  if (a >= 1e6)
    std::snprintf(buf, sizeof buf, "%.4g s", us / 1e6);
  else if (a >= 1e3)
    std::snprintf(buf, sizeof buf, "%.4g ms", us / 1e3);
  else if (a >= 1 || a == 0)
    std::snprintf(buf, sizeof buf, "%.4g us", us);
  else
    std::snprintf(buf, sizeof buf, "%.4g ns", us * 1e3);
  return buf;
}

std::string format_bytes(double bytes) {
  char buf[48];
  static const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (std::fabs(bytes) >= 1000 && u < 6) {
    bytes /= 1000;
    ++u;
  }
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  else
    std::snprintf(buf, sizeof buf, "%.3g %s", bytes, units[u]);
  return buf;
}

}  // namespace ringsim::gui
