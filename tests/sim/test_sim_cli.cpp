// `ringsim run` with the SimGrid engine, as a user runs it: the binary as a
// child process (one engine per process), its exit code, output and files.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "proc/child.hpp"

namespace ringsim {
namespace {

struct Child {
  int exit_code = -1;
  int pid = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string temp(const std::string& name) {
  return ::testing::TempDir() + "ringsim_cli_" + name + "_" + std::to_string(::getpid());
}

// ASan prints a three-line notice when SimGrid switches stacks (it is not an
// error report); in sanitizer builds it is dropped so the checks below still
// see exactly what ringsim itself printed.
std::string without_sanitizer_notice(std::string err) {
#ifdef RINGSIM_SANITIZER_BUILD
  for (const char* marker : {"WARNING: ASan is ignoring requested __asan_handle_no_return",
                             "False positive error reports may follow",
                             "For details see https://github.com/google/sanitizers/issues/189"}) {
    const auto at = err.find(marker);
    if (at == std::string::npos) continue;
    const auto begin = err.rfind('\n', at);
    const auto end = err.find('\n', at);
    err.erase(begin == std::string::npos ? 0 : begin + 1,
              (end == std::string::npos ? err.size() : end + 1) -
                  (begin == std::string::npos ? 0 : begin + 1));
  }
#endif
  return err;
}

// `ringsim ARGS` as a child (proc::run); `c` may set a deadline and its signal.
Child run(const std::vector<std::string>& args, proc::Command c = {}) {
  c.argv = {RINGSIM_BIN};
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  const auto r = proc::run(c);
  Child out;
  out.exit_code = r.exit_code;
  out.pid = r.pid;
  out.out = r.out;
  out.err = without_sanitizer_notice(r.err);
  return out;
}

TEST(SimCli, EveryKernelRunsAndTheSummaryNamesIt) {
  // `ringsim hardware --json` lists the implementations; each runs on a
  // device it fits (closed forms), and the summary says which ran.
  const auto h = run({"hardware", "--json"});
  ASSERT_EQ(h.exit_code, 0) << h.err;
  const auto j = nlohmann::json::parse(h.out);
  std::set<std::string> names;
  for (const auto& k : j.at("kernels")) names.insert(k.at("name").get<std::string>());
  for (const char* k : {"fa2", "fa3", "cudnn", "te-cudnn", "pallas", "ringsim-cpu", "roofline"})
    EXPECT_TRUE(names.count(k)) << k;
  for (const auto& d : j.at("devices")) EXPECT_TRUE(names.count(d.at("default_kernel"))) << d;
  for (const auto& k : names) {
    if (k == "ringsim-cuda") continue;  // needs a GPU profile (docs/bad-input.md)
    std::vector<std::string> a{"--devices", "4",        "--block", "2048",  "--engine",
                               "analytic",  "--kernel", k,         "--json"};
    if (k == "pallas") a.insert(a.end(), {"--gpu", "tpu-v5p"});
    if (k == "ringsim-cpu") a.insert(a.end(), {"--dtype", "fp32"});
    const auto r = run(a);
    ASSERT_EQ(r.exit_code, 0) << k << ": " << r.err;
    const auto s = nlohmann::json::parse(r.out);
    EXPECT_EQ(s.at("kernel"), k);
    EXPECT_GT(s.at("time_s").get<double>(), 0) << k;
  }
  // The device's default, and the roofline when --efficiency is given.
  EXPECT_EQ(nlohmann::json::parse(run({"--engine", "analytic", "--json"}).out).at("kernel"),
            "cudnn");
  EXPECT_EQ(
      nlohmann::json::parse(run({"--engine", "analytic", "--efficiency", "0.5", "--json"}).out)
          .at("kernel"),
      "roofline");
}

TEST(SimCli, DefaultRunShowsSimulatedAndAnalyticSideBySide) {
  const auto c = run({"--devices", "64", "--block", "4096"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("simulated         analytic"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("simulated / analytic"), std::string::npos);
  // The links by their catalog names and bandwidths (h100 cluster: NVLink 4, IB NDR).
  EXPECT_NE(c.out.find("on a nvlink4 switch (450.0 GB/s/dir)"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("rail-optimised ib-ndr network (50.0 GB/s/dir;"), std::string::npos)
      << c.out;
  EXPECT_TRUE(c.err.empty()) << c.err;
}

TEST(SimCli, JsonKeepsTheAnalyticKeys) {
  const auto sim = run({"--devices", "32", "--block", "2048", "--json"});
  const auto ana = run({"--devices", "32", "--block", "2048", "--json", "--engine", "analytic"});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  ASSERT_EQ(ana.exit_code, 0) << ana.err;
  const auto s = nlohmann::json::parse(sim.out), a = nlohmann::json::parse(ana.out);
  for (const auto& [k, v] : a.items()) EXPECT_TRUE(s.contains(k)) << k;
  EXPECT_EQ(s.at("engine"), "simgrid");
  EXPECT_EQ(a.at("engine"), "analytic");
  EXPECT_EQ(s.at("analytic_time_s"), a.at("time_s"));
  for (const char* k : {"stalled_steps", "critical_device", "platform", "network_model", "faults"})
    EXPECT_TRUE(s.contains(k)) << k;
}

TEST(SimCli, IdenticalInputsGiveByteIdenticalFiles) {
  std::vector<std::string> out[2];
  for (int i = 0; i < 2; ++i) {
    const auto trace = temp("trace" + std::to_string(i)), csv = temp("csv" + std::to_string(i));
    const auto c =
        run({"--devices", "16",       "--block", "2048",    "--pass", "fwdbwd",      "--layout",
             "zigzag",    "--jitter", "0.2",     "--seed",  "11",     "--straggler", "3:1.5",
             "--degrade", "nic7:2",   "--json",  "--trace", trace,    "--csv",       csv});
    ASSERT_EQ(c.exit_code, 0) << c.err;
    out[i] = {c.out, slurp(trace), slurp(csv)};
    std::remove(trace.c_str());
    std::remove(csv.c_str());
  }
  EXPECT_GT(out[0][1].size(), 1000u);
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(out[0][k] == out[1][k]) << "output " << k << " differs";
}

// An output on standard output (`-` or /dev/stdout) gets the stream to
// itself: the report moves to stderr, so `ringsim --csv - | tool` reads CSV only.
TEST(SimCli, DataOnStandardOutputMovesTheReportToStderr) {
  for (const char* where : {"-", "/dev/stdout"}) {
    const auto c = run({"--devices", "4", "--block", "1024", "--json", "--csv", where});
    ASSERT_EQ(c.exit_code, 0) << c.err;
    EXPECT_EQ(c.out.rfind("layer,pass,device,step", 0), 0u) << where << ": " << c.out.substr(0, 80);
    EXPECT_EQ(c.out.find('{'), std::string::npos) << where << ": the JSON report is mixed in";
    const auto j = nlohmann::json::parse(c.err.substr(c.err.find('{')));
    EXPECT_EQ(j.at("devices"), 4) << where;
  }
}

TEST(SimCli, SizeGuardRefusesAndSuggestsTheAnalyticEngine) {
  const auto c = run({"--devices", "64K", "--block", "1024", "--recurrence", "off"});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_EQ(c.err.rfind("ringsim: error: --max-activities: ", 0), 0u) << c.err;
  EXPECT_NE(c.err.find("--engine analytic"), std::string::npos) << c.err;
  EXPECT_EQ(std::count(c.err.begin(), c.err.end(), '\n'), 1) << c.err;
  EXPECT_TRUE(c.out.empty());
}

TEST(SimCli, BadSimulatorFlagsGiveOneLineAndExitTwo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> rows = {
      {{"--devices", "8", "--straggler", "8:2"}, "--straggler"},
      {{"--devices", "8", "--straggler", "1:-2"}, "--straggler"},
      {{"--devices", "8", "--degrade", "nope:2"}, "--degrade: unknown link 'nope'"},
      {{"--devices", "8", "--network-model", "fast"}, "--network-model"},
      {{"--devices", "8", "--inter-topology", "mesh"}, "--inter-topology"},
      {{"--devices", "8", "--engine", "analytic", "--trace", "x.json"},
       "--trace: needs the simulator"},
      {{"--devices", "16", "--gpu", "tpu-v5e", "--torus-dims", "3x3"}, "--torus-dims"},
      {{"--devices", "16", "--torus-dims", "4x4"}, "--torus-dims: only applies"},
      {{"--devices", "8", "--jitter", "-1"}, "--jitter"},
      {{"--devices", "8", "--trace", "/nonexistent-dir/t.json"}, "--trace: cannot write"},
  };
  for (const auto& [args, expect] : rows) {
    const auto c = run(args);
    EXPECT_EQ(c.exit_code, 2) << args.back();
    EXPECT_NE(c.err.find("ringsim: error: " + expect), std::string::npos) << c.err;
    EXPECT_EQ(std::count(c.err.begin(), c.err.end(), '\n'), 1) << c.err;
  }
}

TEST(SimCli, SymmetricRunMatchesTheFullSimulation) {
  // One period of a uniform ring (--symmetry on) against every device
  // (--symmetry off): the same time, compute-bound and comm-bound, on each
  // platform kind. Tolerance 1e-12: the two runs add the same durations in
  // the same order; only SimGrid's event bookkeeping differs.
  // Causal zigzag is uniform only where both of its chunk shapes run at one
  // rate per pair (the roofline); a kernel's curves make them differ.
  const std::vector<std::vector<std::string>> cases = {
      {"--devices", "64", "--block", "4096", "--layout", "zigzag", "--pass", "fwdbwd", "--kernel",
       "roofline"},
      {"--devices", "64", "--block", "1024", "--layout", "zigzag", "--kernel",
       "roofline"},  // comm-bound on IB
      {"--devices", "32", "--block", "2048", "--no-causal", "--platform", "flat", "--pass", "bwd"},
      {"--devices", "16", "--block", "2048", "--layout", "zigzag", "--gpu", "tpu-v5e", "--kernel",
       "roofline"},
      {"--devices", "24", "--block", "2048", "--no-causal", "--layout", "striped", "--platform",
       "fattree"},
      {"--devices", "64", "--block", "2048", "--layout", "zigzag", "--inter-topology", "fattree",
       "--kernel", "roofline"},
      {"--devices", "64", "--block", "4096", "--no-causal", "--pass", "fwdbwd"},  // cudnn, nodes
  };
  for (const auto& args : cases) {
    double t[2] = {0, 0};
    std::int64_t simulated[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
      auto a = args;
      a.insert(a.end(), {"--json", "--symmetry", i ? "off" : "on"});
      const auto c = run(a);
      ASSERT_EQ(c.exit_code, 0) << c.err;
      const auto j = nlohmann::json::parse(c.out);
      t[i] = j.at("time_s");
      simulated[i] = j.at("simulated_devices");
    }
    EXPECT_LT(simulated[0], simulated[1]) << args[1];
    EXPECT_NEAR(t[0] / t[1], 1.0, 1e-12) << args[1] << " " << args[3];
  }
  // Not symmetric: causal ring (device i works on i+1 blocks), lv08 (coupled hops),
  // causal zigzag under a kernel whose two chunk shapes run at different rates.
  EXPECT_EQ(run({"--devices", "64", "--symmetry", "on"}).exit_code, 2);
  const auto zz = run({"--devices", "64", "--layout", "zigzag", "--kernel", "fa2", "--gpu",
                       "a100-80gb", "--symmetry", "on"});
  EXPECT_EQ(zz.exit_code, 2);
  EXPECT_NE(zz.err.find("cost differently under fa2"), std::string::npos) << zz.err;
  EXPECT_EQ(
      run({"--devices", "64", "--layout", "zigzag", "--network-model", "lv08", "--symmetry", "on"})
          .exit_code,
      2);
}

TEST(SimCli, CtrlCStopsAndKeepsTheOldFile) {
  // A run of many seconds, interrupted early by Ctrl-C, `kill` or a closed
  // terminal: exit 130, the previous trace untouched, no temporary file left.
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    SCOPED_TRACE(sig);
    const auto trace = temp("keep.json"), csv = temp("keep.csv");
    { std::ofstream(trace) << "old"; }
    { std::ofstream(csv) << "old csv"; }
    proc::Command stop;
    // Late enough that the handler is surely installed (an ASan build on a
    // loaded 2-core machine took over 0.7 s to start), far before the run's
    // end (about 90 s in a Release build).
    stop.timeout_s = 3;
    stop.stop_signal = sig;
    stop.kill_grace_s = 60;
    const auto c = run({"--devices", "2048", "--block", "4096", "--platform", "flat", "--trace",
                        trace, "--csv", csv, "--max-memory", "64G"},
                       stop);
    EXPECT_EQ(c.exit_code, 130) << c.err;
    EXPECT_NE(c.err.find("interrupted"), std::string::npos) << c.err;
    EXPECT_EQ(slurp(trace), "old");
    EXPECT_EQ(slurp(csv), "old csv");  // both outputs or neither
    EXPECT_EQ(access((trace + ".tmp" + std::to_string(c.pid)).c_str(), F_OK), -1);
    EXPECT_EQ(access((csv + ".tmp" + std::to_string(c.pid)).c_str(), F_OK), -1);
    std::remove(trace.c_str());
    std::remove(csv.c_str());
  }
}

// The one verdict (docs/models.md, "The verdict"): what a summary's keys must
// say together, in either engine.
void expect_one_verdict(const nlohmann::json& j, const std::string& what) {
  const auto& v = j.at("verdict");
  const double exposed = v.at("exposed_comm_s"), tol = v.at("tolerance_s");
  const double time = j.at("time_s");
  EXPECT_EQ(v.at("hidden"), j.at("overlapped")) << what;
  EXPECT_DOUBLE_EQ(exposed, j.at("exposed_comm_s").get<double>()) << what;
  EXPECT_EQ(v.at("hidden").get<bool>(), exposed <= tol) << what;
  EXPECT_DOUBLE_EQ(tol, 1e-6 * time) << what;
  if (v.at("hidden").get<bool>()) {
    EXPECT_TRUE(v.at("stalled_steps").empty()) << what;
  }
  double sum = 0;
  for (const auto& [k, x] : v.at("exposed_by_source").items()) {
    EXPECT_GE(x.get<double>(), 0) << what << " " << k;
    sum += x.get<double>();
  }
  EXPECT_NEAR(sum, exposed, 1e-9 * time) << what;
  EXPECT_LE(v.at("lightest_step_compute_s").get<double>(),
            v.at("heaviest_step_compute_s").get<double>())
      << what;
  EXPECT_GT(v.at("lightest_step_compute_s").get<double>(), 0) << what;
  EXPECT_EQ(v.at("min_block"), j.at("min_block")) << what;
  EXPECT_FALSE(v.at("text").get<std::string>().empty()) << what;
}

// Both engines' summaries of one configuration.
std::pair<nlohmann::json, nlohmann::json> both_engines(std::vector<std::string> args) {
  args.push_back("--json");
  const auto s = run(args);
  args.insert(args.end(), {"--engine", "analytic"});
  const auto a = run(args);
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(a.exit_code, 0) << a.err;
  return {nlohmann::json::parse(s.out), nlohmann::json::parse(a.out)};
}

TEST(SimCli, FwdBwdVerdictUsesTheBackwardMinBlockInBothEngines) {
  // Issue 18's first example: the forward min block was printed while the
  // backward ring (K, V and fp32 dK/dV) needs more; "hidden: yes" sat beside
  // exposed time. Now: one min block, the larger; hidden in neither engine,
  // and the exposed time is attributed (the final dK/dV hop at least).
  const auto [s, a] = both_engines(
      {"--devices", "16", "--block", "7168", "--layout", "zigzag", "--pass", "fwdbwd"});
  expect_one_verdict(s, "simgrid");
  expect_one_verdict(a, "analytic");
  for (const auto* j : {&s, &a}) {
    const auto& v = j->at("verdict");
    const auto fwd = v.at("min_block_by_pass").at("fwd").get<std::int64_t>();
    const auto bwd = v.at("min_block_by_pass").at("bwd").get<std::int64_t>();
    EXPECT_GT(bwd, fwd);
    EXPECT_EQ(v.at("min_block").get<std::int64_t>(), bwd);
    EXPECT_FALSE(v.at("hidden").get<bool>());
    EXPECT_GT(v.at("exposed_by_source").at("final_hop").get<double>(), 0);
    EXPECT_EQ(v.at("heaviest_step").at("pass"), "bwd");
  }
  // The same analytic inputs: the verdicts' min blocks are the same numbers.
  EXPECT_EQ(s.at("verdict").at("min_block_by_pass"), a.at("verdict").at("min_block_by_pass"));
  // The text says it once, per pass.
  const auto t = run({"--devices", "16", "--block", "7168", "--layout", "zigzag", "--pass",
                      "fwdbwd", "--engine", "analytic"});
  const auto fwd = a.at("verdict").at("min_block_by_pass").at("fwd").get<std::int64_t>();
  const auto bwd = a.at("verdict").at("min_block_by_pass").at("bwd").get<std::int64_t>();
  EXPECT_NE(t.out.find(
                fmt::format("min block to hide comm    {} tokens (fwd {}, bwd {})", bwd, fwd, bwd)),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("communication hidden      no"), std::string::npos) << t.out;
}

TEST(SimCli, UlyssesVerdictNamesTheCollectivesNotStalls) {
  // Issue 18's second example: "hidden: no", "exposed 1.742 ms" and
  // "stalled steps: none" together. Now the exposed time is the all-to-alls',
  // no step stalls in either engine, and the sentence says so.
  const auto [s, a] = both_engines(
      {"--devices", "8", "--layout", "ulysses", "--platform", "flat", "--bandwidth", "1e11"});
  expect_one_verdict(s, "simgrid");
  expect_one_verdict(a, "analytic");
  for (const auto* j : {&s, &a}) {
    const auto& v = j->at("verdict");
    EXPECT_FALSE(v.at("hidden").get<bool>());
    EXPECT_TRUE(v.at("stalled_steps").empty());
    EXPECT_TRUE(v.at("min_block").is_null());
    // The all-to-alls are (nearly) all of it: interference is none here, the
    // rest rounding.
    EXPECT_NEAR(v.at("exposed_by_source").at("collectives").get<double>(),
                v.at("exposed_comm_s").get<double>(), 1e-6 * j->at("time_s").get<double>());
    EXPECT_NE(v.at("text").get<std::string>().find("Ulysses all-to-alls"), std::string::npos)
        << v.at("text");
  }
  const auto t =
      run({"--devices", "8", "--layout", "ulysses", "--platform", "flat", "--bandwidth", "1e11"});
  EXPECT_NE(t.out.find("stalled steps             none              none"), std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("communication hidden      no                no"), std::string::npos)
      << t.out;
}

TEST(SimCli, DefaultRunVerdictExplainsComputeAboveTransfer) {
  // Issue 18's third example: compute per step above the transfer, yet not
  // hidden. The lightest step (the causal diagonal, half a block) is printed
  // beside the heaviest and the exposed time is attributed to a source in
  // both engines, the same sources (the numbers may differ slightly).
  const auto [s, a] = both_engines({"--devices", "256", "--block", "4096"});
  expect_one_verdict(s, "simgrid");
  expect_one_verdict(a, "analytic");
  std::set<std::string> kinds[2];
  int i = 0;
  for (const auto* j : {&s, &a}) {
    const auto& v = j->at("verdict");
    EXPECT_FALSE(v.at("hidden").get<bool>());
    EXPECT_EQ(v.at("lightest_step").at("step"), 0);
    EXPECT_NEAR(v.at("lightest_step_compute_s").get<double>() /
                    v.at("heaviest_step_compute_s").get<double>(),
                0.5, 0.15);
    const double exposed = v.at("exposed_comm_s");
    for (const auto& [k, x] : v.at("exposed_by_source").items())
      if (x.get<double>() > 0.01 * exposed) kinds[i].insert(k);
    ++i;
  }
  EXPECT_EQ(kinds[0], kinds[1]);
  EXPECT_FALSE(kinds[1].empty());
  EXPECT_NEAR(s.at("exposed_comm_s").get<double>() / a.at("exposed_comm_s").get<double>(), 1.0,
              0.05);
}

TEST(SimCli, HeaderNamesTheProfileDeviceAndTheLinksInUse) {
  // A CPU profile computes: the header names its device, not the catalog's
  // H100; --intra/--inter: the links by name and bandwidth, not "NVLink"/"IB".
  const auto p =
      run({"--devices", "4", "--block", "1024", "--dtype", "fp32", "--profile",
           std::string(RINGSIM_SOURCE_DIR) + "/models/profiles/cpu-amd-epyc-avx512-2026-12-01.json",
           "--engine", "analytic"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const auto hw_line = p.out.substr(p.out.find("  hardware"));
  const auto line = hw_line.substr(0, hw_line.find('\n'));
  EXPECT_NE(line.find("(measured profile)"), std::string::npos) << line;
  EXPECT_EQ(line.find("h100"), std::string::npos) << line;
  const auto l =
      run({"--devices", "16", "--block", "2048", "--intra", "nvlink3", "--inter", "ib-hdr"});
  ASSERT_EQ(l.exit_code, 0) << l.err;
  EXPECT_NE(l.out.find("8 per node on nvlink3 (300.0 GB/s/dir), nodes on ib-hdr (25.0 GB/s/dir)"),
            std::string::npos)
      << l.out;
  EXPECT_NE(l.out.find("on a nvlink3 switch (300.0 GB/s/dir)"), std::string::npos) << l.out;
  EXPECT_NE(l.out.find("rail-optimised ib-hdr network (25.0 GB/s/dir;"), std::string::npos)
      << l.out;
  EXPECT_EQ(l.out.find("NVLink switch"), std::string::npos) << l.out;
  EXPECT_EQ(l.out.find(" IB "), std::string::npos) << l.out;
}

TEST(SimCli, MinblockSelectionAndOneJsonShape) {
  // --gpu/--inter choose the rows: only those (no paper table); the JSON has
  // the same keys whether rows were chosen, all shown or given by hand.
  auto keys = [](const nlohmann::json& j) {
    std::set<std::string> k;
    for (const auto& [key, v] : j.items()) k.insert(key);
    return k;
  };
  const auto all = run({"minblock", "--json"});
  const auto sel = run({"minblock", "--gpu", "a100-80gb", "--inter", "ib-hdr", "--json"});
  const auto pair = run({"minblock", "--flops", "989e12", "--bandwidth", "50e9", "--json"});
  for (const auto* c : {&all, &sel, &pair}) ASSERT_EQ(c->exit_code, 0) << c->err;
  const auto ja = nlohmann::json::parse(all.out), js = nlohmann::json::parse(sel.out),
             jp = nlohmann::json::parse(pair.out);
  EXPECT_EQ(keys(ja), keys(js));
  EXPECT_EQ(keys(ja), keys(jp));
  EXPECT_EQ(keys(ja.at("rows").at(0)), keys(js.at("rows").at(0)));
  EXPECT_EQ(keys(ja.at("rows").at(0)), keys(jp.at("rows").at(0)));
  EXPECT_FALSE(ja.at("paper_table2").empty());
  EXPECT_GT(ja.at("rows").size(), 1u);
  ASSERT_EQ(js.at("rows").size(), 1u);
  EXPECT_EQ(js.at("rows").at(0).at("device"), "a100-80gb");
  EXPECT_EQ(js.at("rows").at(0).at("interconnect"), "ib-hdr");
  EXPECT_TRUE(js.at("paper_table2").empty());
  ASSERT_EQ(jp.at("rows").size(), 1u);
  // c = F/B = 989e12 / 50e9 = 19780 tokens.
  EXPECT_DOUBLE_EQ(jp.at("rows").at(0).at("paper").get<double>(), 19780.0);
  EXPECT_EQ(jp.at("selection").at("by_hand"), true);
  // One row: its minimum at the top too, as the README shows; several: null.
  EXPECT_DOUBLE_EQ(jp.at("min_block").get<double>(), 19780.0);
  EXPECT_DOUBLE_EQ(jp.at("min_seq_per_device").get<double>(), 6 * 19780.0);
  EXPECT_EQ(js.at("min_block"), js.at("rows").at(0).at("paper"));
  EXPECT_TRUE(ja.at("min_block").is_null());
  EXPECT_TRUE(ja.at("min_seq_per_device").is_null());
  // The text: the chosen row only.
  const auto t = run({"minblock", "--gpu", "a100-80gb", "--inter", "ib-hdr"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.out.find("Table 2"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("a100-80gb     ib-hdr"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("h100-sxm"), std::string::npos) << t.out;
}

TEST(SimCli, MinblockFwdbwdIsTheLargerPassAsRunSays) {
  // zigzag's backward needs a larger block than its forward on this pair;
  // minblock's combined column for fwdbwd is the run's verdict (both passes).
  const std::vector<std::string> pair = {"--flops",   "989e12", "--bandwidth",  "50e9",
                                         "--latency", "3e-6",   "--efficiency", "0.6",
                                         "--layout",  "zigzag"};
  auto with = [&](std::vector<std::string> head, std::vector<std::string> tail) {
    head.insert(head.end(), pair.begin(), pair.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return run(head);
  };
  const auto m = with({"minblock"}, {"--pass", "fwdbwd", "--json"});
  const auto f = with({"minblock"}, {"--pass", "fwd", "--json"});
  const auto r = with({"--devices", "64", "--platform", "flat"},
                      {"--pass", "fwdbwd", "--engine", "analytic", "--json"});
  for (const auto* c : {&m, &f, &r}) ASSERT_EQ(c->exit_code, 0) << c->err;
  const auto jm = nlohmann::json::parse(m.out), jf = nlohmann::json::parse(f.out),
             jr = nlohmann::json::parse(r.out);
  const auto verdict = jr.at("verdict");
  const auto fwd = verdict.at("min_block_by_pass").at("fwd").get<std::int64_t>(),
             bwd = verdict.at("min_block_by_pass").at("bwd").get<std::int64_t>();
  ASSERT_GT(bwd, fwd) << "this pair no longer tells the passes apart";
  EXPECT_EQ(jm.at("rows").at(0).at("combined").get<std::int64_t>(), bwd);
  EXPECT_EQ(jf.at("rows").at(0).at("combined").get<std::int64_t>(), fwd);
}

TEST(SimCli, VerdictNamesCausalImbalanceAndZigzagInBothEngines) {
  // 8 H100 x 4K, causal contiguous ring: the last device computes every step
  // while the first idles, so imbalance is the largest loss and zigzag the fix.
  const auto r = run({"--devices", "8", "--block", "4096", "--layout", "ring", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto v = nlohmann::json::parse(r.out).at("verdict");
  EXPECT_EQ(v.at("largest_loss"), "imbalance") << v.dump(1);
  EXPECT_NE(v.at("fix").get<std::string>().find("use zigzag"), std::string::npos);
  const auto a = run(
      {"--devices", "8", "--block", "4096", "--layout", "ring", "--engine", "analytic", "--json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(nlohmann::json::parse(a.out).at("verdict").at("largest_loss"), "imbalance");
  // Zigzag removes it: whatever leads now, it is not imbalance.
  const auto z = run({"--devices", "8", "--block", "4096", "--layout", "zigzag", "--engine",
                      "analytic", "--json"});
  ASSERT_EQ(z.exit_code, 0) << z.err;
  EXPECT_NE(nlohmann::json::parse(z.out).at("verdict").at("largest_loss"), "imbalance");
}

TEST(SimCli, TheAnalyticColumnSaysItLeavesOutFaults) {
  const auto f = run({"--devices", "8", "--block", "4096", "--straggler", "3:2"});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_NE(f.out.find("analytic (no faults)"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("(the analytic column leaves out the faults)"), std::string::npos);
  const auto n = run({"--devices", "8", "--block", "4096"});
  ASSERT_EQ(n.exit_code, 0) << n.err;
  EXPECT_EQ(n.out.find("no faults"), std::string::npos) << n.out;
}

TEST(SimCli, LongSimulatedCellsKeepTheirDistanceFromTheAnalyticOne) {
  // "fwd 0-14; bwd 0-14" fills the simulated column's 18 characters: it used
  // to run into the analytic cell ("... bwd 11-62none"); two blanks now.
  const auto r = run({"--devices", "16", "--block", "2048", "--layout", "zigzag", "--pass",
                      "fwdbwd", "--degrade", "3-4:2", "--kernel", "roofline"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  stalled steps", 0) != 0) continue;
    const auto sim = line.substr(28);  // after the 2 + 26 columns of the label
    const auto gap = sim.find("  ");
    ASSERT_NE(gap, std::string::npos) << line;
    EXPECT_GE(gap, 18u) << "this case no longer fills the column: " << line;
    EXPECT_NE(sim.find_first_not_of(' ', gap), std::string::npos) << line;
    return;
  }
  ADD_FAILURE() << "no stalled steps row:\n" << r.out;
}

TEST(SimCli, MoeLayerWithExpertParallelismAgreesInBothEnginesAndTracesItsAllToAlls) {
  // Mixtral's layer on 8 CP ranks of TP 2, EP 4: the experts in the layer's
  // compute and the dispatch and combine exposed, the same in both engines;
  // the trace shows one all-to-all event per device, layer and pass.
  const std::vector<std::string> args{
      "--model", "mixtral-8x7b", "--scope",  "layer", "--devices", "8",
      "--block", "2048",         "--tp",     "2",     "--ep",      "4",
      "--pass",  "fwdbwd",       "--layers", "2"};
  const auto [s, a] = both_engines(args);
  EXPECT_NEAR(s.at("time_s").get<double>(), a.at("time_s").get<double>(),
              1e-9 * a.at("time_s").get<double>());
  EXPECT_NEAR(s.at("ep_comm_s").get<double>(), a.at("ep_comm_s").get<double>(),
              1e-9 * a.at("ep_comm_s").get<double>());
  EXPECT_GT(a.at("ep_comm_s").get<double>(), 0);
  for (const auto* j : {&s, &a}) {
    const auto& m = j->at("moe");
    EXPECT_EQ(m.at("ep"), 4);
    EXPECT_EQ(m.at("expert_tp"), 2);
    EXPECT_EQ(m.at("experts"), 8);
    EXPECT_GE(m.at("imbalance").get<double>(), 1.0);
    // 2048 tokens / TP 2 x 2 copies x 4096 x 2 B.
    EXPECT_EQ(m.at("alltoall_bytes_per_gpu").get<double>(), 1024.0 * 2 * 4096 * 2);
    EXPECT_GT(j->at("verdict").at("exposed_by_source").at("ep_alltoalls").get<double>(), 0);
  }
  // TP 1, EP 4: the closed forms' baseline ratio counts the dispatch as the
  // simulator's does.
  const auto [s1, a1] = both_engines({"--model", "mixtral-8x7b", "--scope", "layer", "--devices",
                                      "8", "--block", "2048", "--ep", "4"});
  EXPECT_GT(a1.at("ep_comm_s").get<double>(), 0);
  EXPECT_NEAR(s1.at("efficiency_vs_single_device").get<double>(),
              a1.at("efficiency_vs_single_device").get<double>(), 1e-9);
  // Job mode's FSDP flows gather a dense layer: refused with EP.
  const auto job = run(
      {"--model", "mixtral-8x7b", "--scope", "layer", "--devices", "4", "--ep", "2", "--dp", "2"});
  EXPECT_EQ(job.exit_code, 2);
  EXPECT_NE(job.err.find("--dp: job mode"), std::string::npos) << job.err;
  // A dense model has none.
  const auto d = run({"--devices", "8", "--scope", "layer", "--engine", "analytic", "--json"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_TRUE(nlohmann::json::parse(d.out).at("moe").is_null());
  // The trace: 8 devices x 2 layers x 2 passes dispatch events.
  const auto trace = temp("moe_trace.json");
  auto t = args;
  t.insert(t.end(), {"--trace", trace});
  const auto r = run(t);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto events = nlohmann::json::parse(slurp(trace)).at("traceEvents");
  int a2a = 0;
  for (const auto& e : events)
    if (e.value("name", "") == "alltoall") ++a2a;
  EXPECT_EQ(a2a, 8 * 2 * 2);
  std::remove(trace.c_str());
}

}  // namespace
}  // namespace ringsim
