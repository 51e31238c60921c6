// The real run's trace is well-formed Chrome trace JSON in ringsim's format
// (docs/trace-format.md), and what it records agrees with the work model:
// each rank's step s used kv_source(s)'s block and computed step_entries
// pairs, and each send carried the bytes models/core/work.hpp counts.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "models/core/work.hpp"
#include "mpi/options.hpp"
#include "mpi/ring.hpp"
#include "mpi/trace.hpp"
#include "tests/mpi/mpirun.hpp"
#include "trace/rules.hpp"

namespace ringsim::mpi::test {
namespace {

using nlohmann::json;

struct Case {
  const char* layout;
  const char* pass;
};

class TraceWellFormed : public ::testing::TestWithParam<Case> {};

TEST_P(TraceWellFormed, EventsCarryTheFormatsFieldsAndTheModelsCounts) {
  const auto [layout, pass] = GetParam();
  const int n = 4;
  const auto dir = scratch_dir(std::string("trace-") + layout + pass);
  const auto path = (dir / "t.json").string();
  const auto r = run_mpi(n, std::string("--layout ") + layout + " --pass " + pass +
                                " --block 16 --heads 4 --kv-heads 2 --head-dim 8 --repeat 2"
                                " --json --trace " +
                                path);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto text = slurp(path);
  const auto t = json::parse(text);
  std::filesystem::remove_all(dir);
  // The trace rules (docs/trace-format.md): tracks that never overlap, flows,
  // counters, displayTimeUnit by length, every track named.
  std::string violations;
  for (const auto& v : trace::check_rules_text(text)) violations += v + "\n";
  EXPECT_EQ(violations, "");

  RingOptions o;
  o.layout = parse_layout("--layout", layout);
  o.pass = parse_pass("--pass", pass);
  o.block = 16;
  o.heads = 4;
  o.kv_heads = 2;
  o.head_dim = 8;
  const auto w = ring_workload(o, n);
  const auto kv_bytes = static_cast<std::int64_t>(kv_block_elements(w)) * 4;  // fp32

  const auto& meta = t["otherData"]["ringsim"];
  EXPECT_EQ(meta["format"], "ringsim-trace-1");
  EXPECT_EQ(meta["devices"], n);
  EXPECT_EQ(meta["steps"], n);
  EXPECT_EQ(meta["layout"], layout);
  EXPECT_EQ(meta["summary"]["engine"], "mpi");

  const std::set<std::string> compute{"partial", "merge"}, comm{"send", "recv", "wait"};
  std::set<int> named_threads;                          // devices with a named track
  std::map<int, std::string> track_names;               // tid -> "rank 3 · send"
  std::map<std::pair<int, std::string>, int> partials;  // (device, pass) -> count
  std::map<int, double> last_ts;
  int sends = 0, homes = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "C")
      continue;  // counters belong to a process, not a track (the rules check them)
    ASSERT_TRUE(e.contains("name") && e.contains("ph") && e.contains("pid") && e.contains("tid"))
        << e.dump();
    if (e["ph"] == "M") {
      if (e["name"] == "thread_name") {
        named_threads.insert(e["args"]["device"].get<int>());
        track_names[e["tid"].get<int>()] = e["args"]["name"];
      }
      continue;
    }
    if (e["ph"] == "s" || e["ph"] == "f") continue;  // flows: checked by the rules
    ASSERT_EQ(e["ph"], "X") << e.dump();
    const auto name = e["name"].get<std::string>();
    const int tid = e["tid"].get<int>();
    const auto& a = e["args"];
    EXPECT_TRUE(compute.count(name) || comm.count(name)) << name;
    EXPECT_EQ(e["cat"], compute.count(name) ? "compute" : "comm") << e.dump();
    EXPECT_GE(e["ts"].get<double>(), 0.0) << e.dump();
    EXPECT_GE(e["dur"].get<double>(), 0.0) << e.dump();
    EXPECT_EQ(e["pid"], 0);  // one host
    // One track per rank and activity: the track's name says whose it is.
    const int dev = a["device"].get<int>();
    EXPECT_EQ(track_names[tid].rfind("rank " + std::to_string(dev) + " \u00b7 ", 0), 0u)
        << e.dump();
    const auto step = a["step"].get<std::int64_t>();
    // -1: backward's dK/dV hop home, outside the ring steps (as the simulator writes it).
    const bool home = step == -1;
    EXPECT_TRUE(step >= 0 || (home && a["pass"] == "bwd" && (name == "send" || name == "recv")))
        << e.dump();
    EXPECT_LT(step, n);
    EXPECT_TRUE(a.contains("kv_block") && a.contains("bytes")) << e.dump();
    const auto p = a["pass"].get<std::string>();
    EXPECT_TRUE(p == "fwd" || p == "bwd") << e.dump();
    // Sorted by start time on each track.
    if (last_ts.count(tid)) {
      EXPECT_GE(e["ts"].get<double>(), last_ts[tid]) << e.dump();
    }
    last_ts[tid] = e["ts"].get<double>();

    if (home) {
      // Home hop: the sender returns block dev+1's gradient, the receiver gets its own.
      EXPECT_EQ(a["kv_block"], name == "send" ? (dev + 1) % n : dev) << e.dump();
      ++homes;
    }
    if (name == "partial") {
      ++partials[{dev, p}];
      EXPECT_EQ(a["kv_block"], kv_source(w, dev, step)) << e.dump();
      EXPECT_EQ(a["entries"].get<std::uint64_t>(), step_entries(w, dev, step)) << e.dump();
      EXPECT_EQ(a["bytes"], 0);
    }
    if (name == "send" || name == "recv") {
      const auto peer = a["peer"].get<int>();
      EXPECT_EQ(peer, name == "send" ? (dev + 1) % n : (dev + n - 1) % n) << e.dump();
      // K + V forward; backward also dK + dV (separate events of the same size).
      EXPECT_EQ(a["bytes"].get<std::int64_t>(), 2 * kv_bytes) << e.dump();
      if (name == "send") ++sends;
    }
  }
  const bool fwd = std::string(pass) != "bwd", bwd = std::string(pass) != "fwd";
  EXPECT_EQ(named_threads.size(), static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) {
    if (fwd) {
      EXPECT_EQ((partials[{d, "fwd"}]), n) << "device " << d;
    }
    if (bwd) {
      EXPECT_EQ((partials[{d, "bwd"}]), n) << "device " << d;
    }
  }
  // Forward: N-1 K/V sends per rank. Backward: N-1 K/V sends and N dK/dV
  // sends (N-1 along the ring, one home).
  EXPECT_EQ(sends, n * ((fwd ? n - 1 : 0) + (bwd ? 2 * n - 1 : 0)));
  EXPECT_EQ(homes, bwd ? 2 * n : 0);  // one send and one recv per rank
}

INSTANTIATE_TEST_SUITE_P(Passes, TraceWellFormed,
                         ::testing::Values(Case{"ring", "fwd"}, Case{"zigzag", "bwd"},
                                           Case{"striped", "fwdbwd"}),
                         [](const auto& info) {
                           return std::string(info.param.layout) + "_" + info.param.pass;
                         });

// In process: the writer's output is a pure function of its events (sorted,
// fixed precision), so equal inputs give byte-identical files.
TEST(TraceWriter, DeterministicAndRoundTrips) {
  // Seconds since the barrier in, microseconds in the record.
  const Event a = make_event(Phase::Send, trace::Pass::Fwd, 2e-6, 3.5e-6, 0, 1, 512, 1);
  const Event b = make_event(Phase::Partial, trace::Pass::Fwd, 1e-6, 2.5e-6, 0, 1, 0, -1, 99);
  const std::vector<Event> ev{a, b};
  const auto decoded = decode_events(encode_events(ev));
  ASSERT_EQ(decoded.size(), 2u);
  EXPECT_EQ(decoded[1].phase, Phase::Partial);
  EXPECT_EQ(decoded[1].entries, 99u);
  EXPECT_DOUBLE_EQ(decoded[0].dur, 1.5);

  const auto dir = scratch_dir("writer");
  const auto p1 = (dir / "a.json").string(), p2 = (dir / "b.json").string();
  write_trace(p1, {decoded, {}}, {"h", "h"}, {{"format", "ringsim-trace-1"}});
  write_trace(p2, {decoded, {}}, {"h", "h"}, {{"format", "ringsim-trace-1"}});
  const auto text = slurp(p1);
  EXPECT_EQ(text, slurp(p2));
  const auto t = json::parse(text);
  EXPECT_TRUE(trace::check_rules(t).empty());
  // The two complete events, partial (ts 1 us) first, on rank 0's compute and
  // send tracks (tid = rank x 10 + activity); rank 1 has none.
  std::vector<json> x;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "X") x.push_back(e);
  ASSERT_EQ(x.size(), 2u);
  EXPECT_EQ(x[0]["name"], "partial");
  EXPECT_EQ(x[0]["ts"], 1.0);
  EXPECT_EQ(x[0]["tid"], 0);
  EXPECT_EQ(x[1]["args"]["peer"], 1);
  EXPECT_EQ(x[1]["tid"], 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ringsim::mpi::test
