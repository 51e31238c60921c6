// The one child-process module: output captured whole, exit codes and signals
// told apart, deadlines kept (and their signal chosen), order kept when
// several run at once, the environment passed on, and the ringsim program
// found the one way ringsim finds it.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

#include "proc/child.hpp"

namespace ringsim::proc {
namespace {

TEST(Child, CapturesOutputAndExitCode) {
  const auto r = run({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, 30);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.failure(), "exit 3: err");
}

TEST(Child, LargeOutputOnBothStreamsDoesNotBlock) {
  // 1 MiB on each stream, more than a pipe holds: both must be drained as they come.
  const auto r = run({"/bin/sh", "-c",
                      "head -c 1048576 /dev/zero | tr '\\0' a; head -c 1048576 /dev/zero | tr "
                      "'\\0' b >&2"},
                     60);
  ASSERT_TRUE(r.ok()) << r.failure();
  EXPECT_EQ(r.out.size(), 1u << 20);
  EXPECT_EQ(r.err.size(), 1u << 20);
}

TEST(Child, DeadlineStopsItWithTheChosenSignal) {
  Command c;
  c.argv = {"/bin/sh", "-c", "trap 'exit 7' INT; sleep 30 & wait"};
  c.timeout_s = 0.3;
  c.stop_signal = SIGINT;
  const auto r = run(c);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, 7) << "the child's own answer to SIGINT";
  EXPECT_LT(r.wall_s, 10);
  EXPECT_NE(r.failure().find("timed out"), std::string::npos);
}

TEST(Child, KillFollowsWhenTheChildIgnoresTheDeadline) {
  Command c;
  c.argv = {"/bin/sh", "-c", "trap '' TERM; sleep 30"};
  c.timeout_s = 0.2;
  c.kill_grace_s = 0.3;
  const auto r = run(c);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_LT(r.wall_s, 10);
}

TEST(Child, MissingProgramIsAnErrorNotACrash) {
  const auto r = run({"/nonexistent/ringsim"}, 5);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.failure().find("cannot start /nonexistent/ringsim"), std::string::npos)
      << r.failure();
}

TEST(Child, SearchesPathAndPassesEnvironmentAndDirectory) {
  Command c;
  c.argv = {"sh", "-c", "echo $RINGSIM_TEST_VALUE; pwd"};
  c.env = {"RINGSIM_TEST_VALUE=seven"};
  c.cwd = "/";
  const auto r = run(c);
  ASSERT_TRUE(r.ok()) << r.failure();
  EXPECT_EQ(r.out, "seven\n/\n");
}

TEST(Child, ManyAtOnceKeepTheirOrder) {
  std::vector<Command> cmds;
  for (int i = 0; i < 6; ++i) {
    Command c;
    c.argv = {"/bin/sh", "-c", "sleep 0.0" + std::to_string(6 - i) + "; echo " + std::to_string(i)};
    cmds.push_back(c);
  }
  const auto rs = run_many(cmds, 3);
  ASSERT_EQ(rs.size(), 6u);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(rs[static_cast<std::size_t>(i)].out, std::to_string(i) + "\n");
}

TEST(Child, ReportsCpuTime) {
  const auto r = run({"/bin/sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"}, 60);
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r.cpu_s, 0);
  EXPECT_GT(r.max_rss_bytes, 0);
}

TEST(Child, ShellLineQuotes) {
  EXPECT_EQ(shell_line({"ringsim", "run", "--devices", "8"}), "ringsim run --devices 8");
  EXPECT_EQ(shell_line({"a b", "it's"}), "'a b' 'it'\\''s'");
}

TEST(Child, ErrorLineIsTheFirstErrorOrTheLastLine) {
  EXPECT_EQ(error_line("banner\nringsim: error: --block: bad\nmore\n"),
            "ringsim: error: --block: bad");
  EXPECT_EQ(error_line("one\ntwo\n---\n"), "two");
}

TEST(Child, FindsRingsimTheOneWay) {
  // An explicit $RINGSIM_BIN is final, even when it is wrong.
  ::setenv("RINGSIM_BIN", "/nonexistent/ringsim", 1);
  std::string why;
  EXPECT_EQ(ringsim_exe(&why), "");
  EXPECT_NE(why.find("$RINGSIM_BIN"), std::string::npos);
  ::setenv("RINGSIM_BIN", RINGSIM_BIN, 1);
  EXPECT_EQ(ringsim_exe(), RINGSIM_BIN);
  ::unsetenv("RINGSIM_BIN");
  // This test program lives next to ringsim (build/bin).
  EXPECT_EQ(ringsim_exe(), sibling_exe("ringsim"));
  EXPECT_FALSE(sibling_exe("ringsim").empty());
  EXPECT_FALSE(self_exe().empty());
}

}  // namespace
}  // namespace ringsim::proc
