#include "trace/rules.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "trace/layout.hpp"

namespace ringsim::trace {

namespace {

using Json = nlohmann::json;

struct Slice {
  double ts = 0, end = 0, dur = 0;
  std::string name, cat;
  std::size_t index = 0;  // in traceEvents
};

struct Violations {
  std::vector<std::string> lines;
  std::size_t more = 0;
  void add(std::string s) {
    if (lines.size() < kMaxViolations)
      lines.push_back(std::move(s));
    else
      ++more;
  }
};

std::string at(std::size_t i) {
  return "traceEvents[" + std::to_string(i) + "]";
}

bool is_int(const Json& e, const char* k) {
  return e.contains(k) && e[k].is_number_integer();
}
bool is_num(const Json& e, const char* k) {
  return e.contains(k) && e[k].is_number() && std::isfinite(e[k].get<double>());
}

// Two times the file says are equal may differ after parsing and adding by a
// few units in the last place of a double; printed times have at most 6
// decimals (1e-6 us), and 4 ulps of a time stays below that up to ~1e9 us, so
// the tolerance never hides a real overlap of one printed unit.
double tolerance(double a, double b) {
  return 4 * DBL_EPSILON * std::max({1.0, std::fabs(a), std::fabs(b)});
}

using TrackKey = std::pair<std::int64_t, std::int64_t>;  // pid, tid

}  // namespace

std::vector<std::string> check_rules(const Json& trace) {
  Violations v;
  if (!trace.is_object()) return {"the top level must be a JSON object"};
  if (!trace.contains("traceEvents") || !trace["traceEvents"].is_array())
    return {"'traceEvents' must be an array"};
  const Json& events = trace["traceEvents"];

  std::map<TrackKey, std::vector<Slice>> tracks;  // X events per (pid, tid), file order
  std::set<std::int64_t> process_named, pids_used;
  std::set<TrackKey> thread_named, threads_used;
  struct FlowEnd {
    std::size_t index;
    TrackKey track;
    double ts;
    std::string cat;
  };
  std::map<std::pair<std::string, std::string>, std::vector<FlowEnd>> starts, finishes;
  double first = 0, last = 0;
  bool any = false;

  for (std::size_t i = 0; i < events.size(); ++i) {
    const Json& e = events[i];
    if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string()) {
      v.add(at(i) + ": must be an object with a string 'ph'");
      continue;
    }
    const std::string ph = e["ph"];
    if (ph == "M") {
      const std::string name = e.value("name", "");
      const bool named = e.contains("args") && e["args"].is_object() &&
                         e["args"].contains("name") && e["args"]["name"].is_string();
      if ((name == "process_name" || name == "thread_name") &&
          (!named || !is_int(e, "pid") || (name == "thread_name" && !is_int(e, "tid"))))
        v.add(at(i) + ": " + name + " needs integer pid/tid and a string args.name");
      else if (name == "process_name")
        process_named.insert(e["pid"].get<std::int64_t>());
      else if (name == "thread_name")
        thread_named.insert({e["pid"].get<std::int64_t>(), e["tid"].get<std::int64_t>()});
      continue;
    }
    if (ph == "X") {
      if (!e.contains("name") || !e["name"].is_string() || !is_num(e, "ts") || !is_num(e, "dur") ||
          !is_int(e, "pid") || !is_int(e, "tid")) {
        v.add(at(i) +
              ": a complete event needs a string name, numbers ts and dur, integers pid and tid");
        continue;
      }
      Slice s;
      s.ts = e["ts"].get<double>();
      s.dur = e["dur"].get<double>();
      if (s.dur < 0) v.add(at(i) + ": dur is negative");
      s.end = s.ts + std::max(0.0, s.dur);
      s.name = e["name"].get<std::string>();
      s.cat = e.contains("cat") && e["cat"].is_string() ? e["cat"].get<std::string>() : "";
      s.index = i;
      const TrackKey k{e["pid"].get<std::int64_t>(), e["tid"].get<std::int64_t>()};
      pids_used.insert(k.first);
      threads_used.insert(k);
      tracks[k].push_back(s);
      first = any ? std::min(first, s.ts) : s.ts;
      last = any ? std::max(last, s.end) : s.end;
      any = true;
      continue;
    }
    if (ph == "s" || ph == "f") {
      const bool id_ok = e.contains("id") && (e["id"].is_number_integer() || e["id"].is_string());
      if (!id_ok || !is_num(e, "ts") || !is_int(e, "pid") || !is_int(e, "tid")) {
        v.add(at(i) + ": a flow event needs an id, a number ts, integers pid and tid");
        continue;
      }
      const std::string cat =
          e.contains("cat") && e["cat"].is_string() ? e["cat"].get<std::string>() : "";
      const TrackKey k{e["pid"].get<std::int64_t>(), e["tid"].get<std::int64_t>()};
      pids_used.insert(k.first);
      threads_used.insert(k);
      // Flows bind by (cat, id).
      (ph == "s" ? starts : finishes)[{cat, e["id"].dump()}].push_back(
          {i, k, e["ts"].get<double>(), cat});
      continue;
    }
    if (ph == "C") {
      bool ok = e.contains("name") && e["name"].is_string() && is_num(e, "ts") &&
                is_int(e, "pid") && e.contains("args") && e["args"].is_object() &&
                !e["args"].empty();
      if (ok)
        for (const auto& [key, val] : e["args"].items())
          ok = ok && val.is_number() && std::isfinite(val.get<double>());
      if (!ok)
        v.add(at(i) +
              ": a counter needs a string name, a number ts, an integer pid and args of numbers");
      else
        pids_used.insert(e["pid"].get<std::int64_t>());
      continue;
    }
    v.add(at(i) + ": ph \"" + ph + "\" is not one ringsim writes (M, X, s, f, C)");
  }

  // displayTimeUnit: "ms" or "ns" only, and the one the trace's length asks for.
  const double span = any ? last - first : 0;
  if (!trace.contains("displayTimeUnit") || !trace["displayTimeUnit"].is_string())
    v.add("displayTimeUnit is missing");
  else if (trace["displayTimeUnit"] != display_time_unit(span))
    v.add("displayTimeUnit is " + trace["displayTimeUnit"].dump() + " for a trace of " +
          std::to_string(span) + " us; the rule says \"" + display_time_unit(span) + "\"");

  for (auto& [k, slices] : tracks) {
    const std::string where = "pid " + std::to_string(k.first) + " tid " + std::to_string(k.second);
    // Ties ordered: on a track, the file lists events by start, longer first, then name.
    for (std::size_t j = 1; j < slices.size(); ++j) {
      const Slice& a = slices[j - 1];
      const Slice& b = slices[j];
      if (std::tuple(a.ts, -a.dur, a.name) > std::tuple(b.ts, -b.dur, b.name))
        v.add(at(b.index) + " (" + where +
              "): listed before an event that starts earlier, or "
              "ties not ordered longer first then by name");
    }
    std::stable_sort(slices.begin(), slices.end(),
                     [](const Slice& a, const Slice& b) { return a.ts < b.ts; });
    // No overlap: each event starts once the latest-ending earlier one has ended
    // (zero-length events at a boundary touch, they do not overlap).
    const Slice* reach = nullptr;
    for (const Slice& s : slices) {
      if (reach && s.ts < reach->end - tolerance(s.ts, reach->end) &&
          reach->ts < s.end - tolerance(reach->ts, s.end))
        v.add(at(s.index) + " (" + where + ", " + s.name + "): overlaps " + at(reach->index) +
              " (" + reach->name + ") on the same track");
      if (!reach || s.end > reach->end) reach = &s;
    }
  }

  // Flows: every start has its finish and every finish its start, and each
  // binds to a complete event of its track and category that contains its time.
  auto binds = [&](const FlowEnd& f) {
    const auto it = tracks.find(f.track);
    if (it == tracks.end()) return false;
    const auto& sl = it->second;
    auto ub = std::upper_bound(sl.begin(), sl.end(), f.ts + tolerance(f.ts, f.ts),
                               [](double t, const Slice& s) { return t < s.ts; });
    for (int back = 0; back < 4 && ub != sl.begin(); ++back) {
      --ub;
      if (ub->cat == f.cat && ub->end >= f.ts - tolerance(f.ts, ub->end)) return true;
    }
    return false;
  };
  for (const auto& [id, ends] : starts) {
    const auto it = finishes.find(id);
    if (ends.size() != 1 || it == finishes.end() || it->second.size() != 1)
      v.add(at(ends.front().index) + ": flow id " + id.second +
            " needs exactly one start (\"s\") and one finish (\"f\")");
  }
  for (const auto& [id, ends] : finishes)
    if (!starts.count(id)) v.add(at(ends.front().index) + ": flow finish with no start");
  for (const auto* group : {&starts, &finishes})
    for (const auto& [id, ends] : *group)
      for (const auto& f : ends)
        if (!binds(f))
          v.add(at(f.index) + ": flow event lies inside no complete event of its track and cat");

  // Metadata names every process and thread used.
  for (const auto pid : pids_used)
    if (!process_named.count(pid)) v.add("pid " + std::to_string(pid) + " has no process_name");
  for (const auto& k : threads_used)
    if (!thread_named.count(k))
      v.add("pid " + std::to_string(k.first) + " tid " + std::to_string(k.second) +
            " has no thread_name");

  if (v.more > 0) v.lines.push_back("... and " + std::to_string(v.more) + " more");
  return v.lines;
}

std::vector<std::string> check_rules_text(std::string_view json) {
  const Json j = Json::parse(json.begin(), json.end(), nullptr, false);
  if (j.is_discarded()) return {"not valid JSON"};
  return check_rules(j);
}

}  // namespace ringsim::trace
