// Ctrl-C, SIGTERM or a closed terminal during the commands whose long loops
// check for a stop (cli/stop_scope.hpp): each ends at its next unit of work
// with exit 130 and one line, its output not written, and no child left
// behind. run, infer and sweep have their own tests (tests/sim, tests/infer,
// tests/sweep). Each command here runs for many seconds undisturbed; the
// signal comes after 3 s, late enough that the handler is surely installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include "proc/child.hpp"

namespace fs = std::filesystem;

namespace {

std::string scratch(const std::string& name) {
  const auto d = fs::path(::testing::TempDir()) / ("ringsim_stop_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

ringsim::proc::Result stopped_run(const std::vector<std::string>& args, int sig,
                                  const std::string& cwd, double after_s = 3, double grace_s = 60) {
  ringsim::proc::Command c;
  c.argv = {RINGSIM_BIN};
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  c.cwd = cwd;
  c.timeout_s = after_s;  // then the signal; SIGKILL only if it is ignored for a minute
  c.stop_signal = sig;
  c.kill_grace_s = grace_s;
  return ringsim::proc::run(c);
}

void expect_stopped(const ringsim::proc::Result& r, const std::string& what) {
  EXPECT_EQ(r.signal, 0) << what << " died by the signal instead of exiting 130";
  EXPECT_EQ(r.exit_code, 130) << what << "\n" << r.err;
  const auto at = r.err.rfind("ringsim:");
  ASSERT_NE(at, std::string::npos) << what << " printed nothing on stderr";
  EXPECT_EQ(r.err.substr(at), "ringsim: interrupted; no output was left half-written\n") << what;
}

}  // namespace

TEST(StopSignals, VerifyEndsAtTheNextRingStepWithoutItsFile) {
  for (int sig : {SIGINT, SIGTERM}) {
    const auto dir = scratch("verify" + std::to_string(sig));
    // 8192 tokens x 4 heads of 64 in float64: tens of seconds undisturbed.
    const auto r = stopped_run({"verify", "--devices", "8", "--block", "1K", "--heads", "4",
                                "--head-dim", "64", "--out", "o.npy"},
                               sig, dir);
    expect_stopped(r, "verify");
    EXPECT_FALSE(fs::exists(fs::path(dir) / "o.npy"));
  }
}

TEST(StopSignals, ProfileEndsAtTheNextPointWithoutItsFile) {
  const auto dir = scratch("profile");
  const auto r = stopped_run({"profile", "--out", "p.json"}, SIGINT, dir);
  expect_stopped(r, "profile");
  EXPECT_FALSE(fs::exists(fs::path(dir) / "p.json"));
}

TEST(StopSignals, ExperimentAllEndsAndLeavesNoHalfExperiment) {
  const auto dir = scratch("experiment");
  const auto r = stopped_run({"experiment", "all", "--out", "x"}, SIGHUP, dir);
  expect_stopped(r, "experiment all");
  // The experiments that finished keep their files; none has a data.csv
  // without its report (the one cut short wrote nothing).
  const auto out = fs::path(dir) / "x";
  if (!fs::exists(out)) return;  // stopped before the first one finished
  for (const auto& e : fs::directory_iterator(out))
    EXPECT_EQ(fs::exists(e.path() / "data.csv"), fs::exists(e.path() / "report.md")) << e.path();
}

TEST(StopSignals, PlanRecheckEndsItsChildren) {
  const auto dir = scratch("recheck");
  // Four SimGrid children at 16,384 GPUs: about 15 s undisturbed in a Release build.
  // The signal may come during the search (an ASan build takes seconds for
  // it at this size): the stop scope covers it too.
  const auto r = stopped_run(
      {"plan", "--model", "llama3-405b", "--context", "1M", "--gpus", "16384", "--recheck", "4"},
      SIGINT, dir);
  expect_stopped(r, "plan --recheck");
  EXPECT_EQ(r.out, "");  // no table from a plan cut short
}

TEST(StopSignals, PlanDocumentsEndsAtTheNextPacking) {
  const auto dir = scratch("documents");
  // 350 packings x up to 12 rows, just under the sampler's size guard: about
  // 8 s undisturbed in a Release build (the signal comes at 3 s).
  const auto r = stopped_run({"plan", "--model", "llama3-8b", "--context", "128K", "--gpus", "64",
                              "--documents", "lognormal:512,1", "--samples", "350"},
                             SIGTERM, dir);
  expect_stopped(r, "plan --documents");
  EXPECT_EQ(r.out, "");
}

TEST(StopSignals, PlanSearchEndsAtTheNextConfig) {
  // Llama 4 Maverick at 8,192 GPUs: its chunked layers' closed forms cost
  // every device at every ring step, about 26 s undisturbed in a Release
  // build. The search stops at its next config or ring step: well within the
  // 15 s grace, where it used to finish the whole search first (minutes).
  const auto dir = scratch("plan_search");
  const auto r = stopped_run({"plan", "--model", "llama4-maverick", "--context", "128K", "--gpus",
                              "8192", "--framework", "any"},
                             SIGTERM, dir, 3, 15);
  expect_stopped(r, "plan (the search)");
  EXPECT_EQ(r.out, "");
}

TEST(StopSignals, ACommandWithoutAStopScopeOfItsOwnEndsWith130) {
  // plan --inference holds no stop scope (about 1 s undisturbed): the guard
  // main holds from its first line keeps the signal and reports it when the
  // command returns. It died by the signal, without a word, before.
  const auto dir = scratch("no_scope");
  const auto r = stopped_run(
      {"plan", "--inference", "--model", "llama3-8b", "--context", "128M", "--gpus", "1024"},
      SIGINT, dir, 0.3);
  expect_stopped(r, "plan --inference");
}

TEST(StopSignals, RunClosedFormEndsAtTheNextRingStep) {
  // Packed documents at the closed forms' size guard: every device at every
  // ring step, both passes (about 4.6 s undisturbed in a release build, so
  // the signal comes at 1 s).
  const auto dir = scratch("run_documents");
  const auto r = stopped_run({"--engine", "analytic", "--devices", "2048", "--block", "4K",
                              "--documents", "lognormal:512,1", "--pass", "fwdbwd", "--json"},
                             SIGTERM, dir, 1.0);
  expect_stopped(r, "run --engine analytic --documents");
  EXPECT_EQ(r.out, "") << "a stopped run prints no summary";
}

TEST(StopSignals, ASimulationStartedWithSigintIgnoredKeepsIgnoringIt) {
  // nohup or a shell's background job starts a command with SIGINT ignored;
  // SimGrid's engine used to put its own handler there, which ended the run
  // with exit 1 and no word. Ignored, the signal changes nothing.
  const auto dir = scratch("ignored");
  ringsim::proc::Command c;
  c.argv = {"sh", "-c",
            std::string("trap '' INT; exec '") + RINGSIM_BIN + "' --devices 512 --block 4K --json"};
  c.cwd = dir;
  c.timeout_s = 1;  // SIGINT then; the run takes seconds more
  c.stop_signal = SIGINT;
  c.kill_grace_s = 120;
  const auto r = ringsim::proc::run(c);
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"time_s\""), std::string::npos) << "the run finished and printed";
}
