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
  const auto t = json::parse(slurp(path));
  std::filesystem::remove_all(dir);

  RingOptions o;
  o.layout = parse_layout("--layout", layout);
  o.pass = parse_pass("--pass", pass);
  o.block = 16;
  o.heads = 4;
  o.kv_heads = 2;
  o.head_dim = 8;
  const auto w = ring_workload(o, n);
  const auto kv_bytes = static_cast<std::int64_t>(kv_block_elements(w)) * 4;  // fp32

  EXPECT_EQ(t["displayTimeUnit"], "ns");
  const auto& meta = t["otherData"]["ringsim"];
  EXPECT_EQ(meta["format"], "ringsim-trace-1");
  EXPECT_EQ(meta["devices"], n);
  EXPECT_EQ(meta["steps"], n);
  EXPECT_EQ(meta["layout"], layout);
  EXPECT_EQ(meta["summary"]["engine"], "mpi");

  const std::set<std::string> compute{"partial", "merge"}, comm{"send", "recv", "wait"};
  std::set<int> named_threads;
  std::map<std::pair<int, std::string>, int> partials;  // (device, pass) -> count
  std::map<int, double> last_ts;
  int sends = 0, homes = 0;
  for (const auto& e : t["traceEvents"]) {
    ASSERT_TRUE(e.contains("name") && e.contains("ph") && e.contains("pid") && e.contains("tid"))
        << e.dump();
    if (e["ph"] == "M") {
      if (e["name"] == "thread_name") named_threads.insert(e["tid"].get<int>());
      continue;
    }
    ASSERT_EQ(e["ph"], "X") << e.dump();
    const auto name = e["name"].get<std::string>();
    const int tid = e["tid"].get<int>();
    const auto& a = e["args"];
    EXPECT_TRUE(compute.count(name) || comm.count(name)) << name;
    EXPECT_EQ(e["cat"], compute.count(name) ? "compute" : "comm") << e.dump();
    EXPECT_GE(e["ts"].get<double>(), 0.0) << e.dump();
    EXPECT_GE(e["dur"].get<double>(), 0.0) << e.dump();
    EXPECT_EQ(e["pid"], 0);  // one host
    EXPECT_EQ(a["device"], tid);
    const auto step = a["step"].get<std::int64_t>();
    // -1: backward's dK/dV hop home, outside the ring steps (as the simulator writes it).
    const bool home = step == -1;
    EXPECT_TRUE(step >= 0 || (home && a["pass"] == "bwd" && (name == "send" || name == "recv")))
        << e.dump();
    EXPECT_LT(step, n);
    EXPECT_TRUE(a.contains("kv_block") && a.contains("bytes")) << e.dump();
    const auto p = a["pass"].get<std::string>();
    EXPECT_TRUE(p == "fwd" || p == "bwd") << e.dump();
    // Sorted by device, then start time.
    if (last_ts.count(tid)) {
      EXPECT_GE(e["ts"].get<double>(), last_ts[tid]) << e.dump();
    }
    last_ts[tid] = e["ts"].get<double>();

    if (home) {
      // Home hop: the sender returns block tid+1's gradient, the receiver gets its own.
      EXPECT_EQ(a["kv_block"], name == "send" ? (tid + 1) % n : tid) << e.dump();
      ++homes;
    }
    if (name == "partial") {
      ++partials[{tid, p}];
      EXPECT_EQ(a["kv_block"], kv_source(w, tid, step)) << e.dump();
      EXPECT_EQ(a["entries"].get<std::uint64_t>(), step_entries(w, tid, step)) << e.dump();
      EXPECT_EQ(a["bytes"], 0);
    }
    if (name == "send" || name == "recv") {
      const auto peer = a["peer"].get<int>();
      EXPECT_EQ(peer, name == "send" ? (tid + 1) % n : (tid + n - 1) % n) << e.dump();
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
  // Two metadata thread names + one process name + two events; partial (ts 1 us) first.
  ASSERT_EQ(t["traceEvents"].size(), 5u);
  EXPECT_EQ(t["traceEvents"][3]["name"], "partial");
  EXPECT_EQ(t["traceEvents"][3]["ts"], 1.0);
  EXPECT_EQ(t["traceEvents"][4]["args"]["peer"], 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ringsim::mpi::test
