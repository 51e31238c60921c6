// `ringsim profile`: the CPU sweep writes what models/core/profile.cpp reads, the
// CLI checks its flags, --device cuda explains itself without a GPU, and the
// shipped CPU profile drives a ProfileModel.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "kernels/profile_run.hpp"
#include "models/core/errors.hpp"
#include "models/core/profile.hpp"

namespace ringsim::kernels {
namespace {

CpuProfileOptions tiny() {
  CpuProfileOptions o;
  o.blocks = {16, 32};
  o.head_dims = {8};
  o.dtypes = {"fp32", "fp64"};
  o.repeats = 2;
  o.warmup = 0;
  return o;
}

// The ETA's input: the share of work done rises with each point and ends at
// exactly 1, weighted by block^2 x head dim. tiny(): fp32 and fp64 at blocks
// 16 and 32, d = 8, with bwd: work per (dtype, block) = block^2 x 8 x 3.5, so
// after fp32's block-16 points the share is 256 / (2 x (256 + 1024)) = 0.1.
TEST(Profile, ProgressShareOfWorkRisesToOne) {
  std::vector<double> shares;
  cpu_profile_json(tiny(), [&](const std::string&, double done) { shares.push_back(done); });
  ASSERT_EQ(shares.size(), 2u * 2 * (2 * 2 + 1));  // one call per point
  EXPECT_TRUE(std::is_sorted(shares.begin(), shares.end()));
  EXPECT_DOUBLE_EQ(shares.back(), 1.0);
  // Points of (fp32, 16): merge, then fwd/bwd full, fwd/bwd causal: the 5th is the last.
  EXPECT_NEAR(shares[4], 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(shares[0], 0.0);  // the merge counts as no work
}

TEST(Profile, CpuSweepIsReadableByTheModel) {
  const auto doc = cpu_profile_json(tiny());
  const auto p = parse_profile(doc, "test");
  EXPECT_EQ(p.schema, "ringsim-profile-1");
  EXPECT_EQ(p.device_kind, "cpu");
  // dtypes x blocks x (masks x {fwd, bwd} + merge)
  EXPECT_EQ(p.points.size(), 2u * 2 * (2 * 2 + 1));
  for (const auto& pt : p.points) {
    const auto c = static_cast<std::uint64_t>(pt.block);
    if (pt.kernel == "merge")  // rows merged: block x heads (1)
      EXPECT_EQ(pt.entries, c) << pt.block;
    else
      EXPECT_EQ(pt.entries, pt.mask == "full" ? c * c : c * (c + 1) / 2) << pt.block << pt.mask;
    EXPECT_LE(pt.min_s, pt.median_s);
    EXPECT_LE(pt.median_s, pt.max_s);
    EXPECT_EQ(pt.repeats, 2);
  }
  const ProfileModel m(p, "fp32", "test");
  EXPECT_GT(m.seconds(1000, 32, 8, false, false), 0);
  EXPECT_GT(m.seconds(1000, 24, 8, true, true), 0);               // interpolated between 16 and 32
  EXPECT_THROW(m.seconds(1000, 8, 8, false, false), InputError);  // below the profile
  EXPECT_TRUE(m.has_merge());
  EXPECT_GT(m.merge_seconds(32, 32, 8), 0);
  EXPECT_EQ(m.merge_seconds(0, 32, 8), 0);
  // Merge points do not widen the kernels' block range.
  EXPECT_EQ(m.min_block(), 16);
  EXPECT_EQ(m.max_block(), 32);
}

TEST(Profile, RejectsBadOptions) {
  auto o = tiny();
  o.dtypes = {"bf16"};
  EXPECT_THROW(cpu_profile_json(o), InputError);
  o = tiny();
  o.blocks = {0};
  EXPECT_THROW(cpu_profile_json(o), InputError);
}

TEST(Profile, ShortNames) {
  EXPECT_EQ(short_name("AMD EPYC 7B13 64-Core Processor"), "amd-epyc-7b13-64-core-processor");
  EXPECT_EQ(short_name("Intel(R) Xeon(R) CPU @ 2.20GHz"), "intel-r-xeon-r-cpu-2-20ghz");
  EXPECT_EQ(short_name("  "), "cpu");
}

TEST(ProfileCli, WritesAProfile) {
  const auto out = testing::temp_path("profile.json");
  std::filesystem::remove(out);
  const auto r =
      testing::run_cli({"profile", "--device", "cpu", "--out", out, "--blocks", "16,32",
                        "--head-dims", "8", "--dtypes", "fp32", "--repeats", "1", "--json"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["points"], 10);  // 2 blocks x (2 masks x {fwd, bwd} + merge)
  EXPECT_EQ(read_profile(out).points.size(), 10u);
}

// Two threads per call: timed by the wall clock, and the profile says so.
TEST(ProfileCli, ThreadsAreRecorded) {
  const auto out = testing::temp_path("profile-threads.json");
  std::filesystem::remove(out);
  const auto r =
      testing::run_cli({"profile", "--out", out, "--blocks", "32", "--head-dims", "8", "--dtypes",
                        "fp32", "--repeats", "1", "--threads", "2", "--json"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  std::ifstream in(out);
  const auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["device"]["threads"], 2);
  EXPECT_NE(doc["method"].get<std::string>().find("wall time"), std::string::npos);
  EXPECT_EQ(read_profile(out).points.size(), 5u);
}

TEST(ProfileCli, BadInputsExitTwo) {
  const std::vector<std::vector<std::string>> cases = {
      {"profile"},  // no --out
      {"profile", "--device", "tpu", "--out", "x.json"},
      {"profile", "--out", testing::temp_path("p.json"), "--blocks", "0"},
      {"profile", "--out", testing::temp_path("p.json"), "--blocks", "16", "--dtypes", "bf16"},
      {"profile", "--out", testing::temp_path("p.json"), "--head-dims", "x"},
      {"profile", "--out", "/nonexistent-dir/p.json"},
      {"profile", "--out", testing::temp_path("p.json"), "--threads", "0"},
      {"profile", "--device", "cuda", "--out", testing::temp_path("p.json"), "--threads", "2"},
  };
  for (const auto& args : cases) {
    const auto r = testing::run_cli(args);
    EXPECT_EQ(r.code, 2) << args.back() << r.err;
    EXPECT_EQ(r.err.rfind("ringsim: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(ProfileCli, CudaWithoutGpuSaysWhy) {
  std::string why;
  if (cuda_profile_available(&why))
    GTEST_SKIP() << "a GPU is present; the CUDA profile is covered by tests/gpu";
  const auto r =
      testing::run_cli({"profile", "--device", "cuda", "--out", testing::temp_path("cuda.json")});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--device cuda: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
}

// The profile shipped in models/profiles for a CPU like this one.
TEST(Profile, ShippedCpuProfileDrivesTheModel) {
  const std::filesystem::path dir =
      std::filesystem::path(RINGSIM_SOURCE_DIR) / "models" / "profiles";
  int found = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const auto name = e.path().filename().string();
    if (name.rfind("cpu-", 0) != 0 || e.path().extension() != ".json") continue;
    ++found;
    const auto p = read_profile(e.path().string());
    EXPECT_EQ(p.device_kind, "cpu") << name;
    const ProfileModel m(p, "fp32", name);
    for (int d : {64, 128})
      for (bool bwd : {false, true})
        for (bool diag : {false, true}) {
          // Per-entry time at a block in the measured range, and beyond it (the largest block's
          // rate).
          const double t = m.seconds(1 << 20, 1024, d, bwd, diag);
          EXPECT_GT(t, 0) << name;
          EXPECT_GT(m.seconds(1 << 20, 1 << 20, d, bwd, diag), 0) << name;
        }
  }
  EXPECT_GE(found, 1) << "no models/profiles/cpu-*.json";
}

}  // namespace
}  // namespace ringsim::kernels
