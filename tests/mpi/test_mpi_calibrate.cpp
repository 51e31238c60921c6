// `ringsim calibrate` end to end, for its interface only: the JSON keys users'
// scripts read (runs: [{config, predicted_s, measured_s}]), the traces it keeps
// and its bad input. How close the prediction comes is a benchmark
// (mpi_calibrate_quick, `ctest -L bench`; README figures), never asserted.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "proc/child.hpp"
#include "tests/mpi/mpirun.hpp"

namespace ringsim::mpi::test {
namespace {

MpiRun run_ringsim(const std::string& args) {
  auto argv = words(args);
  argv.insert(argv.begin(), RINGSIM_BIN);
  return run_command(std::move(argv));
}

TEST(Calibrate, JsonHasEveryConfigurationPredictedAndMeasured) {
  const auto work = scratch_dir("calibrate-work");
  const auto r = run_ringsim(
      "calibrate --ranks 2 --quick --json --launches 1 --repeat 1 "
      "--retries 0 --mpi-bin " RINGSIM_MPI_BIN " --workdir " +
      work.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"], 2);
  const auto overlap = j["platform"]["overlap"].get<std::string>();
  EXPECT_TRUE(overlap == "none" || overlap == "full") << overlap;
  EXPECT_NE(j["platform"]["flags"].get<std::string>().find("--overlap " + overlap),
            std::string::npos);
  EXPECT_EQ(j["pingpongs"].size(), 4u);  // one before each launch: 1 round x 4 configurations
  ASSERT_EQ(j["runs"].size(), 4u);
  std::vector<std::string> names;
  for (const auto& run : j["runs"]) {
    names.push_back(run["config"]["name"]);
    ASSERT_TRUE(run["predicted_s"].is_number()) << run.dump();
    EXPECT_GT(run["predicted_s"].get<double>(), 0);
    EXPECT_GT(run["measured_s"].get<double>(), 0);
    EXPECT_NEAR(run["error"].get<double>(),
                run["predicted_s"].get<double>() / run["measured_s"].get<double>() - 1, 1e-12);
    ASSERT_EQ(run["launches"].size(), 1u);
    const auto& l = run["launches"][0];
    EXPECT_EQ(l["predicted_s"], run["predicted_s"]);  // one launch: it is the row
    EXPECT_EQ(l["measured_s"], run["measured_s"]);
    // The line's intercept: 0 where it comes out negative (without single-copy
    // transfers, as here in tests, larger messages pipeline), never below.
    EXPECT_GE(l["ring_step_latency_s"].get<double>(), 0);
    EXPECT_GT(l["ring_step_bandwidth_Bps"].get<double>(), 0);
    EXPECT_TRUE(run["predicted_other_overlap_s"].is_number());
    for (const auto& t : run["traces"])
      EXPECT_TRUE(std::filesystem::exists(t.get<std::string>())) << t;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"compute-bound", "causal-zigzag", "comm-heavy",
                                             "comm-bound"}));
  // The machine's noise, measured before anything else.
  EXPECT_EQ(j["noise"]["samples"], 40);
  EXPECT_GT(j["noise"]["sample_s"].get<double>(), 0);
  EXPECT_GE(j["noise"]["spread"].get<double>(), 0);
  EXPECT_GT(j["noise"]["contention"].get<double>(), 0);
  std::filesystem::remove_all(work);
}

TEST(Calibrate, MaxNoiseRefusesANoisyMachineBeforeMeasuring) {
  // No machine times the same work 40 times to exactly the same nanosecond:
  // a limit of 0 refuses every machine, before any MPI launch.
  const auto r =
      run_ringsim("calibrate --ranks 2 --quick --max-noise 0 --mpi-bin " RINGSIM_MPI_BIN);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--max-noise 0: this machine's timing noise is"), std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(Calibrate, BadInputOneLineExit2) {
  for (const auto* args :
       {"calibrate --launches 0", "calibrate --ranks 1",
        "calibrate --mpi-bin /nonexistent/ringsim-mpi", "calibrate --max-noise 2"}) {
    const auto r = run_ringsim(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("ringsim: error: ", 0), 0u) << r.err;
  }
}

// A thousand ranks on a few cores is refused before any process starts
// (more than 4 per core without --oversubscribe), however many cores there are.
TEST(Calibrate, RanksBeyondTheCoresAreRefusedBeforeLaunching) {
  const auto cores = std::max(1u, std::thread::hardware_concurrency());
  if (4 * cores >= 1024) GTEST_SKIP() << "SKIPPED: " << cores << " cores run 1024 ranks";
  const auto r = run_ringsim("calibrate --ranks 1024");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--ranks: 1024 ranks on"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--oversubscribe"), std::string::npos) << r.err;
}

// Processes of process group `pgid` still running (zombies are dead: only
// waiting for a parent that is gone to be reaped by init).
std::vector<std::string> running_in_group(int pgid) {
  std::vector<std::string> alive;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::ifstream stat(e.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid pgrp ...: comm may hold spaces, so read after ')'.
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    char state = 0;
    int ppid = 0, pgrp = 0;
    rest >> state >> ppid >> pgrp;
    if (pgrp == pgid && state != 'Z') alive.push_back(line.substr(0, close + 1));
  }
  return alive;
}

// SIGTERM in the middle of measuring: passed on to mpirun, which tears its
// ranks down; calibrate waits for it, removes its temporary folder and exits
// 130. Every process it started is gone, and no folder is left in $TMPDIR.
TEST(Calibrate, AStopSignalEndsEveryProcessItStartedAndLeavesNoFolder) {
  const auto tmp = scratch_dir("calibrate-stop-tmp");
  ringsim::proc::Command c;
  c.argv = {RINGSIM_BIN, "calibrate", "--ranks", "2", "--quick", "--mpi-bin", RINGSIM_MPI_BIN};
  c.env = {"TMPDIR=" + tmp.string()};
  c.timeout_s = 3;  // then SIGTERM; calibrate --quick measures for much longer
  c.stop_signal = SIGTERM;
  c.kill_grace_s = 60;
  const auto r = ringsim::proc::run(c);
  EXPECT_EQ(r.signal, 0) << "died by the signal";
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_NE(r.err.find("ringsim: interrupted"), std::string::npos) << r.err;
  EXPECT_TRUE(running_in_group(r.pid).empty()) << running_in_group(r.pid).front();
  for (const auto& e : std::filesystem::directory_iterator(tmp))
    EXPECT_EQ(e.path().filename().string().rfind("ringsim-calibrate-dir-", 0), std::string::npos)
        << e.path() << " left behind";
}

}  // namespace
}  // namespace ringsim::mpi::test
