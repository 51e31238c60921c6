// The trace and CSV files: the format of docs/trace-format.md (checked with
// nlohmann and with the GUI's own reader), ordering, and one CSV row per
// device per step. One simulation per TEST.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "models/core/work.hpp"
#include "sim/trace_writer.hpp"
#include "tests/sim/helpers.hpp"
#include "trace/reader.hpp"
#include "trace/rules.hpp"

namespace ringsim {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "ringsim_" + name + "_" + std::to_string(::getpid());
}

TEST(Trace, FollowsTheFormatAndOpensInTheGuiReader) {
  // 16 devices = two nodes, backward (send, recv, wait, final hop), layer scope (dense).
  auto w = testing::llama3(16, 2048, Layout::Zigzag, true, Pass::FwdBwd);
  w.scope = Scope::Layer;
  const auto hw = testing::catalog_hw("h100-sxm", Platform::Nodes);
  testing::SimRun run;
  run.options = testing::sim_options(w, hw);
  run.options.record_events = true;
  RINGSIM_SIMULATE(run);
  const auto path = temp_path("trace.json");
  {
    AtomicFile f(path, "--trace");
    ASSERT_TRUE(
        sim::write_trace(f, run.result, w, run.options.topology, {{"time_s", run.result.time_s}}));
    f.commit();
  }
  const auto text = slurp(path);
  std::remove(path.c_str());
  const auto j = nlohmann::json::parse(text);
  // Tracks, flows, counters and displayTimeUnit: the trace rules (trace/rules.hpp).
  EXPECT_TRUE(trace::check_rules(j).empty());
  EXPECT_EQ(j.at("otherData").at("ringsim").at("format"), "ringsim-trace-1");
  EXPECT_EQ(j.at("otherData").at("ringsim").at("devices"), 16);
  const std::set<std::string> names{"partial",  "send",      "recv",          "wait",
                                    "alltoall", "allgather", "reducescatter", "dense"};
  std::int64_t last_dev = -1;
  double last_ts = -1;
  std::set<std::string> seen;
  std::uint64_t entries = 0;
  std::map<std::int64_t, std::int64_t> track_device;  // tid -> device (thread_name args)
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") == "M") {
      if (e.at("name") == "thread_name") track_device[e.at("tid")] = e.at("args").at("device");
      continue;
    }
    if (e.at("ph") != "X") continue;  // flows and counters: the rules check them
    const std::string name = e.at("name");
    ASSERT_TRUE(names.count(name)) << name;
    seen.insert(name);
    const auto& a = e.at("args");
    const std::int64_t dev = a.at("device");
    EXPECT_EQ(track_device.at(e.at("tid")), dev);  // one track per device and activity
    EXPECT_EQ(e.at("pid"), dev / 8);               // one process per node
    for (const char* k : {"step", "kv_block", "bytes", "pass"}) EXPECT_TRUE(a.contains(k)) << k;
    EXPECT_GE(e.at("dur").get<double>(), 0);
    // Sorted by device, then start time.
    const double ts = e.at("ts");
    if (dev == last_dev) {
      EXPECT_GE(ts, last_ts);
    }
    EXPECT_GE(dev, last_dev);
    last_dev = dev;
    last_ts = ts;
    if (name == "partial" && a.at("pass") == "fwd") entries += a.at("entries").get<std::uint64_t>();
  }
  for (const char* n : {"partial", "send", "recv", "dense"}) EXPECT_TRUE(seen.count(n)) << n;
  EXPECT_EQ(entries, total_entries(w));  // the kernels' count, per pass
  const auto t = trace::parse_trace(text, "sim trace");
  EXPECT_EQ(t.lane_names.size(), 16u);
}

TEST(Csv, OneRowPerDevicePerStep) {
  const auto w = testing::llama3(8, 2048, Layout::Ring, true, Pass::FwdBwd);
  testing::SimRun run;
  run.options = testing::sim_options(w, testing::flat_hw(1e15, 1e10, 1e-6));
  run.options.record_rows = true;
  RINGSIM_SIMULATE(run);
  const auto path = temp_path("rows.csv");
  {
    AtomicFile f(path, "--csv");
    ASSERT_TRUE(sim::write_csv(f, run.result));
    f.commit();
  }
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  EXPECT_EQ(line,
            "layer,pass,device,step,kv_block,entries,start_s,compute_s,comm_bytes,comm_end_s,end_s,"
            "wait_s,stalled");
  int rows = 0;
  std::uint64_t entries = 0;
  while (std::getline(f, line)) {
    ++rows;
    std::vector<std::string> col;
    std::stringstream s(line);
    for (std::string c; std::getline(s, c, ',');) col.push_back(c);
    ASSERT_EQ(col.size(), 13u) << line;
    const auto d = std::stoll(col[2]), step = std::stoll(col[3]);
    EXPECT_EQ(std::stoll(col[4]), kv_source(w, d, step));
    EXPECT_EQ(std::stoull(col[5]), step_entries(w, d, step));
    if (col[1] == "fwd") entries += std::stoull(col[5]);
  }
  std::remove(path.c_str());
  EXPECT_EQ(rows, 8 * 8 * 2);  // devices x steps x passes
  EXPECT_EQ(entries, total_entries(w));
}

}  // namespace
}  // namespace ringsim
