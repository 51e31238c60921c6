// nccl-tests outputs to a catalog overlay (docs/own-cluster.md): the reader on
// real published outputs (tests/data/nccl-tests/SOURCES.md) and on broken
// copies of them, the measured curve's interpolation, and the overlay through
// the collectives model as every command runs it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "models/analytic/collectives.hpp"
#include "models/core/catalog.hpp"
#include "models/core/errors.hpp"
#include "models/core/nccl_tests.hpp"
#include "proc/resolve.hpp"
#include "tests/run_cli.hpp"

namespace ringsim {
namespace {

const std::string kDir = RINGSIM_NCCL_TESTS_DATA;

std::string slurp(const std::string& name) {
  std::ifstream in(kDir + "/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

NcclTestsRun parse(const std::string& name) {
  const auto text = slurp(name);
  const auto kind = nccl_tests_kind(text, name);
  EXPECT_TRUE(kind.has_value()) << name;
  return parse_nccl_tests(text, name, kind.value_or(MeasuredKind::AllReduce));
}

std::string refusal(const std::string& text, MeasuredKind k = MeasuredKind::AllReduce) {
  try {
    parse_nccl_tests(text, "f.txt", k);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(NcclTests, ReadsEveryPublishedOutput) {
  struct Want {
    const char* file;
    MeasuredKind kind;
    int ranks, nodes;
    std::size_t rows;
    double largest_busbw;  // GB/s as printed, out-of-place
  };
  const Want want[] = {
      {"a100-sxm4-40gb-nvlink-1node-8gpu-all_reduce.txt", MeasuredKind::AllReduce, 8, 1, 28,
       235.14},
      {"a100-sxm4-40gb-roce-2node-16gpu-all_reduce.txt", MeasuredKind::AllReduce, 16, 2, 25, 87.18},
      {"h100-xe9680-ib-2node-16gpu-all_reduce.txt", MeasuredKind::AllReduce, 16, 2, 0, 469.21},
      {"h100-dgx-2node-16gpu-all_reduce.txt", MeasuredKind::AllReduce, 16, 2, 0, 472.35},
      {"h100-gcp-a3mega-2node-16gpu-all_reduce.txt", MeasuredKind::AllReduce, 16, 2, 31, 338.82},
      {"b200-nvlink-1node-8gpu-all_gather.txt", MeasuredKind::AllGather, 8, 1, 8, 656.17},
      {"b200-nvlink-1node-8gpu-reduce_scatter.txt", MeasuredKind::ReduceScatter, 8, 1, 8, 666.60},
      {"b200-nvlink-1node-8gpu-sendrecv.txt", MeasuredKind::SendRecv, 8, 1, 8, 694.96},
      {"b200-nvlink-1node-8gpu-alltoall.txt", MeasuredKind::AllToAll, 8, 1, 8, 647.70}};
  for (const auto& w : want) {
    SCOPED_TRACE(w.file);
    const auto r = parse(w.file);
    EXPECT_EQ(r.kind, w.kind);
    EXPECT_EQ(r.ranks, w.ranks);
    EXPECT_EQ(r.nodes, w.nodes);
    if (w.rows) {
      EXPECT_EQ(r.rows.size(), w.rows);
    }
    EXPECT_DOUBLE_EQ(r.rows.back().busbw, w.largest_busbw);
    // The curve's busbw is recomputed from the time column: it agrees with
    // the printed one to the printed precision (4 significant digits).
    const auto c = r.curve(w.file);
    EXPECT_NEAR(c.busbw(c.points.size() - 1) / 1e9, w.largest_busbw, 5e-4 * w.largest_busbw);
  }
}

TEST(NcclTests, RefusesBrokenTables) {
  const auto good = slurp("a100-sxm4-40gb-nvlink-1node-8gpu-all_reduce.txt");
  EXPECT_NE(refusal(good.substr(0, good.rfind("0    ") - 20)).find("fields where the header"),
            std::string::npos);  // the last row cut mid-way
  EXPECT_NE(refusal("hello\nworld\n").find("no nccl-tests results table"), std::string::npos);
  std::string mixed = good;
  mixed.replace(mixed.find("A100-SXM4-40GB"), 14, "A100-SXM4-80GB");
  EXPECT_NE(refusal(mixed).find("mixed GPUs"), std::string::npos);
  std::string no_ranks;
  std::istringstream in(good);
  for (std::string line; std::getline(in, line);)
    if (line.find("Rank") == std::string::npos) no_ranks += line + "\n";
  EXPECT_NE(refusal(no_ranks).find("Rank N"), std::string::npos);
  // An all-reduce read as an all-gather: busbw/algbw is 2(n-1)/n, not (n-1)/n.
  EXPECT_NE(refusal(good, MeasuredKind::AllGather).find("busbw/algbw"), std::string::npos);
}

TEST(NcclTests, KindFromTextOrName) {
  EXPECT_EQ(nccl_tests_kind("$ ./build/all_reduce_perf -b 8", "x.txt"), MeasuredKind::AllReduce);
  EXPECT_EQ(nccl_tests_kind("", "runs/allgather-16gpu.log"), MeasuredKind::AllGather);
  EXPECT_FALSE(nccl_tests_kind("", "run.txt").has_value());
  EXPECT_FALSE(nccl_tests_kind("broadcast_perf -b 8", "x.txt").has_value());
  EXPECT_FALSE(nccl_tests_kind("all_reduce_perf then all_gather_perf", "x.txt").has_value());
}

// Every other size held out and predicted from its neighbours (4x apart):
// what the curve between measured sizes is worth on a real output.
double held_out_error(const std::string& file) {
  const auto full = parse(file).curve(file);
  MeasuredCurve half = full;
  half.points.clear();
  for (std::size_t i = 0; i < full.points.size(); i += 2) half.points.push_back(full.points[i]);
  double worst = 0;
  for (std::size_t i = 1; i + 1 < full.points.size(); i += 2) {
    const auto& [bytes, t] = full.points[i];
    worst = std::max(worst, std::abs(half.seconds(bytes, full.ranks) / t - 1));
  }
  return worst;
}

TEST(MeasuredCurve, ExactAtMeasuredSizesAndBetween) {
  const auto c = parse("a100-sxm4-40gb-nvlink-1node-8gpu-all_reduce.txt").curve("f");
  for (const auto& [bytes, t] : c.points) EXPECT_NEAR(c.seconds(bytes, c.ranks), t, 1e-12);
  // Below the smallest size: the latency floor; above the largest: its busbw.
  EXPECT_DOUBLE_EQ(c.seconds(1, c.ranks), c.points.front().second);
  const auto& [big, tbig] = c.points.back();
  EXPECT_NEAR(c.seconds(2 * big, c.ranks), 2 * tbig, 1e-12);
  // Another group size keeps the bus bandwidth: 16 ranks take (2*15/16)/(2*7/8).
  EXPECT_NEAR(c.seconds(big, 16) / tbig, (30.0 / 16) / (14.0 / 8), 1e-12);
  const double a100 = held_out_error("a100-sxm4-40gb-nvlink-1node-8gpu-all_reduce.txt");
  const double a3 = held_out_error("h100-gcp-a3mega-2node-16gpu-all_reduce.txt");
  std::printf(
      "held-out sizes (every other one, predicted from neighbours 4x apart): worst "
      "%.1f%% (A100 NVLink), %.1f%% (H100 A3 Mega, 2 nodes)\n",
      100 * a100, 100 * a3);
  // NCCL switches protocol (LL, LL128, Simple) and algorithm with the size, so
  // the time between two sizes 4x apart is not a power law; a step half-way
  // in the gap can put the interpolation off by a third at most (a protocol
  // switch changes the rate by up to ~2x, and half of it lands in the gap).
  EXPECT_LT(a100, 0.35);
  EXPECT_LT(a3, 0.35);
}

// The done-when of docs/own-cluster.md: the overlay read back as any command
// reads --catalog, the cluster resolved, and each measured size through
// collective_time within 5% of the file's busbw (intra- and inter-node).
TEST(NcclImport, OverlayDrivesTheCollectivesModel) {
  const auto out = (std::filesystem::temp_directory_path() / "ringsim-nccl-overlay.json").string();
  const std::string intra = "a100-sxm4-40gb-nvlink-1node-8gpu-all_reduce.txt";
  const std::string inter = "a100-sxm4-40gb-roce-2node-16gpu-all_reduce.txt";
  const auto r = cli_testing::run_cli({"hardware", "--import-nccl-tests", kDir + "/" + intra,
                                       kDir + "/" + inter, "--cluster", "dgx-a100", "--out", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("reproduces every size within"), std::string::npos) << r.out;
  Catalog cat = Catalog::embedded();
  cat.merge_file(out);
  proc::HardwareSpec h;
  h.cluster = "dgx-a100";
  const auto hw = proc::resolve_hardware(h, cat, DType::BF16);
  const auto plain = proc::resolve_hardware(h, Catalog::embedded(), DType::BF16);
  for (const auto& file : {intra, inter}) {
    SCOPED_TRACE(file);
    const auto run = parse(file);
    const CollectiveGroup g{run.ranks, run.ranks / run.nodes};
    double moved = 0;
    for (const auto& row : run.rows) {
      const double f = bus_factor(run.kind, run.ranks);
      const double measured = f * row.bytes / (row.time_us * 1e-6);
      const auto t = collective_time(Collective::AllReduce, row.bytes, g, hw);
      EXPECT_EQ(std::string(t.algorithm), "measured");
      EXPECT_NEAR(f * row.bytes / t.seconds / measured, 1.0, 0.05) << row.bytes;
      const auto p = collective_time(Collective::AllReduce, row.bytes, g, plain);
      moved = std::max(moved, std::abs(p.seconds / t.seconds - 1));
    }
    EXPECT_GT(moved, 0.2);  // the datasheet model and the measured fabric differ
  }
  std::filesystem::remove(out);
}

TEST(NcclImport, RefusesWithOneLine) {
  const auto file = kDir + "/a100-sxm4-40gb-nvlink-1node-8gpu-all_reduce.txt";
  const auto no_cluster =
      cli_testing::run_cli({"hardware", "--import-nccl-tests", file, "--out", "/tmp/x.json"});
  EXPECT_EQ(no_cluster.code, 2);
  EXPECT_NE(no_cluster.err.find("needs --cluster NAME"), std::string::npos) << no_cluster.err;
  // 8 GPUs of one host against a 4-GPU node: a file from another cluster.
  const auto wrong = cli_testing::run_cli(
      {"hardware", "--import-nccl-tests", file, "--cluster", "tpu-v4-pod", "--out", "/tmp/x.json"});
  EXPECT_EQ(wrong.code, 2);
  EXPECT_NE(wrong.err.find("GPUs per node"), std::string::npos) << wrong.err;
  EXPECT_EQ(std::count(wrong.err.begin(), wrong.err.end(), '\n'), 1) << wrong.err;
  const auto stray = cli_testing::run_cli({"hardware", "--out", "/tmp/x.json"});
  EXPECT_EQ(stray.code, 2);
}

}  // namespace
}  // namespace ringsim
