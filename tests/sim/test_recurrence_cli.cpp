// A link-disjoint ring played as a recurrence (`--recurrence on`) against the
// same run on SimGrid's actors (`--recurrence off`): the binary as a child
// process per run (one SimGrid engine per process), every number of --json
// and every --csv row compared; the refusals; one case worked by hand.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "proc/child.hpp"

namespace ringsim {
namespace {

struct Out {
  int exit_code = -1;
  std::string out, err;
};

Out run(std::vector<std::string> args) {
  proc::Command c;
  c.argv = {RINGSIM_BIN};
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  const auto r = proc::run(c);
  return {r.exit_code, r.out, r.err};
}

std::string temp(const std::string& name) {
  return ::testing::TempDir() + "ringsim_rec_" + name + "_" + std::to_string(::getpid());
}

std::vector<std::vector<std::string>> csv_rows(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(f, line);) {
    std::vector<std::string> cells;
    std::stringstream s(line);
    for (std::string cell; std::getline(s, cell, ',');) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

// SimGrid ends an action due within its timing precision (1e-9 s of the
// simulated clock) of another event at that event, so where two events of a
// run nearly coincide its times come out up to a nanosecond early per event;
// the recurrence's arithmetic has no such window. Equal: to 1e-12 relative,
// or within 10 of those nanoseconds (a wrong schedule is off by
// microseconds at least: a step here is 10 us to 1 ms).
constexpr double kPrecisionSlack = 1e-8;
bool close(double a, double b) {
  return std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b)) + kPrecisionSlack;
}

// Text that prints numbers (the verdict): the same words, and each number
// within one unit of the last digit it shows (a time a nanosecond apart may
// round the other way).
bool same_text(const std::string& a, const std::string& b) {
  static const std::regex number("[0-9]+(\\.[0-9]+)?");
  if (std::regex_replace(a, number, "#") != std::regex_replace(b, number, "#")) return false;
  std::sregex_iterator i(a.begin(), a.end(), number), j(b.begin(), b.end(), number), end;
  for (; i != end && j != end; ++i, ++j) {
    const auto x = i->str(), y = j->str();
    const auto dot = x.find('.');
    const double unit = dot == std::string::npos ? 1 : std::pow(10.0, -double(x.size() - dot - 1));
    if (std::fabs(std::stod(x) - std::stod(y)) > unit * 1.001) return false;
  }
  return true;
}

// Every number of `a` against `b`, key by key (the method's name aside; the
// stall counts are held to the CSV rows instead, below).
void expect_same(const nlohmann::json& a, const nlohmann::json& b, const std::string& at,
                 const std::string& shape) {
  if (a.is_object()) {
    for (const auto& [k, v] : a.items()) {
      if (k == "simulation_method" || k == "stalled_device_steps") continue;
      ASSERT_TRUE(b.contains(k)) << shape << ": " << at << "." << k;
      expect_same(v, b.at(k), at + "." + k, shape);
    }
  } else if (a.is_array()) {
    ASSERT_EQ(a.size(), b.size()) << shape << ": " << at;
    for (std::size_t i = 0; i < a.size(); ++i)
      expect_same(a[i], b[i], at + "[" + std::to_string(i) + "]", shape);
  } else if (a.is_number()) {
    EXPECT_TRUE(close(a.get<double>(), b.get<double>()))
        << shape << ": " << at << " " << a << " vs " << b;
  } else if (a.is_string()) {
    EXPECT_TRUE(same_text(a.get<std::string>(), b.get<std::string>()))
        << shape << ": " << at << "\n"
        << a << "\n"
        << b;
  } else {
    EXPECT_EQ(a, b) << shape << ": " << at;
  }
}

std::int64_t stalled_rows(const std::vector<std::vector<std::string>>& rows) {
  return std::count_if(rows.begin() + 1, rows.end(), [](const auto& r) { return r.back() == "1"; });
}

// The CSV rows alike: numbers as above, and the same `stalled` flags except
// where the wait is under SimGrid's precision in both (SimGrid ended it at
// once; the recurrence waited a fraction of a nanosecond).
void expect_same_rows(const std::string& a, const std::string& b, const std::string& shape,
                      std::int64_t stalled[2]) {
  const auto ra = csv_rows(a), rb = csv_rows(b);
  ASSERT_EQ(ra.size(), rb.size()) << shape;
  ASSERT_GT(ra.size(), 1u) << shape;
  ASSERT_EQ(ra[0].back(), "stalled");
  ASSERT_EQ(ra[0][ra[0].size() - 2], "wait_s");
  stalled[0] = stalled_rows(ra);
  stalled[1] = stalled_rows(rb);
  for (std::size_t i = 1; i < ra.size(); ++i) {
    ASSERT_EQ(ra[i].size(), rb[i].size()) << shape << " row " << i;
    const auto last = ra[i].size() - 1;
    for (std::size_t c = 0; c < last; ++c)
      if (ra[i][c] != rb[i][c])
        EXPECT_TRUE(close(std::stod(ra[i][c]), std::stod(rb[i][c])))
            << shape << " row " << i << " column " << ra[0][c] << ": " << ra[i][c] << " vs "
            << rb[i][c];
    if (ra[i][last] != rb[i][last])
      EXPECT_TRUE(std::stod(ra[i][last - 1]) < 1e-9 && std::stod(rb[i][last - 1]) < 1e-9)
          << shape << " row " << i << ": stalled " << ra[i][last] << " vs " << rb[i][last];
  }
}

// The trace's activities ("X" events), keyed by what they are (phase, node,
// args) with their start and length in time order. Left out, each a
// consequence of SimGrid's nanosecond: the track (an event SimGrid ended a
// fraction of a nanosecond early overlaps the next one and moves it to an
// overflow track), waits and idles under 10 ns (a wait SimGrid ended at
// once), a wait's peer (which end of a step's two transfers came last, when
// they end within a nanosecond), and the counters and flows, which the trace
// layout derives from the send and receive events compared here.
using Activities = std::map<std::string, std::vector<std::pair<double, double>>>;
Activities activities(const std::string& path) {
  std::ifstream f(path);
  const auto t = nlohmann::json::parse(f);
  Activities out;
  for (const auto& e : t.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    auto args = e.value("args", nlohmann::json::object());
    const std::string name = e.at("name");
    if (name == "wait" || name == "idle") {
      if (e.at("dur").get<double>() < 0.01) continue;  // microseconds
      args.erase("peer");
    }
    out[name + " " + e.at("pid").dump() + " " + args.dump()].push_back(
        {e.at("ts").get<double>(), e.at("dur").get<double>()});
  }
  for (auto& [k, v] : out) std::sort(v.begin(), v.end());
  return out;
}

void expect_same_trace(const std::string& a, const std::string& b, const std::string& shape) {
  const auto ea = activities(a), eb = activities(b);
  ASSERT_FALSE(ea.empty()) << shape;
  for (const auto& [key, va] : ea) {
    const auto it = eb.find(key);
    ASSERT_NE(it, eb.end()) << shape << ": " << key;
    ASSERT_EQ(va.size(), it->second.size()) << shape << ": " << key;
    for (std::size_t i = 0; i < va.size(); ++i) {
      EXPECT_TRUE(close(va[i].first * 1e-6, it->second[i].first * 1e-6)) << shape << ": " << key;
      EXPECT_TRUE(close(va[i].second * 1e-6, it->second[i].second * 1e-6)) << shape << ": " << key;
    }
  }
  EXPECT_EQ(ea.size(), eb.size()) << shape;
}

TEST(Recurrence, EqualsTheActorsOnLinkDisjointRings) {
  const std::vector<std::vector<std::string>> shapes = {
      {"--devices", "16", "--platform", "flat"},
      {"--devices", "16"},  // H100 nodes (NVLink, rail IB), causal ring, its kernel
      {"--devices", "16", "--no-causal", "--layout", "zigzag", "--pass", "fwdbwd"},
      {"--devices", "32", "--layout", "striped", "--pass", "fwdbwd", "--straggler", "5:2"},
      {"--devices", "16", "--scope", "layer", "--layers", "2", "--pass", "fwdbwd"},
      {"--devices", "16", "--degrade", "nic7:4", "--straggler", "3:1.5"},
      {"--devices", "16", "--jitter", "0.2", "--seed", "3", "--layout", "zigzag"},
      {"--devices", "16", "--overlap", "none", "--pass", "fwdbwd"},
      {"--devices", "32", "--cluster", "dgx-h100", "--pass", "fwdbwd", "--kernel", "fa2"},
      {"--devices", "16", "--platform", "fattree", "--block", "1024"},
      {"--devices", "16", "--platform", "torus2d", "--gpu", "tpu-v5e", "--block", "2048"},
      {"--devices", "64", "--block", "1024", "--kernel", "roofline", "--straggler", "1:2"},
      {"--devices", "8", "--tp", "2", "--pass", "bwd"},  // attention scope: no TP collectives
      {"--devices", "16", "--documents", "dataset:wikipedia", "--layout", "zigzag", "--pack",
       "document", "--pass", "fwdbwd"},
      // A MoE layer's dispatch and combine (--ep): the same timed phase on every device.
      {"--devices", "16", "--model", "qwen3-30b-a3b", "--scope", "layer", "--layers", "2", "--ep",
       "4", "--pass", "fwdbwd"},
  };
  for (const auto& shape : shapes) {
    std::string name;
    for (const auto& a : shape) name += a + " ";
    nlohmann::json j[2];
    const std::string csv[2] = {temp("on.csv"), temp("off.csv")};
    const std::string trace[2] = {temp("on.trace.json"), temp("off.trace.json")};
    for (int i = 0; i < 2; ++i) {
      auto a = shape;
      a.insert(a.end(),
               {"--json", "--csv", csv[i], "--trace", trace[i], "--recurrence", i ? "off" : "on"});
      const auto c = run(a);
      ASSERT_EQ(c.exit_code, 0) << name << c.err;
      j[i] = nlohmann::json::parse(c.out);
    }
    EXPECT_EQ(j[0].at("simulation_method"), "recurrence") << name;
    EXPECT_EQ(j[1].at("simulation_method"), "simgrid") << name;
    expect_same(j[0], j[1], "", name);
    std::int64_t stalled[2] = {0, 0};
    expect_same_rows(csv[0], csv[1], name, stalled);
    for (int i = 0; i < 2; ++i) EXPECT_EQ(j[i].at("stalled_device_steps"), stalled[i]) << name;
    expect_same_trace(trace[0], trace[1], name);
    for (const auto& f : {csv[0], csv[1], trace[0], trace[1]}) std::remove(f.c_str());
  }
}

TEST(Recurrence, HandWorkedStraggler) {
  // 4 devices on a flat ring (one link per hop), non-causal forward, block
  // 4096 on the roofline at 1e15 flop/s: a step computes c = 4 x 4096^2 x 32
  // heads x 128 / 1e15 = 274.877906944 us; a hop moves K and V, 16 MiB, in
  // T = 16777216 / 2e11 + 1 us = 84.88608 us. Device 1 computes 2c. A
  // transfer starts when its sender and receiver have both posted (each at
  // its step's start), so:
  //   step 0: everyone starts at 0; the transfers end at T < c; ends c, 2c, c, c.
  //   step 1: 0->1 and 1->2 wait for device 1 (posted at 2c): end 2c + T, so
  //           devices 0 and 2 end at 2c + T (each waited T); 1 at 4c; 3 at 2c.
  //   step 2: 0->1 and 1->2 start at 4c: devices 0 and 2 (computed until
  //           3c + T) end at 4c + T (waited c); 1 at 6c; 3 at 3c (2c + 2T < 3c).
  //   step 3: no transfer: 1 ends at 8c.
  // Time 8c = 2.199023255552 ms; waits 2T + 2c = 719.527973888 us over 4
  // device-steps at steps 1 and 2; device 1 the critical one.
  const auto c =
      run({"--devices", "4",         "--platform", "flat",        "--no-causal", "--bandwidth",
           "2e11",      "--latency", "1e-6",       "--flops",     "1e15",        "--efficiency",
           "1",         "--block",   "4096",       "--straggler", "1:2",         "--recurrence",
           "on",        "--json"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const auto j = nlohmann::json::parse(c.out);
  EXPECT_EQ(j.at("simulation_method"), "recurrence");
  EXPECT_NEAR(j.at("time_s").get<double>() / 2.199023255552e-3, 1.0, 1e-12);
  EXPECT_NEAR(j.at("wait_s").get<double>() / 719.527973888e-6, 1.0, 1e-12);
  EXPECT_EQ(j.at("stalled_device_steps"), 4);
  EXPECT_EQ(j.at("stalled_steps").at("fwd"), nlohmann::json::array({1, 2}));
  EXPECT_EQ(j.at("critical_device"), 1);
  EXPECT_EQ(j.at("activities"), 4 * 4 + 4 * 3);  // computes and transfers played
}

TEST(Recurrence, RefusesWhatItCannotPlay) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--devices", "16", "--network-model", "lv08"}, "--recurrence on: the lv08 model couples"},
      {{"--devices", "8", "--layout", "ulysses"},
       "--recurrence on: only the ring layouts (ring, striped, zigzag) are recurrences, not "
       "ulysses"},
      {{"--devices", "8", "--dp", "2"}, "--recurrence on: job mode (--dp > 1)"},
      {{"--devices", "16", "--tp", "2", "--scope", "layer"},
       "--recurrence on: --tp with --scope layer adds the TP groups' collectives"},
      {{"--devices", "16", "--symmetry", "on"}, "--recurrence on: --symmetry on"},
  };
  for (const auto& [args, line] : cases) {
    auto a = args;
    a.insert(a.end(), {"--recurrence", "on"});
    const auto c = run(a);
    EXPECT_EQ(c.exit_code, 2) << line;
    EXPECT_EQ(c.err.rfind("ringsim: error: " + line, 0), 0u) << c.err;
    EXPECT_EQ(std::count(c.err.begin(), c.err.end(), '\n'), 1) << c.err;
  }
  // Its own size estimate: 64K devices are 4.3G device-steps, cheap in
  // activities but 16 bytes of recorded waits each.
  const auto big = run({"--devices", "64K", "--block", "1024"});
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_EQ(big.err.rfind("ringsim: error: --max-memory: this simulation needs about 1.34e+08 "
                          "activities",
                          0),
            0u)
      << big.err;
  // Below 1024 devices auto keeps the actors; off always does.
  const auto a = run({"--devices", "16", "--json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(nlohmann::json::parse(a.out).at("simulation_method"), "simgrid");
}

}  // namespace
}  // namespace ringsim
