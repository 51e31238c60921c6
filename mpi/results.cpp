#include "mpi/results.hpp"

#include <fmt/format.h>

#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/core/summary_reader.hpp"

namespace ringsim::mpi {

namespace {

using nlohmann::json;

// One key of a child's JSON, type-checked.
SummaryReader reader(const json& j, const std::string& origin) {
  return SummaryReader(j, origin, "the JSON");
}

}  // namespace

json RingSummary::to_json() const {
  json j;
  j["engine"] = engine;
  if (!program.empty()) j["program"] = program;
  j["devices"] = devices;
  j["hosts"] = hosts;
  j["block"] = block;
  j["seq_len"] = seq_len;
  j["layout"] = layout;
  j["pass"] = pass;
  j["causal"] = causal;
  j["dtype"] = dtype;
  j["heads"] = heads;
  j["kv_heads"] = kv_heads;
  j["head_dim"] = head_dim;
  j["tile"] = tile;
  j["threads"] = threads;
  j["repeat"] = repeat;
  j["warmup"] = warmup;
  j["bytes_per_step"] = bytes_per_step;
  j["time_s"] = time_s;
  j["times_s"] = times_s;
  json st = json::array();
  for (const auto& s : steps)
    st.push_back({{"pass", s.pass},
                  {"step", s.step},
                  {"time_s", s.time_s},
                  {"compute_s", s.compute_s},
                  {"wait_s", s.wait_s}});
  j["steps"] = st;
  if (!steps.empty()) {
    j["compute_s_per_step"] = compute_s_per_step;
    j["wait_s_per_step"] = wait_s_per_step;
    j["contention"] = contention;
    j["step_s"] = step_s;
  }
  if (check) j["check"] = *check;
  return j;
}

RingSummary RingSummary::from_json(const json& j, const std::string& origin) {
  const auto r = reader(j, origin);
  RingSummary s;
  s.engine = r.text("engine");
  if (j.contains("program")) s.program = r.text("program");
  s.devices = static_cast<int>(r.integer("devices"));
  s.hosts = static_cast<int>(r.integer("hosts"));
  s.block = r.integer("block");
  s.seq_len = r.integer("seq_len");
  s.layout = r.text("layout");
  s.pass = r.text("pass");
  s.causal = r.flag("causal");
  s.dtype = r.text("dtype");
  s.heads = static_cast<int>(r.integer("heads"));
  s.kv_heads = static_cast<int>(r.integer("kv_heads"));
  s.head_dim = static_cast<int>(r.integer("head_dim"));
  s.tile = r.integer("tile");
  s.threads = static_cast<int>(r.integer("threads"));
  s.repeat = static_cast<int>(r.integer("repeat"));
  s.warmup = static_cast<int>(r.integer("warmup"));
  s.bytes_per_step = static_cast<std::uint64_t>(r.integer("bytes_per_step"));
  s.time_s = r.real("time_s");
  for (const auto& x : r.array("times_s")) {
    if (!x.is_number()) r.wrong("times_s", "an array of numbers");
    s.times_s.push_back(x.get<double>());
  }
  for (const auto& x : r.array("steps")) {
    const auto q = reader(x, origin);
    s.steps.push_back({q.text("pass"), q.integer("step"), q.real("time_s"), q.real("compute_s"),
                       q.real("wait_s")});
  }
  if (!s.steps.empty()) {
    s.compute_s_per_step = r.real("compute_s_per_step");
    s.wait_s_per_step = r.real("wait_s_per_step");
    s.contention = r.real("contention");
    s.step_s = r.real("step_s");
  }
  if (j.contains("check")) s.check = j.at("check");
  return s;
}

std::string RingSummary::text() const {
  std::string out = fmt::format(
      "ringsim-mpi: {} ranks on {} host(s), {} layout, {}, {}, block {} (sequence {}), heads {}/{} "
      "kv, head dim {}, {}\n",
      devices, hosts, layout, causal ? "causal" : "full", pass, block, seq_len, heads, kv_heads,
      head_dim, dtype);
  out += fmt::format("{:>5} {:>5} {:>12} {:>12} {:>12}\n", "pass", "step", "advance", "compute",
                     "wait");
  for (const auto& st : steps)
    out += fmt::format("{:>5} {:>5} {:>12} {:>12} {:>12}\n", st.pass, st.step,
                       human_seconds(st.time_s), human_seconds(st.compute_s),
                       human_seconds(st.wait_s));
  out += fmt::format(
      "total {} (median of {} run(s)); advance: from the step before's last end to this step's "
      "last end (the ring's pace); compute and wait: the slowest rank's, which can exceed the "
      "advance when that rank started the step early\n",
      human_seconds(time_s), repeat);
  return out;
}

json PingPongResult::to_json() const {
  json j;
  j["latency_s"] = latency_s;
  j["bandwidth_Bps"] = bandwidth_Bps;
  j["small_message_latency_s"] = small_latency_s;
  j["exchange_latency_s"] = exchange_latency_s;
  j["fit_from_bytes"] = kFitFrom;
  j["exchange_bandwidth_Bps"] = exchange_bandwidth_Bps;
  j["ring_step_latency_s"] = ring_latency_s;
  j["ring_step_bandwidth_Bps"] = ring_bandwidth_Bps;
  j["overlap"] = overlap;
  j["overlap_mode"] = overlap_mode();
  json pts = json::array();
  for (const auto& p : points)
    pts.push_back({{"bytes", p.bytes},
                   {"one_way_s", p.one_way_s},
                   {"exchange_s", p.exchange_s},
                   {"ring_step_s", p.ring_step_s}});
  j["points"] = pts;
  json ov = json::array();
  for (const auto& q : overlap_points)
    ov.push_back({{"bytes", q.bytes},
                  {"spin_s", q.spin_s},
                  {"residual_s", q.residual_s},
                  {"overlap", q.overlap}});
  j["overlap_points"] = ov;
  return j;
}

PingPongResult PingPongResult::from_json(const json& j, const std::string& origin) {
  const auto r = reader(j, origin);
  PingPongResult p;
  p.latency_s = r.real("latency_s");
  p.bandwidth_Bps = r.real("bandwidth_Bps");
  p.small_latency_s = r.real("small_message_latency_s");
  p.exchange_latency_s = r.real("exchange_latency_s");
  p.exchange_bandwidth_Bps = r.real("exchange_bandwidth_Bps");
  p.ring_latency_s = r.real("ring_step_latency_s");
  p.ring_bandwidth_Bps = r.real("ring_step_bandwidth_Bps");
  p.overlap = r.real("overlap");
  for (const auto& x : r.array("points")) {
    const auto q = reader(x, origin);
    p.points.push_back(
        {q.integer("bytes"), q.real("one_way_s"), q.real("exchange_s"), q.real("ring_step_s")});
  }
  for (const auto& x : r.array("overlap_points")) {
    const auto q = reader(x, origin);
    p.overlap_points.push_back(
        {q.integer("bytes"), q.real("spin_s"), q.real("residual_s"), q.real("overlap")});
  }
  return p;
}

std::string PingPongResult::text() const {
  std::string out = fmt::format("{:>12} {:>12} {:>12} {:>12} {:>14}\n", "bytes", "one-way",
                                "exchange", "ring step", "one-way GB/s");
  for (const auto& p : points)
    out +=
        fmt::format("{:>12} {:>12} {:>12} {:>12} {:>14.3f}\n", p.bytes, human_seconds(p.one_way_s),
                    human_seconds(p.exchange_s), human_seconds(p.ring_step_s),
                    static_cast<double>(p.bytes) / p.one_way_s / 1e9);
  out += fmt::format(
      "line t = L + bytes / B through messages of {} KiB and more: L {}, B {:.3f} GB/s per "
      "direction\n(smallest message {}; both directions busy: L {}, B {:.3f} GB/s)\n",
      kFitFrom >> 10, human_seconds(latency_s), bandwidth_Bps / 1e9, human_seconds(small_latency_s),
      human_seconds(exchange_latency_s), exchange_bandwidth_Bps / 1e9);
  out += fmt::format("ring step (K and V as two messages each way): L {}, B {:.3f} GB/s\n",
                     human_seconds(ring_latency_s), ring_bandwidth_Bps / 1e9);
  for (const auto& q : overlap_points)
    out += fmt::format("overlap probe, {} bytes: spun {}, then waited {}: overlap {:.2f}\n",
                       q.bytes, human_seconds(q.spin_s), human_seconds(q.residual_s), q.overlap);
  out += fmt::format("overlap {:.2f} -> ringsim run --overlap {}\n", overlap, overlap_mode());
  return out;
}

}  // namespace ringsim::mpi
