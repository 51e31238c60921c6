// The real ring is exact: every layout, causal or not, forward and backward, on
// 4 MPI ranks of this host, against the float64 reference with `ringsim
// verify`'s tolerances. Also: .npy inputs, a check that can fail, bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <tuple>

#include "models/core/npy.hpp"
#include "mpi/inputs.hpp"
#include "tests/mpi/mpirun.hpp"

namespace ringsim::mpi::test {
namespace {

using nlohmann::json;

json summary_of(const MpiRun& r) {
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(r.out);
}

// Every tensor of the check is within tolerance; returns how many were checked.
std::size_t expect_exact(const json& s) {
  EXPECT_TRUE(s.contains("check"));
  const auto& c = s["check"];
  EXPECT_TRUE(c["matches"].get<bool>()) << c.dump();
  for (const auto& e : c["errors"])
    EXPECT_TRUE(e["ok"].get<bool>())
        << e["tensor"] << " " << e["max_abs"] << " > " << e["tolerance"];
  return c["errors"].size();
}

class ExactEveryLayout : public ::testing::TestWithParam<std::tuple<const char*, bool>> {};

// GQA (4 query heads on 2 KV heads), fp32, a tile smaller than the block so
// the diagonal tiles are masked element by element; fwdbwd covers O, LSE,
// dQ, dK, dV in one launch.
TEST_P(ExactEveryLayout, ForwardAndBackwardMatchFullAttention) {
  const auto [layout, causal] = GetParam();
  const auto r =
      run_mpi(4, std::string("--layout ") + layout + (causal ? " --causal" : " --no-causal") +
                     " --pass fwdbwd --block 32 --heads 4 --kv-heads 2 --head-dim 16"
                     " --tile 16 --check --json");
  const auto s = summary_of(r);
  EXPECT_EQ(expect_exact(s), 5u);
  EXPECT_EQ(s["devices"], 4);
  EXPECT_EQ(s["layout"], layout);
  EXPECT_EQ(s["steps"].size(), 8u);  // 4 forward + 4 backward steps
}

INSTANTIATE_TEST_SUITE_P(Layouts, ExactEveryLayout,
                         ::testing::Combine(::testing::Values("ring", "zigzag", "striped"),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) ? "Causal" : "Full");
                         });

// fp64 with an odd rank count and a tile that does not divide the block: the
// error must be at fp64 level, so a silently dropped row or tile shows up.
// Two kernel threads per rank (one rank per core group) on one of the ranks' runs.
TEST(MpiRing, Fp64ThreeRanksRaggedTiles) {
  const auto s = summary_of(
      run_mpi(3,
              "--layout zigzag --pass bwd --block 18 --heads 8 --kv-heads 1 --head-dim 8 --tile 7 "
              "--dtype fp64 --threads 2 --check --json"));
  EXPECT_EQ(expect_exact(s), 5u);
  EXPECT_EQ(s["threads"], 2);
  for (const auto& e : s["check"]["errors"]) EXPECT_LT(e["max_abs"].get<double>(), 1e-12);
}

// The text mode prints the line users grep for.
TEST(MpiRing, PrintsMatchesLine) {
  const auto r =
      run_mpi(4, "--layout striped --block 16 --heads 2 --kv-heads 2 --head-dim 8 --check");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Matches full attention: True"), std::string::npos) << r.out;
}

// With tolerances shrunk far below fp32 rounding the same run must fail,
// with exit code 1: the check compares real numbers.
TEST(MpiRing, CheckCanFail) {
  const auto r = run_mpi(4,
                         "--block 16 --heads 2 --kv-heads 1 --head-dim 8 --check "
                         "--tolerance-factor 1e-9");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("Matches full attention: False"), std::string::npos) << r.out;
}

// .npy inputs as `ringsim verify` reads them: [tokens, heads, head_dim].
TEST(MpiRing, NpyInputs) {
  const auto dir = scratch_dir("npy");
  const std::int64_t S = 64;
  const int H = 4, Hk = 2, D = 8;
  auto save = [&](const char* name, Tensor t, int heads) {
    const auto path = (dir / name).string();
    write_npy(path, name, {S, heads, D}, NpyDType::F32, synthetic_tensor(7, t, S, heads, D));
    return path;
  };
  const auto q = save("q.npy", Tensor::Q, H), k = save("k.npy", Tensor::K, Hk),
             v = save("v.npy", Tensor::V, Hk);
  const auto s = summary_of(run_mpi(
      4, "--layout zigzag --pass fwdbwd --q " + q + " --k " + k + " --v " + v + " --check --json"));
  EXPECT_EQ(expect_exact(s), 5u);
  EXPECT_EQ(s["block"], S / 4);
  EXPECT_EQ(s["heads"], H);
  EXPECT_EQ(s["kv_heads"], Hk);

  // A sequence that does not split over the ranks: one error line, exit 2.
  const auto r = run_mpi(3, "--q " + q + " --k " + k + " --v " + v);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("ringsim-mpi: error: --q"), std::string::npos) << r.err;

  // float64 values beyond fp32's range: refused before any rank computes
  // (they became inf, and the check printed "inf (tol -nan)"); a budget the
  // header already exceeds: refused before the data is read.
  auto big = synthetic_tensor(7, Tensor::V, S, Hk, D);
  big[5] = 1e300;
  const auto vbig = (dir / "vbig.npy").string();
  write_npy(vbig, "vbig", {S, Hk, D}, NpyDType::F64, big);
  const auto q64 = (dir / "q64.npy").string(), k64 = (dir / "k64.npy").string();
  write_npy(q64, "q64", {S, H, D}, NpyDType::F64, synthetic_tensor(7, Tensor::Q, S, H, D));
  write_npy(k64, "k64", {S, Hk, D}, NpyDType::F64, synthetic_tensor(7, Tensor::K, S, Hk, D));
  const auto rr = run_mpi(4, "--q " + q64 + " --k " + k64 + " --v " + vbig + " --check");
  EXPECT_EQ(rr.code, 2) << rr.out << rr.err;
  EXPECT_NE(rr.err.find("beyond the range of fp32"), std::string::npos) << rr.err;
  const auto rb = run_mpi(4, "--q " + q + " --k " + k + " --v " + v + " --max-input 1K");
  EXPECT_EQ(rb.code, 2);
  EXPECT_NE(rb.err.find("more than the --max-input budget"), std::string::npos) << rb.err;
  std::filesystem::remove_all(dir);
}

// Bad input: one line from rank 0 (not one per rank), exit 2 on every rank.
TEST(MpiRing, BadInputOneLineExit2) {
  for (const char* args : {"--layout zigzag --block 17", "--layout ulysses",
                           "--heads 8 --kv-heads 3", "--q /nonexistent/q.npy --k a --v b",
                           "--trace /nonexistent/dir/t.json", "--no-such-flag"}) {
    const auto r = run_mpi(4, args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    const auto first = r.err.find("ringsim-mpi: error:");
    ASSERT_NE(first, std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(r.err.find("ringsim-mpi: error:", first + 1), std::string::npos)
        << "more than one rank reported: " << r.err;
  }
}

// The ping-pong mode's JSON carries what a SimGrid platform needs.
TEST(MpiRing, PingPongReportsLatencyAndBandwidth) {
  const auto s = summary_of(run_mpi(2, "--pingpong --pp-min 8 --pp-max 64K --pp-iters 5 --json"));
  EXPECT_GT(s["latency_s"].get<double>(), 0);
  EXPECT_GT(s["bandwidth_Bps"].get<double>(), 0);
  EXPECT_EQ(s["points"].size(), 14u);  // 8 B .. 64 KiB in powers of two
  EXPECT_EQ(s["points"].front()["bytes"], 8);
  EXPECT_EQ(s["points"].back()["bytes"], 65536);
  // The ring step's own pattern and the overlap probe (values are timings:
  // only their presence and range are checked, never their size).
  EXPECT_GE(s["ring_step_latency_s"].get<double>(), 0);  // an intercept, clamped at 0
  EXPECT_GT(s["ring_step_bandwidth_Bps"].get<double>(), 0);
  for (const auto& p : s["points"]) EXPECT_GT(p["ring_step_s"].get<double>(), 0) << p;
  ASSERT_EQ(s["overlap_points"].size(), 2u);  // 16 KiB and the largest size, 64 KiB
  EXPECT_EQ(s["overlap_points"][0]["bytes"], 16384);
  EXPECT_EQ(s["overlap_points"][1]["bytes"], 65536);
  for (const auto& q : s["overlap_points"]) {
    EXPECT_GE(q["overlap"].get<double>(), 0);
    EXPECT_LE(q["overlap"].get<double>(), 1);
    EXPECT_GT(q["spin_s"].get<double>(), 0);
  }
  const double ov = s["overlap"].get<double>();
  EXPECT_EQ(s["overlap_mode"], ov < 0.5 ? "none" : "full");
}

}  // namespace
}  // namespace ringsim::mpi::test
