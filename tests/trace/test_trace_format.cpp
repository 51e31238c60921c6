// The trace format, defined once (trace/): every phase has one name, category
// and colour; what the writer writes the reader reads back, event for event;
// the same input gives the same bytes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "models/core/errors.hpp"
#include "tests/trace/files.hpp"
#include "trace/phase.hpp"
#include "trace/reader.hpp"
#include "trace/writer.hpp"

namespace ringsim::trace {
namespace {

TEST(Phase, NamesAreUniqueAndReadBack) {
  std::set<std::string> names;
  for (int i = 0; i < kPhaseCount; ++i) {
    const auto p = static_cast<Phase>(i);
    const std::string n = phase_name(p);
    if (n.empty()) continue;  // the three Other phases keep the file's name
    EXPECT_TRUE(names.insert(n).second) << n;
    EXPECT_EQ(phase_from_name(n, ""), p) << n;
  }
  EXPECT_EQ(names.size(), 13u);
  // Names the format does not list keep their category.
  EXPECT_EQ(phase_from_name("gemm", "compute"), Phase::OtherCompute);
  EXPECT_EQ(phase_from_name("nccl", "comm"), Phase::OtherComm);
  EXPECT_EQ(phase_from_name("x", ""), Phase::Other);
}

TEST(Phase, CategoriesAsTheFormatSaysThem) {
  for (auto p : {Phase::Partial, Phase::Merge, Phase::Dense, Phase::Launch, Phase::Accumulate,
                 Phase::Reduce})
    EXPECT_TRUE(is_compute(p)) << phase_name(p);
  for (auto p : {Phase::Send, Phase::Recv, Phase::Wait, Phase::AllToAll, Phase::AllGather,
                 Phase::ReduceScatter})
    EXPECT_TRUE(is_comm(p)) << phase_name(p);
  EXPECT_EQ(std::string(category_name(phase_category(Phase::Idle))), "idle");
  EXPECT_TRUE(is_collective(Phase::AllGather));
  EXPECT_FALSE(is_collective(Phase::Send));
}

std::vector<Lane> two_lanes() {
  return {{0, 0, "node 0", "device 0"}, {1, 0, "node 0", "device 1"}};
}

std::vector<std::vector<Event>> two_lanes_events() {
  Event part;
  part.phase = Phase::Partial;
  part.pass = Pass::Fwd;
  part.start = 10.5;
  part.dur = 100.25;
  part.entries = 4096;
  part.step = 0;
  part.kv_block = 0;
  part.layer = 0;
  Event send = part;
  send.phase = Phase::Send;
  send.start = 10.5;
  send.dur = 40;
  send.entries = 0;
  send.bytes = 1 << 20;
  send.peer = 1;
  Event gather = send;
  gather.phase = Phase::AllGather;
  gather.round = 1;
  gather.start = 0;
  gather.pass = Pass::Bwd;
  return {{send, part}, {gather}};
}

TEST(Writer, ReaderGetsEveryEventBack) {
  const auto path = temp("roundtrip");
  ASSERT_TRUE(write_trace(path, "--trace", two_lanes(), two_lanes_events(),
                          {{"format", "ringsim-trace-1"}, {"devices", 2}}));
  const auto t = read_trace_file(path);
  ASSERT_EQ(t.events.size(), 3u);
  EXPECT_EQ(t.lane_names.size(), 2u);
  EXPECT_EQ(t.run.devices, 2);
  // Times come back relative to the first event (the gather at 0).
  std::map<Phase, Event> by;
  for (const auto& e : t.events) by[e.phase] = e;
  EXPECT_DOUBLE_EQ(by[Phase::Partial].start, 10.5);
  EXPECT_DOUBLE_EQ(by[Phase::Partial].dur, 100.25);
  EXPECT_EQ(by[Phase::Partial].entries, 4096u);
  EXPECT_EQ(by[Phase::Send].bytes, 1u << 20);
  EXPECT_EQ(by[Phase::Send].peer, 1);
  EXPECT_EQ(by[Phase::AllGather].device, 1);
  EXPECT_EQ(by[Phase::AllGather].pass, Pass::Bwd);
  EXPECT_EQ(t.name_of(by[Phase::Send]), "send");
  std::filesystem::remove(path);
}

TEST(Writer, SameInputSameBytesAndSortedByStartThenName) {
  const auto p1 = temp("a"), p2 = temp("b");
  ASSERT_TRUE(write_trace(p1, "--trace", two_lanes(), two_lanes_events(), {}));
  ASSERT_TRUE(write_trace(p2, "--trace", two_lanes(), two_lanes_events(), {}));
  const auto text = slurp(p1);
  EXPECT_EQ(text, slurp(p2));
  // Device 0's two events start together: "partial" sorts before "send".
  EXPECT_LT(text.find("\"name\": \"partial\""), text.find("\"name\": \"send\""));
  // One process name for the shared pid, then a thread name per lane.
  EXPECT_EQ(text.find("process_name"), text.rfind("process_name"));
  std::filesystem::remove(p1);
  std::filesystem::remove(p2);
}

TEST(Writer, StopLeavesNoFile) {
  const auto path = temp("stopped");
  WriteOptions o;
  o.stop = [] { return true; };
  EXPECT_FALSE(write_trace(path, "--trace", two_lanes(), two_lanes_events(), {}, o));
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Writer, DecimalsAreTheCallersPrecision) {
  const auto path = temp("decimals");
  WriteOptions o;
  o.decimals = 3;
  ASSERT_TRUE(write_trace(path, "--trace", two_lanes(), two_lanes_events(), {}, o));
  EXPECT_NE(slurp(path).find("\"ts\": 10.500, \"dur\": 100.250"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(Reader, RefusesWhatIsNotATrace) {
  EXPECT_THROW(parse_trace("{}"), InputError);
  EXPECT_THROW(parse_trace(R"({"traceEvents": []})"), InputError);
  EXPECT_THROW(parse_trace(R"({"traceEvents": [{"name": "x", "ph": "X", "ts": 1, "dur": -1,
                                              "tid": 0}]})"),
               InputError);
}

}  // namespace
}  // namespace ringsim::trace
