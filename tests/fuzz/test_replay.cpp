// Every kept fuzz input and every reproducer of a fixed finding, replayed
// through the fuzz targets (fuzz/*.cpp). A target aborts on a finding, so a
// regression shows up as this test crashing, with the target's message and
// the file name printed just before.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace ringsim::fuzz {
int catalog(const std::uint8_t*, std::size_t);
int profile(const std::uint8_t*, std::size_t);
int npy(const std::uint8_t*, std::size_t);
int trace(const std::uint8_t*, std::size_t);
int cli(const std::uint8_t*, std::size_t);
int plot(const std::uint8_t*, std::size_t);
int journal(const std::uint8_t*, std::size_t);
int grid(const std::uint8_t*, std::size_t);
int nccl(const std::uint8_t*, std::size_t);
int config(const std::uint8_t*, std::size_t);
int kineto(const std::uint8_t*, std::size_t);
int runs_csv(const std::uint8_t*, std::size_t);
int calibration(const std::uint8_t*, std::size_t);
}  // namespace ringsim::fuzz

namespace {

namespace fs = std::filesystem;
using Target = int (*)(const std::uint8_t*, std::size_t);

// Replays every file under fuzz/<kind>/<name>/; returns how many.
int replay(const std::string& kind, const std::string& name, Target target) {
  const fs::path dir = fs::path(RINGSIM_FUZZ_DIR) / kind / name;
  if (!fs::is_directory(dir)) return 0;
  int n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().filename() == "README.md") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string bytes = ss.str();
    std::cerr << "replay " << entry.path().string() << "\n" << std::flush;
    target(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    ++n;
  }
  return n;
}

struct Case {
  const char* name;
  Target target;
};

class Replay : public ::testing::TestWithParam<Case> {};

TEST_P(Replay, CorpusAndRegressions) {
  const auto& c = GetParam();
  const int seeds = replay("corpus", c.name, c.target);
  const int found = replay("regressions", c.name, c.target);
  // The corpus must exist: an empty replay would pass without checking anything.
  EXPECT_GT(seeds, 0) << "no seed inputs under fuzz/corpus/" << c.name;
  std::cout << c.name << ": " << seeds << " corpus inputs, " << found << " regression inputs\n";
}

INSTANTIATE_TEST_SUITE_P(
    Targets, Replay,
    ::testing::Values(Case{"catalog", ringsim::fuzz::catalog},
                      Case{"profile", ringsim::fuzz::profile}, Case{"npy", ringsim::fuzz::npy},
                      Case{"trace", ringsim::fuzz::trace}, Case{"cli", ringsim::fuzz::cli},
                      Case{"plot", ringsim::fuzz::plot}, Case{"journal", ringsim::fuzz::journal},
                      Case{"grid", ringsim::fuzz::grid}, Case{"config", ringsim::fuzz::config},
                      Case{"nccl", ringsim::fuzz::nccl}, Case{"kineto", ringsim::fuzz::kineto},
                      Case{"runs_csv", ringsim::fuzz::runs_csv},
                      Case{"calibration", ringsim::fuzz::calibration}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
