// The trace rules (trace/rules.hpp, docs/trace-format.md): the checker finds
// each kind of violation; the writer's tracks, flows and counters follow the
// rules and the reader still returns the events it was given; and every trace
// the project writes (ringsim run and infer; the MPI ring in tests/mpi) passes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "proc/child.hpp"
#include "tests/trace/files.hpp"
#include "trace/layout.hpp"
#include "trace/reader.hpp"
#include "trace/rules.hpp"
#include "trace/writer.hpp"

namespace ringsim::trace {
namespace {

using Json = nlohmann::json;

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

// A minimal trace that follows every rule: two slices on two named tracks,
// one flow between them, one counter; 3 us long, so displayTimeUnit "ns".
Json good() {
  return Json::parse(R"({
    "displayTimeUnit": "ns",
    "traceEvents": [
      {"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "node 0"}},
      {"name": "thread_name", "ph": "M", "pid": 0, "tid": 1, "args": {"name": "device 0 · send"}},
      {"name": "thread_name", "ph": "M", "pid": 0, "tid": 12, "args": {"name": "device 1 · recv"}},
      {"name": "send", "cat": "comm", "ph": "X", "pid": 0, "tid": 1, "ts": 0.5, "dur": 2.0},
      {"name": "send", "cat": "comm", "ph": "X", "pid": 0, "tid": 1, "ts": 2.5, "dur": 1.0},
      {"name": "recv", "cat": "comm", "ph": "X", "pid": 0, "tid": 12, "ts": 0.5, "dur": 2.5},
      {"name": "transfer", "cat": "comm", "ph": "s", "id": 1, "pid": 0, "tid": 1, "ts": 0.5},
      {"name": "transfer", "cat": "comm", "ph": "f", "bp": "e", "id": 1, "pid": 0, "tid": 12, "ts": 0.5},
      {"name": "link 0->1", "cat": "derived", "ph": "C", "pid": 0, "ts": 0.5, "args": {"bytes in flight": 64}}
    ]})");
}

TEST(Rules, AGoodTracePasses) {
  EXPECT_EQ(joined(check_rules(good())), "");
}

TEST(Rules, NotATrace) {
  EXPECT_FALSE(check_rules_text("[1, 2").empty());
  EXPECT_FALSE(check_rules(Json::array()).empty());
  EXPECT_FALSE(check_rules(Json::parse(R"({"traceEvents": {}})")).empty());
}

TEST(Rules, CompleteEventsNeedTheirFields) {
  auto t = good();
  t["traceEvents"][4].erase("tid");
  ASSERT_EQ(check_rules(t).size(), 1u);
  EXPECT_NE(check_rules(t)[0].find("a complete event needs"), std::string::npos);
  t = good();
  t["traceEvents"][5]["dur"] = -1.0;
  EXPECT_NE(joined(check_rules(t)).find("dur is negative"), std::string::npos);
}

TEST(Rules, OverlapOnATrackIsFoundButTouchingIsNot) {
  auto t = good();
  // The second send starts 1e-6 us (one printed unit) before the first ends.
  t["traceEvents"][4]["ts"] = 2.499999;
  t["traceEvents"][4]["dur"] = 1.000001;
  EXPECT_NE(joined(check_rules(t)).find("overlaps"), std::string::npos) << joined(check_rules(t));
  // Nesting is an overlap too: the rule is one event at a time per track.
  t = good();
  t["traceEvents"][4]["ts"] = 1.0;
  t["traceEvents"][4]["dur"] = 0.5;
  EXPECT_NE(joined(check_rules(t)).find("overlaps"), std::string::npos);
  // Large times: 1e6 us + 0.1 + 0.2 is not exactly 1e6 + 0.3 in doubles; the
  // tolerance (4 ulps, ~9e-10 us here) absorbs that, and the events touch.
  t = good();
  t["displayTimeUnit"] = "ms";
  t["traceEvents"][3]["ts"] = 1000000.1;
  t["traceEvents"][3]["dur"] = 0.2;
  t["traceEvents"][4]["ts"] = 1000000.3;
  t["traceEvents"][6]["ts"] = 1000000.1;
  EXPECT_EQ(joined(check_rules(t)), "");
}

TEST(Rules, TiesMustBeListedLongerFirst) {
  auto t = good();
  // Same start on one track (zero-length, so no overlap), listed shorter first.
  t["traceEvents"][4]["ts"] = 0.5;
  t["traceEvents"][4]["dur"] = 0.0;
  std::swap(t["traceEvents"][3], t["traceEvents"][4]);
  EXPECT_NE(joined(check_rules(t)).find("ties not ordered"), std::string::npos);
}

TEST(Rules, FlowsNeedBothEndsAndASliceToBindTo) {
  auto t = good();
  t["traceEvents"].erase(7);  // the finish
  EXPECT_NE(joined(check_rules(t)).find("exactly one start"), std::string::npos);
  t = good();
  t["traceEvents"][7]["ts"] = 10.0;  // after the receive ended
  EXPECT_NE(joined(check_rules(t)).find("inside no complete event"), std::string::npos);
}

TEST(Rules, CountersCarryNumbers) {
  auto t = good();
  t["traceEvents"][8]["args"]["bytes in flight"] = "64";
  EXPECT_EQ(check_rules(t).size(), 1u);
}

TEST(Rules, DisplayTimeUnitFollowsTheLength) {
  auto t = good();
  t["displayTimeUnit"] = "us";  // not a value the format allows
  EXPECT_EQ(check_rules(t).size(), 1u);
  t["displayTimeUnit"] = "ms";  // allowed, but the trace lasts 3 us
  EXPECT_EQ(check_rules(t).size(), 1u);
  t.erase("displayTimeUnit");
  EXPECT_EQ(check_rules(t).size(), 1u);
}

TEST(Rules, EveryUsedThreadAndProcessIsNamed) {
  auto t = good();
  t["traceEvents"].erase(2);  // device 1's recv track loses its name
  EXPECT_NE(joined(check_rules(t)).find("tid 12 has no thread_name"), std::string::npos);
  t = good();
  t["traceEvents"].erase(0);
  EXPECT_NE(joined(check_rules(t)).find("pid 0 has no process_name"), std::string::npos);
}

// Two devices. Device 0: a partial and two sends that overlap (the second
// must go to an overflow track), a wait; device 1: the matching receives.
Event ev(Phase p, double start, double dur, std::int32_t step, std::int32_t peer = -1,
         std::uint64_t bytes = 0) {
  Event e;
  e.phase = p;
  e.pass = Pass::Bwd;
  e.start = start;
  e.dur = dur;
  e.step = step;
  e.kv_block = step;
  e.peer = peer;
  e.bytes = bytes;
  e.layer = 0;
  if (p == Phase::Partial) e.entries = 100;
  return e;
}

std::vector<Lane> lanes2() {
  return {{0, 0, "node 0", "device 0"}, {1, 0, "node 0", "device 1"}};
}

std::vector<std::vector<Event>> events2() {
  return {{ev(Phase::Partial, 0, 10, 0), ev(Phase::Send, 0, 6, 0, 1, 100),
           ev(Phase::Send, 4, 4, 0, 1, 50), ev(Phase::Wait, 10, 2, 0, 1)},
          {ev(Phase::Recv, 0, 7, 0, 0, 100), ev(Phase::Recv, 5, 3, 0, 0, 50)}};
}

TEST(Layout, OverlappingSendsGetAnOverflowTrack) {
  const auto plan = plan_tracks({0, 1}, events2(), 3);
  EXPECT_EQ(plan.per_device, 10);  // 6 activities + 1 overflow fit in 10 slots
  const auto& d0 = plan.lanes[0];
  ASSERT_EQ(d0.tracks.size(), 4u);  // compute, send, wait, send 2
  auto slot_of = [&](std::size_t i) {
    return d0.tracks[static_cast<std::size_t>(d0.track_of[i])].slot;
  };
  EXPECT_EQ(slot_of(0), 0);  // compute
  EXPECT_EQ(slot_of(1), 1);  // send: the first (by start) keeps the send track
  EXPECT_EQ(slot_of(2), 6);  // the first overflow slot, after the six activities
  EXPECT_EQ(slot_of(3), 3);  // wait
  // Flows: each send's receive, by (link, pass, layer, step, kv_block), in start order.
  ASSERT_EQ(plan.flows.size(), 2u);
  EXPECT_EQ(plan.flows[0].send_event, 1u);
  EXPECT_EQ(plan.flows[0].recv_event, 0u);
  EXPECT_EQ(plan.flows[1].send_event, 2u);
  EXPECT_EQ(plan.flows[1].recv_event, 1u);
}

TEST(Layout, BytesInFlightPerLink) {
  const auto plan = plan_tracks({0, 1}, events2(), 0);
  const auto c = link_counters({0, 1}, events2(), plan);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].from, 0);
  EXPECT_EQ(c[0].to, 1);
  // Send A [0, 6) 100 bytes, send B [4, 8) 50 bytes:
  // t=0: 100; t=4: 100+50 = 150; t=6: 150-100 = 50; t=8: 0.
  const std::vector<std::pair<Tick, std::uint64_t>> want{{0, 100}, {4, 150}, {6, 50}, {8, 0}};
  EXPECT_EQ(c[0].points, want);
}

TEST(Layout, LeftoverSendsPairInStartOrderOnTheirLink) {
  // The receives label the step differently from the sends (as the MPI
  // ring's backward does): no key matches, so they pair per link by start.
  auto e = events2();
  e[1][0].step = 1;
  e[1][1].step = 1;
  const auto plan = plan_tracks({0, 1}, e, 3);
  ASSERT_EQ(plan.flows.size(), 2u);
  EXPECT_EQ(plan.flows[0].recv_event, 0u);
  EXPECT_EQ(plan.flows[1].recv_event, 1u);
}

TEST(Layout, DisplayTimeUnit) {
  EXPECT_STREQ(display_time_unit(999.0), "ns");
  EXPECT_STREQ(display_time_unit(1000.0), "ms");
}

TEST(Writer, FollowsTheRulesAndReadsBackTheSameEvents) {
  const auto path = temp("writer");
  ASSERT_TRUE(write_trace(path, "--trace", lanes2(), events2(), {{"devices", 2}}));
  const auto text = slurp(path);
  std::filesystem::remove(path);
  EXPECT_EQ(joined(check_rules_text(text)), "");
  const auto j = Json::parse(text);
  EXPECT_EQ(j["displayTimeUnit"], "ns");  // 12 us long
  std::set<std::string> threads;
  int flows = 0, counters = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "s" || e["ph"] == "f") ++flows;
    if (e["ph"] == "C") ++counters;
  }
  const std::set<std::string> want{"device 0 · compute", "device 0 · send", "device 0 · send 2",
                                   "device 0 · wait",    "device 1 · recv", "device 1 · recv 2"};
  EXPECT_EQ(threads, want);
  EXPECT_EQ(flows, 4);     // two transfers, a start and a finish each
  EXPECT_EQ(counters, 4);  // the four points of BytesInFlightPerLink
  // The reader: the same six events on devices 0 and 1, one lane name per
  // device, and the flows and counters not counted as left out.
  const auto t = parse_trace(text);
  ASSERT_EQ(t.events.size(), 6u);
  std::map<std::int32_t, int> per_device;
  for (const auto& e : t.events) ++per_device[e.device];
  EXPECT_EQ(per_device[0], 4);
  EXPECT_EQ(per_device[1], 2);
  ASSERT_EQ(t.lane_names.size(), 2u);
  EXPECT_EQ(t.lane_names[0], (std::pair<std::int32_t, std::string>{0, "device 0"}));
  EXPECT_EQ(t.lane_names[1], (std::pair<std::int32_t, std::string>{1, "device 1"}));
  EXPECT_EQ(t.skipped_events, 0u);
  EXPECT_EQ(t.derived_events, 8u);
}

TEST(Writer, MillisecondTracesSayMs) {
  auto e = events2();
  e[0][3].dur = 2000;  // the wait makes the trace 2010 us long
  const auto path = temp("ms");
  ASSERT_TRUE(write_trace(path, "--trace", lanes2(), e, {}));
  const auto text = slurp(path);
  std::filesystem::remove(path);
  EXPECT_EQ(Json::parse(text)["displayTimeUnit"], "ms");
  EXPECT_EQ(joined(check_rules_text(text)), "");
}

TEST(Reader, OlderTracesStillRead) {
  // One thread per device, no args.device on the metadata (traces before the tracks).
  const auto t = parse_trace(R"({"displayTimeUnit": "ns", "traceEvents": [
    {"name": "thread_name", "ph": "M", "pid": 0, "tid": 3, "args": {"name": "device 3"}},
    {"name": "partial", "cat": "compute", "ph": "X", "pid": 0, "tid": 3, "ts": 1, "dur": 2,
     "args": {"device": 3, "step": 0}},
    {"name": "send", "cat": "comm", "ph": "X", "pid": 0, "tid": 3, "ts": 1, "dur": 1}]})");
  ASSERT_EQ(t.events.size(), 2u);
  EXPECT_EQ(t.events[1].device, 3);  // from the tid
  ASSERT_EQ(t.lane_names.size(), 1u);
  EXPECT_EQ(t.lane_names[0].second, "device 3");
}

// Every trace `ringsim` writes, over layouts, passes, scopes and faults.
struct Cli {
  const char* name;
  std::vector<std::string> args;
};

class EveryTrace : public ::testing::TestWithParam<Cli> {};

TEST_P(EveryTrace, FollowsTheRules) {
  const auto path = temp(GetParam().name);
  std::vector<std::string> argv{RINGSIM_BIN};
  for (const auto& a : GetParam().args) argv.push_back(a);
  argv.push_back("--trace");
  argv.push_back(path);
  const auto r = proc::run(argv, 300);
  ASSERT_TRUE(r.ok()) << r.err;
  const auto text = slurp(path);
  std::filesystem::remove(path);
  const auto v = check_rules_text(text);
  EXPECT_EQ(joined(v), "") << proc::shell_line(argv);
  // Flows on every ring trace with transfers; the reader opens it.
  const auto t = parse_trace(text, GetParam().name);
  EXPECT_GT(t.events.size(), 0u);
  EXPECT_EQ(t.skipped_events, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Cli, EveryTrace,
    ::testing::Values(
        Cli{"zigzag16", {"--devices", "16", "--layout", "zigzag"}},
        Cli{"ring_fwdbwd", {"--devices", "8", "--layout", "ring", "--pass", "fwdbwd"}},
        Cli{"zigzag_fwdbwd",
            {"--devices", "16", "--block", "7168", "--layout", "zigzag", "--pass", "fwdbwd"}},
        Cli{"striped_bwd", {"--devices", "8", "--layout", "striped", "--pass", "bwd"}},
        Cli{"ulysses", {"--devices", "8", "--layout", "ulysses"}},
        Cli{"allgather", {"--devices", "8", "--layout", "allgather", "--pass", "fwdbwd"}},
        Cli{"hybrid", {"--devices", "16", "--layout", "hybrid", "--pass", "fwdbwd"}},
        Cli{"layer_tp",
            {"--devices", "4", "--tp", "2", "--scope", "layer", "--layers", "2", "--pass",
             "fwdbwd"}},
        Cli{"faults",
            {"--devices", "8", "--layout", "zigzag", "--straggler", "3:2", "--degrade", "1-2:4"}},
        Cli{"flat_ulysses",
            {"--devices", "8", "--layout", "ulysses", "--platform", "flat", "--bandwidth", "1e11"}},
        Cli{"infer",
            {"infer", "--model", "llama3-8b", "--layers", "2", "--context", "32K", "--gpus", "16",
             "--tp", "8", "--variant", "pass-q"}},
        Cli{"infer_kv",
            {"infer", "--model", "llama3-8b", "--layers", "1", "--context", "32K", "--gpus", "16",
             "--tp", "8", "--variant", "pass-kv"}}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ringsim::trace
