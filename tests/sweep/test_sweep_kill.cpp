// Kill loops (docs/sweep.md, "Resuming"): a small analytic sweep stopped at
// pseudo-random moments, then resumed, must end with exactly the bytes of a
// sweep never stopped: no row lost, doubled, torn or mixed in. Locally the
// sweep is stopped by SIGINT, SIGTERM, SIGHUP and SIGKILL; under mpirun,
// mpirun by SIGINT, SIGTERM and SIGKILL, and one worker rank by SIGKILL. A
// stop that prints "interrupted; N rows journalled" must leave N rows. Small
// analytic grids (6 and 12 points of about 70 ms) keep each loop of 20 stops
// to seconds.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "proc/child.hpp"

namespace ringsim {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kStops = 20;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string tmp(const std::string& name) {
  const auto p = ::testing::TempDir() + "ringsim-kill-" + std::to_string(::getpid()) + "-" + name;
  fs::remove(p);
  return p;
}

// Six points locally; twelve under mpirun, whose start-up takes most of a
// run, so that more stops land while rows are being written.
std::vector<std::string> sweep(const std::string& out, const std::string& blocks = "256,512") {
  return {RINGSIM_BIN, "sweep",    "--devices", "2,4,8", "--block",
          blocks,      "--engine", "analytic",  "--out", out};
}
const std::string kMpiBlocks = "256..2K:x2";

std::vector<std::string> mpi_env() {
  return {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
          "OMPI_MCA_btl_vader_single_copy_mechanism=none",
          "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1"};
}

// Rows in a journal (its lines but the header); 0 when there is none.
long rows_in(const std::string& path) {
  const auto text = slurp(path);
  const auto lines = static_cast<long>(std::count(text.begin(), text.end(), '\n'));
  return lines > 0 ? lines - 1 : 0;
}

// N of "interrupted; N rows journalled", if the sweep said it. A signal that
// reaches rank 0 before the sweep's own guard (while its flags are parsed)
// gets ringsim's general line, "interrupted; no output was left
// half-written", which says no count.
std::optional<long> said_kept(const std::string& err) {
  const std::string tag = "interrupted; ";
  const auto at = err.find(tag);
  if (at == std::string::npos) return std::nullopt;
  const auto from = at + tag.size();
  if (from >= err.size() || !std::isdigit(static_cast<unsigned char>(err[from])))
    return std::nullopt;
  return std::stol(err.substr(from));
}

// The sweep never stopped: what every stopped one must become.
std::string reference(double* seconds, const std::string& blocks = "256,512") {
  const auto ref = tmp("reference.jsonl");
  const auto t0 = Clock::now();
  const auto r = proc::run(sweep(ref, blocks), 120);
  *seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_TRUE(r.ok()) << r.failure() << r.err;
  return slurp(ref);
}

// The stop's journal resumed to the end (locally: the journal is the same
// whoever wrote it) and compared byte for byte.
void resume_and_compare(const std::string& path, const std::string& expected,
                        const std::string& where, const std::string& blocks = "256,512") {
  auto argv = sweep(path, blocks);
  argv.insert(argv.end(), {"-j", "2"});  // the same bytes whatever -j, in half the time
  const auto r = proc::run(argv, 120);
  ASSERT_TRUE(r.ok()) << where << ": the resume failed: " << r.failure() << "\n" << r.err;
  EXPECT_EQ(slurp(path), expected) << where;
}

TEST(SweepKill, LocalSweepStoppedAnywhereResumesToTheSameBytes) {
  double seconds = 0;
  const auto expected = reference(&seconds);
  std::mt19937 rng(20261203);
  std::uniform_real_distribution<double> when(0.01, std::max(0.1, seconds));
  const int signals[] = {SIGINT, SIGTERM, SIGHUP, SIGKILL};
  int midway = 0;
  for (int i = 0; i < kStops; ++i) {
    const int sig = signals[i % 4];
    const double delay = when(rng);
    const auto path = tmp(fmt::format("local-{}.jsonl", i));
    const auto where = fmt::format("stop {}: {} after {:.3f} s", i, ::strsignal(sig), delay);
    proc::Command c;
    c.argv = sweep(path);
    c.timeout_s = delay;
    c.stop_signal = sig;
    c.kill_grace_s = 60;
    const auto r = proc::run(c);
    const long kept = rows_in(path);
    if (kept > 0 && kept < 6) ++midway;
    if (sig == SIGKILL) {
      EXPECT_TRUE(r.signal == SIGKILL || r.exit_code == 0) << where << ": " << r.failure();
    } else if (r.exit_code == 130) {
      // Stopped cleanly: it says what it kept, and it kept that. A signal
      // outside the sweep's own guard (while the flags are parsed, or after
      // the last row, as the command returns) gets ringsim's general line
      // instead: then no journal was begun, or it is whole.
      if (const auto said = said_kept(r.err)) {
        EXPECT_EQ(*said, kept) << where;
      } else {
        EXPECT_NE(r.err.find("interrupted; no output was left half-written"), std::string::npos)
            << where << ": no 'interrupted' line:\n"
            << r.err;
        EXPECT_TRUE(kept == 0 || slurp(path) == expected)
            << where << ": the general line, yet " << kept << " rows of 6 were journalled";
      }
    } else {
      // Finished first; or the signal came before the sweep set up its
      // handler (so before it opened the journal) or after it had put it
      // away again (the journal final).
      const bool outside = r.signal == sig && (!fs::exists(path) || slurp(path) == expected);
      EXPECT_TRUE(r.exit_code == 0 || outside) << where << ": " << r.failure() << "\n" << r.err;
    }
    resume_and_compare(path, expected, where);
  }
  std::cout << kStops << " stops, " << midway << " with part of the rows journalled\n";
}

// The pid of the sweep's rank `rank` under mpirun (its environment names it).
pid_t rank_pid(const std::string& journal, int rank) {
  const std::string want = fmt::format("OMPI_COMM_WORLD_RANK={}", rank);
  for (const auto& e : fs::directory_iterator("/proc")) {
    const auto name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto cmd = slurp(e.path().string() + "/cmdline");
    if (cmd.find("sweep") == std::string::npos || cmd.find(journal) == std::string::npos) continue;
    const auto env = slurp(e.path().string() + "/environ");
    for (std::size_t at = 0; at < env.size();) {
      const auto end = env.find('\0', at);
      if (env.substr(at, end - at) == want) return static_cast<pid_t>(std::stol(name));
      if (end == std::string::npos) break;
      at = end + 1;
    }
  }
  return -1;
}

// Ranks outlive a killed mpirun by a moment (and hold the journal's lock
// until they are gone): wait for them, as a user would see them go.
void wait_for_ranks(const std::string& journal) {
  for (int i = 0; i < 600; ++i) {
    if (rank_pid(journal, 0) < 0 && rank_pid(journal, 1) < 0 && rank_pid(journal, 2) < 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "ranks of the sweep on " << journal << " still alive 30 s after mpirun ended";
}

TEST(SweepKill, MpiSweepStoppedAnywhereResumesToTheSameBytes) {
  const std::string mpirun = RINGSIM_MPIRUN;
  if (mpirun.empty()) GTEST_SKIP() << "SKIPPED: no mpirun found at configure time (openmpi-bin)";
  double local_s = 0;
  const auto expected = reference(&local_s, kMpiBlocks);
  auto mpi = [&](const std::string& path) {
    proc::Command c;
    c.argv = sweep(path, kMpiBlocks);
    c.argv.insert(c.argv.begin(), {mpirun, "-n", "3", "--oversubscribe"});
    c.env = mpi_env();
    c.timeout_s = 120;
    return c;
  };
  // How long the whole job takes here, start-up included.
  const auto probe = tmp("mpi-probe.jsonl");
  const auto t0 = Clock::now();
  const auto full = proc::run(mpi(probe));
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (full.err.find("built without MPI") != std::string::npos)
    GTEST_SKIP() << "SKIPPED: this ringsim was built without MPI (RINGSIM_MPI=OFF)";
  ASSERT_TRUE(full.ok()) << full.failure() << "\n" << full.err;
  ASSERT_EQ(slurp(probe), expected) << "mpirun -n 3 and a local sweep differ";
  std::mt19937 rng(20261204);
  std::uniform_real_distribution<double> when(0.2, seconds);
  const int signals[] = {SIGINT, SIGTERM, SIGKILL, 0};  // 0: SIGKILL to worker rank 1
  int midway = 0, said = 0;
  for (int i = 0; i < kStops; ++i) {
    const int sig = signals[i % 4];
    const double delay = when(rng);
    const auto path = tmp(fmt::format("mpi-{}.jsonl", i));
    const auto where = fmt::format("stop {}: {} after {:.3f} s", i,
                                   sig ? ::strsignal(sig) : "SIGKILL to rank 1", delay);
    auto c = mpi(path);
    proc::Result r;
    if (sig != 0) {
      c.timeout_s = delay;
      c.stop_signal = sig;
      c.kill_grace_s = 60;
      r = proc::run(c);
    } else {
      std::thread job([&] { r = proc::run(c); });
      std::this_thread::sleep_for(std::chrono::duration<double>(delay));
      if (const auto pid = rank_pid(path, 1); pid > 0) ::kill(pid, SIGKILL);
      job.join();
    }
    wait_for_ranks(path);
    const long kept = rows_in(path);
    if (kept > 0 && kept < 12) ++midway;
    // Rank 0 says what it kept when the stop reached it cleanly.
    if (const auto n = said_kept(r.err)) {
      ++said;
      EXPECT_EQ(*n, kept) << where << "\n" << r.err;
    }
    EXPECT_FALSE(r.exit_code == 0 && kept != 12) << where << ": exit 0 with " << kept << " rows";
    resume_and_compare(path, expected, where, kMpiBlocks);
  }
  std::cout << kStops << " stops of mpirun -n 3 (" << seconds << " s a run), " << midway
            << " with part of the rows journalled, " << said << " said what they kept\n";
}

}  // namespace
}  // namespace ringsim
