// The progress bar every long command shows (sim/progress.hpp): its ETA
// arithmetic, its text, and that it stays silent when stderr is not a
// terminal (ctest runs with stderr piped, as a user's `2> log` would).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/progress.hpp"

namespace {

using ringsim::sim::duration_text;
using ringsim::sim::eta_seconds;
using ringsim::sim::progress_text;

TEST(Progress, EtaIsTheRestAtTheRateSoFar) {
  // 25 of 100 done in 10 s: 75 left at 2.5 per second = 30 s.
  EXPECT_DOUBLE_EQ(eta_seconds(25, 100, 10.0), 30.0);
  // 3 of 4 in 90 s: 1 left at 30 s each.
  EXPECT_DOUBLE_EQ(eta_seconds(3, 4, 90.0), 30.0);
  EXPECT_DOUBLE_EQ(eta_seconds(0, 100, 10.0), 0.0);    // no rate yet
  EXPECT_DOUBLE_EQ(eta_seconds(100, 100, 10.0), 0.0);  // done
}

TEST(Progress, TextShowsBarPercentElapsedAndEta) {
  // 25%: 0.25 x 30 = 7.5 -> 7 marks of 30.
  EXPECT_EQ(progress_text("x", 25, 100, 10.0),
            "x [#######                       ]  25%  elapsed 10s  ETA 30s");
  EXPECT_EQ(progress_text("x", 4, 4, 125.0),
            "x [##############################] 100%  elapsed 2m05s  ETA 0s");
}

TEST(Progress, DurationsRoundToWholeSeconds) {
  EXPECT_EQ(duration_text(59.6), "1m00s");  // never "0m60s" or "60s"
  EXPECT_EQ(duration_text(185), "3m05s");
  EXPECT_EQ(duration_text(3725), "1h02m");  // 3725 s = 1 h 2 min 5 s
  EXPECT_EQ(duration_text(-1), "0s");
}

TEST(Progress, SilentWhenStderrIsNotATerminal) {
  // Point stderr at a file (not a terminal) for the duration of the bar.
  char path[] = "/tmp/ringsim-progress-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  ASSERT_GE(::dup2(fd, STDERR_FILENO), 0);
  const bool wanted = ringsim::sim::progress_wanted(false);
  {
    // Delay 0: a bar that were enabled would be free to draw at once.
    ringsim::sim::Progress bar(wanted, 1000, "test", 0.0);
    for (int i = 0; i < 1000; ++i) bar.tick();
    bar.finish();
  }
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(fd);
  EXPECT_FALSE(wanted);
  std::ifstream in(path);
  std::stringstream got;
  got << in.rdbuf();
  EXPECT_EQ(got.str(), "");
  std::remove(path);
  // --progress asks for it even when piped.
  EXPECT_TRUE(ringsim::sim::progress_wanted(true));
}

}  // namespace
