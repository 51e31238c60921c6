// `ringsim sweep` as users run it (the real binary, child processes): the
// same rows whatever -j, resume after an interruption and after a torn
// journal line, a resume under other flags refused (and --force-new), a
// journal that is a FIFO or locked by another sweep refused, a refused point
// recorded in its row, CSV and plot, and the same bytes from `mpirun -n 4` as
// from `-j 1`.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "proc/child.hpp"

namespace ringsim {
namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string tmp(const std::string& name) {
  // The pid keeps worktrees and parallel test runs on one machine apart.
  const auto p = ::testing::TempDir() + "ringsim-sweep-" + std::to_string(::getpid()) + "-" + name;
  fs::remove(p);
  fs::remove(p + ".jsonl");
  return p;
}

// A small grid every point of which SimGrid answers in well under a second.
std::vector<std::string> grid(const std::string& out, const std::string& jobs) {
  return {RINGSIM_BIN, "sweep",       "--devices", "2,4",       "--layout", "ring,zigzag,striped",
          "--block",   "256..512:x2", "--model",   "llama3-8b", "--engine", "simgrid",
          "--out",     out,           "-j",        jobs,        "--json"};
}

// As tests/mpi/mpirun.hpp: root in CI containers, no single-copy transfers.
// Under the sanitizer build LeakSanitizer reports OpenMPI's own allocations
// (ompi_op_base_op_select, hwloc bitmaps, never freed by MPI_Finalize) as
// leaks and aborts the ranks; tests/mpi turns leak detection off the same
// way. Every other sanitizer check stays on.
std::vector<std::string> mpi_env() {
  return {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
          "OMPI_MCA_btl_vader_single_copy_mechanism=none",
          "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1"};
}

nlohmann::json run_ok(const std::vector<std::string>& argv, double timeout = 240) {
  const auto r = proc::run(argv, timeout);
  EXPECT_TRUE(r.ok()) << r.failure() << "\n" << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(SweepCli, SameRowsWhateverTheJobs) {
  const auto a = tmp("j1.jsonl"), b = tmp("j2.jsonl");
  const auto ja = run_ok(grid(a, "1"));
  const auto jb = run_ok(grid(b, "2"));
  EXPECT_EQ(ja["points"], 12);
  EXPECT_EQ(ja["ran"], 12);
  EXPECT_EQ(ja["failed"], 0);
  EXPECT_EQ(slurp(a), slurp(b));
  // The journal's header, then one row per line, in grid order, each with
  // the run's full summary.
  std::istringstream in(slurp(a));
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(nlohmann::json::parse(line)["journal"], "ringsim-sweep-journal-1");
  int i = 0;
  while (std::getline(in, line)) {
    const auto row = nlohmann::json::parse(line);
    EXPECT_EQ(row["index"], i++);
    EXPECT_EQ(row["status"], "ok");
    EXPECT_EQ(row["summary"]["engine"], "simgrid");
    EXPECT_GT(row["summary"]["time_s"].get<double>(), 0);
  }
  EXPECT_EQ(i, 12);
}

TEST(SweepCli, ResumesAfterATornJournal) {
  const auto full = tmp("full.jsonl"), part = tmp("part.jsonl");
  run_ok(grid(full, "2"));
  // What a kill leaves: the header, five whole rows (out of order) and half
  // of a sixth.
  std::vector<std::string> lines;
  std::istringstream in(slurp(full));
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  {
    std::ofstream out(part);
    for (int k : {0, 5, 1, 8, 3, 10}) out << lines[static_cast<std::size_t>(k)] << "\n";
    out << lines[6].substr(0, lines[6].size() / 2);
  }
  const auto r = proc::run(grid(part, "2"), 240);
  ASSERT_TRUE(r.ok()) << r.failure() << "\n" << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["from_journal"], 5);
  EXPECT_EQ(j["ran"], 7);
  EXPECT_EQ(slurp(part), slurp(full));
  // The torn line was cut off, and the user was told.
  EXPECT_NE(r.err.find(fmt::format("cut {} byte(s) of a torn last line", lines[6].size() / 2)),
            std::string::npos)
      << r.err;
}

// The analytic grid the refusals below use: quick, no SimGrid.
std::vector<std::string> quick(const std::string& out, std::vector<std::string> more = {}) {
  std::vector<std::string> a{RINGSIM_BIN, "sweep",    "--devices", "2,4",   "--block",
                             "256",       "--engine", "analytic",  "--out", out};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

TEST(SweepCli, ResumeUnderOtherFlagsIsRefusedAndForceNewKeepsTheOld) {
  const auto out = tmp("flags.jsonl");
  const auto kept = tmp("flags.1.jsonl");
  run_ok(quick(out, {"--gpu", "h100-sxm", "--json"}));
  const auto h100 = slurp(out);
  // The rows were computed on H100s: an A100 sweep must not get them back.
  const auto r = proc::run(quick(out, {"--gpu", "a100-80gb", "--json"}), 60);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "ringsim: error: --out " + out +
                       ": its rows were computed under other settings (--gpu: h100-sxm in the "
                       "journal, a100-80gb now); rerun with those, or add --force-new to keep it "
                       "and start a new journal beside it\n");
  EXPECT_EQ(slurp(out), h100);
  // --force-new: a new journal, the old one kept beside it.
  const auto j = run_ok(quick(out, {"--gpu", "a100-80gb", "--force-new", "--json"}));
  EXPECT_EQ(j["ran"], 2);
  EXPECT_EQ(slurp(kept), h100);
  EXPECT_NE(j["rows"][0]["summary"]["hardware"].get<std::string>().find("a100"), std::string::npos)
      << j["rows"][0]["summary"]["hardware"];
}

TEST(SweepCli, JournalThatIsNotARegularFileIsRefused) {
  const auto fifo = tmp("fifo.jsonl");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto r = proc::run(quick(fifo), 60);  // used to wait for a writer forever
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "ringsim: error: --out " + fifo +
                       ": a journal must be a regular file, this is a FIFO; give a file path\n");
}

// A journal some process holds (flock): a second sweep, local or under
// mpirun, is refused with one line instead of appending to it.
TEST(SweepCli, SecondSweepOnOneJournalIsRefusedLocallyAndUnderMpirun) {
  const auto out = tmp("locked.jsonl");
  run_ok(quick(out, {"--json"}));
  const int fd = ::open(out.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const std::string line = "ringsim: error: --out " + out +
                           ": another sweep is writing this journal (it holds its lock); let it "
                           "finish, or give another --out";
  const auto local = proc::run(quick(out), 60);
  EXPECT_EQ(local.exit_code, 2);
  EXPECT_EQ(local.err, line + "\n");
  const std::string mpirun = RINGSIM_MPIRUN;
  if (!mpirun.empty()) {
    auto argv = quick(out);
    argv.insert(argv.begin(), {mpirun, "-n", "3", "--oversubscribe"});
    proc::Command c;
    c.argv = argv;
    c.timeout_s = 120;
    c.env = mpi_env();
    const auto m = proc::run(c);
    EXPECT_FALSE(m.timed_out) << "the workers were left waiting";
    if (m.err.find("built without MPI") == std::string::npos) {
      EXPECT_EQ(m.exit_code, 2) << m.err;
      EXPECT_NE(m.err.find(line), std::string::npos) << m.err;
    }
  }
  ::close(fd);
}

TEST(SweepCli, InterruptedThenRerunCompletesOnlyTheMissing) {
  const auto full = tmp("ref.jsonl"), cut = tmp("cut.jsonl");
  run_ok(grid(full, "1"));
  proc::Command c;
  c.argv = grid(cut, "1");
  c.timeout_s = 0.8;  // SIGINT part-way (how far depends on this machine's speed)
  c.stop_signal = 2;
  const auto first = proc::run(c);
  // Ctrl-C reaches the point's child too (proc::run forwards it); the sweep
  // says what it kept and exits 130, or it had already finished.
  EXPECT_TRUE(first.exit_code == 130 || first.exit_code == 0) << first.failure() << first.err;
  if (first.exit_code == 130) {
    EXPECT_NE(first.err.find("ringsim sweep: interrupted; "), std::string::npos) << first.err;
  }
  const auto j = run_ok(grid(cut, "1"));
  EXPECT_EQ(j["ran"].get<int>() + j["from_journal"].get<int>(), 12);
  EXPECT_EQ(slurp(cut), slurp(full));
}

TEST(SweepCli, RefusedPointIsARowAndTheSweepGoesOn) {
  const auto out = tmp("fail.csv");
  const auto j = run_ok({RINGSIM_BIN, "sweep", "--block", "255", "--layout", "ring,zigzag",
                         "--devices", "2", "--engine", "analytic", "--out", out, "--json"});
  EXPECT_EQ(j["points"], 2);
  EXPECT_EQ(j["failed"], 1);
  EXPECT_EQ(j["rows"][0]["status"], "ok");
  EXPECT_EQ(j["rows"][1]["status"], "failed");
  // Refused by the child (the layout's rule), its one line kept.
  EXPECT_NE(j["rows"][1]["error"].get<std::string>().find("--block: zigzag"), std::string::npos)
      << j["rows"][1]["error"];
  // The CSV: a header and one line per point, the journal beside it.
  const auto csv = slurp(out);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  EXPECT_NE(csv.find("time_s"), std::string::npos);
  EXPECT_TRUE(fs::exists(out + ".jsonl"));
}

TEST(SweepCli, SetKeyIsAnAxisAndMovesTheAnswer) {
  // --set KEY=V1,V2 sweeps one assumption: a 10x slower inter-node link
  // makes this communication-bound ring (16 devices over two nodes) slower.
  const auto j = run_ok({RINGSIM_BIN, "sweep", "--devices", "16", "--block", "4K", "--engine",
                         "analytic", "--set", "interconnects.ib-ndr.bandwidth=5e9,50e9", "--json"});
  ASSERT_EQ(j["points"], 2);
  ASSERT_EQ(j["failed"], 0);
  EXPECT_EQ(j["rows"][0]["params"]["--set interconnects.ib-ndr.bandwidth"], "5e9");
  const double slow = j["rows"][0]["summary"]["time_s"], fast = j["rows"][1]["summary"]["time_s"];
  EXPECT_GT(slow, 2 * fast);
}

TEST(SweepCli, PlotSpecHasOneSeriesPerValue) {
  const auto out = tmp("plot.jsonl"), plot = tmp("plot");
  run_ok({RINGSIM_BIN, "sweep", "--devices", "2,4,8", "--layout", "ring,zigzag", "--engine",
          "analytic", "--out", out, "--plot", plot, "--plot-x", "--devices", "--json"});
  const auto spec = nlohmann::json::parse(slurp(plot + ".json"));
  ASSERT_EQ(spec["panels"].size(), 1u);
  ASSERT_EQ(spec["panels"][0]["series"].size(), 2u);
  EXPECT_EQ(spec["panels"][0]["series"][0]["points"].size(), 3u);
}

// A metric that is 0 at some points (ep_comm_s at --ep 1) gets a linear y
// axis: a log axis would drop those points without a word.
TEST(SweepCli, PlotOfAMetricWithZerosIsLinear) {
  const auto out = tmp("zeros.jsonl"), plot = tmp("zeros");
  run_ok({RINGSIM_BIN,     "sweep",     "--model", "mixtral-8x7b", "--scope",  "layer",
          "--devices",     "8",         "--ep",    "1,2,4",        "--engine", "analytic",
          "--out",         out,         "--plot",  plot,           "--plot-x", "--ep",
          "--plot-metric", "ep_comm_s", "--json"});
  const auto spec = nlohmann::json::parse(slurp(plot + ".json"));
  EXPECT_FALSE(spec["panels"][0]["y"]["log"].get<bool>());
  EXPECT_TRUE(spec["panels"][0]["x"]["log"].get<bool>());
  EXPECT_EQ(spec["panels"][0]["series"][0]["points"].size(), 3u);
}

// The routing seed's default, given, is the same journal as leaving it out.
TEST(SweepCli, TheRoutingSeedsDefaultResumesTheSameJournal) {
  const auto out = tmp("seed.jsonl");
  const std::vector<std::string> base = {
      RINGSIM_BIN, "sweep", "--model",  "mixtral-8x7b", "--scope", "layer", "--devices", "8",
      "--ep",      "1,2",   "--engine", "analytic",     "--out",   out,     "--json"};
  run_ok(base);
  auto again = base;
  again.insert(again.end(), {"--routing-seed", "1"});
  run_ok(again);
}

// ringsim-plot present but failing is a missing output: exit 1 with one line
// on stderr, the rows and the spec still written. ringsim finds ringsim-plot
// beside its own path, so a hard link of it in a folder with a plotter that
// fails stands in for a broken install.
TEST(SweepCli, AFailedPlotExitsOne) {
  const fs::path dir = tmp("failing-plotter");
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::error_code ec;
  fs::create_hard_link(RINGSIM_BIN, dir / "ringsim", ec);
  if (ec) fs::copy_file(RINGSIM_BIN, dir / "ringsim");
  {
    std::ofstream plotter(dir / "ringsim-plot");
    plotter << "#!/bin/sh\nexit 1\n";
  }
  fs::permissions(dir / "ringsim-plot", fs::perms::owner_all);
  const auto out = (dir / "rows.jsonl").string(), plot = (dir / "p").string();
  proc::Command c;
  c.argv = {(dir / "ringsim").string(),
            "sweep",
            "--devices",
            "2,4",
            "--engine",
            "analytic",
            "--out",
            out,
            "--plot",
            plot};
  c.timeout_s = 120;
  const auto r = proc::run(c);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("--plot: " + plot + ".png not written: ringsim-plot failed"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(fs::exists(plot + ".json"));
  EXPECT_TRUE(fs::exists(out));
  fs::remove_all(dir);
}

TEST(SweepCli, ThreeAxesDrawOneSeriesPerCombination) {
  // x = --block; --devices x --layout = 4 combinations, so 4 lines of 2
  // points each, and no line goes back in x (it would join configurations).
  const auto out = tmp("combo.jsonl"), plot = tmp("combo");
  run_ok({RINGSIM_BIN, "sweep", "--devices", "8,16", "--block", "1K,2K", "--layout", "ring,zigzag",
          "--engine", "analytic", "--out", out, "--plot", plot, "--plot-x", "--block", "--json"});
  const auto spec = nlohmann::json::parse(slurp(plot + ".json"));
  const auto& series = spec["panels"][0]["series"];
  ASSERT_EQ(series.size(), 4u) << spec.dump(1);
  EXPECT_EQ(series[0]["name"], "--devices 8, --layout ring");
  for (const auto& s : series) {
    ASSERT_EQ(s["points"].size(), 2u) << s.dump();
    EXPECT_LT(s["points"][0][0].get<double>(), s["points"][1][0].get<double>()) << s.dump();
  }
}

TEST(SweepCli, MpiRanksWriteTheSameRowsAsOneJob) {
  const std::string mpirun = RINGSIM_MPIRUN;
  if (mpirun.empty()) GTEST_SKIP() << "SKIPPED: no mpirun found at configure time (openmpi-bin)";
  const auto a = tmp("one.jsonl"), b = tmp("mpi.jsonl");
  run_ok(grid(a, "1"));
  auto argv = grid(b, "1");
  argv.insert(argv.begin(), {mpirun, "-n", "4", "--oversubscribe"});
  proc::Command c;
  c.argv = argv;
  c.timeout_s = 240;
  c.env = mpi_env();
  const auto r = proc::run(c);
  if (r.err.find("built without MPI") != std::string::npos)
    GTEST_SKIP() << "SKIPPED: this ringsim was built without MPI (RINGSIM_MPI=OFF)";
  ASSERT_TRUE(r.ok()) << r.failure() << "\n" << r.err << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"], 4);
  EXPECT_EQ(j["ran"], 12);
  EXPECT_EQ(slurp(a), slurp(b));
}

}  // namespace
}  // namespace ringsim
