// `ringsim verify` through the real command line: the demo, --json, outputs,
// exit 1 on an exceeded tolerance, and one line + exit 2 for each bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "kernels/accuracy.hpp"
#include "models/core/npy.hpp"

namespace ringsim::kernels {
namespace {

using testing::run_cli;
using testing::temp_path;

std::string write_tensor(const std::string& name, std::vector<std::int64_t> shape, NpyDType t,
                         std::uint64_t seed) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  const auto path = temp_path(name);
  write_npy(path, path, shape, t, testing::randn(static_cast<std::size_t>(n), seed));
  return path;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(VerifyCli, DemoWithNoArguments) {
  const auto r = run_cli({"verify"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Largest score block per device: 8x8, full matrix: 32x32\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Matches full attention: True\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(VerifyCli, JsonAndEveryLayoutBackward) {
  for (const char* layout : {"ring", "striped", "zigzag", "ulysses", "allgather", "hybrid"}) {
    const auto r = run_cli({"verify", "--layout", layout, "--devices", "2", "--block", "4",
                            "--heads", "4", "--kv-heads", "2", "--pass", "fwdbwd", "--json"});
    ASSERT_EQ(r.code, 0) << layout << r.out << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["layout"], layout);
    EXPECT_TRUE(j["matches"].get<bool>());
    EXPECT_TRUE(j["work"]["matches_model"].get<bool>());
    EXPECT_EQ(j["errors"].size(), 5u);  // O, LSE, dQ, dK, dV
    for (const auto& e : j["errors"])
      EXPECT_LE(e["max_abs"].get<double>(), e["tolerance"].get<double>());
  }
}

TEST(VerifyCli, ExceededToleranceExitsOne) {
  const auto r = run_cli({"verify", "--tolerance-factor", "1e-9"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("Matches full attention: False"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("EXCEEDED"), std::string::npos);
}

TEST(VerifyCli, FilesInOutputsOut) {
  for (auto [t, out_t] :
       {std::pair{NpyDType::F16, NpyDType::F32}, std::pair{NpyDType::F32, NpyDType::F32},
        std::pair{NpyDType::F64, NpyDType::F64}}) {
    const auto q = write_tensor("fq.npy", {12, 4, 8}, t, 1);
    const auto k = write_tensor("fk.npy", {12, 2, 8}, t, 2);
    const auto v = write_tensor("fv.npy", {12, 2, 8}, t, 3);
    const auto o = temp_path("fo.npy"), lse = temp_path("flse.npy");
    const auto r = run_cli({"verify", "--q", q, "--k", k, "--v", v, "--devices", "3", "--layout",
                            "striped", "--out", o, "--lse-out", lse});
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("Largest score block per device: 4x4, full matrix: 12x12"),
              std::string::npos);
    const auto oa = read_npy(o, "o", 3), la = read_npy(lse, "lse", 2);
    EXPECT_EQ(oa.shape, (std::vector<std::int64_t>{12, 4, 8}));
    EXPECT_EQ(la.shape, (std::vector<std::int64_t>{12, 4}));
    EXPECT_EQ(oa.dtype, out_t);
    EXPECT_EQ(la.dtype, out_t);
  }
}

// Inputs whose scores overflow even float64 (|q|, |k| ~ 1e200): the errors and
// the tolerance come out infinite or NaN, and the check must say it could not
// judge and fail, never read inf <= inf as a match.
TEST(VerifyCli, OverflowingInputsCannotPass) {
  auto huge = [](const std::string& name, std::vector<std::int64_t> shape, std::uint64_t seed) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    auto x = testing::randn(static_cast<std::size_t>(n), seed);
    for (auto& v : x) v *= 1e200;
    const auto path = temp_path(name);
    write_npy(path, path, shape, NpyDType::F64, x);
    return path;
  };
  const auto q = huge("hq.npy", {8, 2, 4}, 1), k = huge("hk.npy", {8, 1, 4}, 2),
             v = write_tensor("hv.npy", {8, 1, 4}, NpyDType::F64, 3);
  const auto r = run_cli({"verify", "--q", q, "--k", k, "--v", v, "--devices", "2"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("NOT JUDGED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Matches full attention: False"), std::string::npos) << r.out;
}

TEST(Accuracy, NonFiniteNeverMatches) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  EXPECT_TRUE(compare("x", {1.0, -inf}, {1.0, -inf}, 1e-6).ok);  // masked LSE rows agree
  EXPECT_FALSE(compare("x", {inf}, {inf}, 1e-6).ok);             // +inf is never a result
  EXPECT_FALSE(compare("x", {nan}, {1.0}, 1e-6).ok);
  EXPECT_FALSE(compare("x", {1.0}, {1.0}, inf).ok);  // an infinite tolerance judges nothing
  EXPECT_FALSE(compare("x", {1.0}, {1.0}, nan).ok);
  const auto e = compare("x", {inf}, {1.0}, inf);
  EXPECT_FALSE(e.ok);
  EXPECT_FALSE(e.reason.empty());
}

// Values V ~ 1e-40 are subnormal in float32: the relative tolerance tau max|V|
// falls below the spacing float32 has there, and the backward's gradients,
// computed right, "exceeded" it. The absolute floor judges them, and says so;
// a wrong answer of the same size is still caught.
TEST(VerifyCli, SubnormalValuesAreJudgedAgainstTheAbsoluteFloor) {
  auto tiny = [](const std::string& name, std::vector<std::int64_t> shape, std::uint64_t seed) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    auto x = testing::randn(static_cast<std::size_t>(n), seed);
    for (auto& v : x) v *= 1e-40;
    const auto path = temp_path(name);
    write_npy(path, path, shape, NpyDType::F32, x);
    return path;
  };
  const auto q = write_tensor("sq.npy", {16, 1, 8}, NpyDType::F32, 1),
             k = write_tensor("sk.npy", {16, 1, 8}, NpyDType::F32, 2),
             v = tiny("sv.npy", {16, 1, 8}, 3);
  const auto r = run_cli(
      {"verify", "--q", q, "--k", k, "--v", v, "--devices", "4", "--pass", "fwdbwd", "--json"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  int floored = 0;
  for (const auto& e : j.at("errors"))
    if (e.contains("note")) ++floored;
  EXPECT_GT(floored, 0) << r.out;

  ToleranceModel m;
  m.unit_roundoff = std::ldexp(1.0, -24);
  m.smallest = std::numeric_limits<float>::denorm_min();
  m.head_dim = 8;
  m.seq_k = 16;
  const double floor = m.floor();
  EXPECT_GT(floor, m.smallest);
  EXPECT_LT(floor, 1e-40);  // still far below the values: a wrong answer fails
  EXPECT_TRUE(compare("x", {floor / 2}, {0.0}, 0.0, floor).ok);
  EXPECT_FALSE(compare("x", {1e-40}, {0.0}, 0.0, floor).ok);
  EXPECT_FALSE(compare("x", {1e-40}, {0.0}, 0.0, floor).note.empty());
}

// Every bad input: exit 2, one line on stderr that names the file or flag.
TEST(VerifyCli, BadInputsExitTwoWithOneLine) {
  const auto q = write_tensor("bq.npy", {8, 2, 4}, NpyDType::F32, 1);
  const auto k = write_tensor("bk.npy", {8, 1, 4}, NpyDType::F32, 2);
  const auto v = write_tensor("bv.npy", {8, 1, 4}, NpyDType::F32, 3);
  const auto k64 = write_tensor("bk64.npy", {8, 1, 4}, NpyDType::F64, 2);
  const auto kshort = write_tensor("bks.npy", {6, 1, 4}, NpyDType::F32, 2);
  const auto kdim = write_tensor("bkd.npy", {8, 1, 5}, NpyDType::F32, 2);
  const auto k3 = write_tensor("bk3.npy", {8, 3, 4}, NpyDType::F32, 2);
  const auto text = temp_path("text.npy");
  write_bytes(text, "q,k,v\n1,2,3\n");
  auto good = encode_npy({8, 2, 4}, NpyDType::F32, testing::randn(64, 1));
  const auto trunc = temp_path("trunc.npy");
  write_bytes(trunc, good.substr(0, good.size() - 5));
  auto fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  const auto fort = temp_path("fortran.npy");
  write_bytes(fort, fortran);
  auto ints = good;
  ints.replace(ints.find("<f4"), 3, "<i4");
  const auto intp = temp_path("ints.npy");
  write_bytes(intp, ints);
  auto nan = good;
  std::memcpy(nan.data() + nan.size() - 4, "\x00\x00\xc0\x7f", 4);  // float NaN, little-endian
  const auto nanp = temp_path("nan.npy");
  write_bytes(nanp, nan);

  struct Bad {
    std::vector<std::string> args;
    std::string needle;
  };
  const std::vector<Bad> cases = {
      {{"--q", text, "--k", k, "--v", v}, "--q " + text + ": not a .npy file"},
      {{"--q", trunc, "--k", k, "--v", v}, "truncated data"},
      {{"--q", intp, "--k", k, "--v", v}, "unsupported dtype '<i4'"},
      {{"--q", fort, "--k", k, "--v", v}, "fortran_order is True"},
      {{"--q", nanp, "--k", k, "--v", v}, "is NaN"},
      {{"--q", q, "--k", kshort, "--v", kshort}, "--k " + kshort + ": 6 tokens"},
      {{"--q", q, "--k", k, "--v", kshort}, "--v " + kshort + ": shape"},
      {{"--q", q, "--k", kdim, "--v", kdim}, "head_dim 5"},
      {{"--q", q, "--k", k3, "--v", k3}, "3 KV heads must divide"},
      {{"--q", q, "--k", k64, "--v", v}, "dtypes"},
      {{"--q", q}, "--q/--k/--v: give all three"},
      {{"--q", q, "--k", k, "--v", v, "--devices", "3"}, "not divisible by 3 devices"},
      {{"--q", q, "--k", k, "--v", v, "--block", "3"}, "--block:"},
      {{"--q", q, "--k", k, "--v", v, "--heads", "4"}, "--heads: the .npy files have 2"},
      {{"--q", q, "--k", k, "--v", v, "--layout", "ulysses", "--devices", "2"},
       "--devices: ulysses"},
      {{"--q", q, "--k", k, "--v", v, "--dtype", "fp64"}, "--dtype"},
      {{"--q", temp_path("missing.npy"), "--k", k, "--v", v}, "no such file"},
      {{"--layout", "hybrid", "--heads", "4", "--kv-heads", "2", "--ulysses-degree", "4"},
       "--ulysses-degree"},
      {{"--layout", "ulysses", "--heads", "8", "--kv-heads", "2"}, "--devices: ulysses"},
      {{"--layout", "zigzag", "--block", "7"}, "--block: zigzag"},
      {{"--layout", "ring", "--ulysses-degree", "2"}, "only applies to --layout hybrid"},
      {{"--layout", "spiral"}, "--layout"},
      {{"--pass", "sideways"}, "--pass"},
      {{"--devices", "0"}, "--devices"},
      {{"--devices", "2000"}, "--devices"},
      {{"--kv-heads", "3", "--heads", "4"}, "--kv-heads"},
      {{"--block", "100000", "--devices", "64"}, "too large to check"},
      {{"--out", "/nonexistent-dir/o.npy"}, "--out: cannot write '/nonexistent-dir/o.npy'"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"verify"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = run_cli(args);
    EXPECT_EQ(r.code, 2) << c.needle << "\n" << r.out << r.err;
    EXPECT_EQ(r.err.rfind("ringsim: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos)
        << "wanted: " << c.needle << "\ngot: " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace ringsim::kernels
