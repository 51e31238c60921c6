// `ringsim run --documents`: packed documents reach the closed forms' times
// (analytic engine, in-process), sequence and document packing differ, and
// one document of the whole sequence is today's causal run to the byte, and
// cu_seqlens in a .npy file are the list they encode, to the byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/core/npy.hpp"
#include "tests/run_cli.hpp"

namespace ringsim::cli {
namespace {

using cli_testing::run_cli;

std::string run_json(std::vector<std::string> extra) {
  std::vector<std::string> args{"run",    "--devices", "8",      "--block",  "8192",     "--layout",
                                "zigzag", "--pass",    "fwdbwd", "--engine", "analytic", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_cli(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return r.out;
}

TEST(DocumentsRun, SequenceAndDocumentPackingDiffer) {
  const auto seq = nlohmann::json::parse(run_json({"--documents", "fixed:8192"}));
  const auto doc =
      nlohmann::json::parse(run_json({"--documents", "fixed:8192", "--pack", "document"}));
  const auto causal = nlohmann::json::parse(run_json({}));
  const double ts = seq["time_s"], td = doc["time_s"], tc = causal["time_s"];
  // Zigzag over the packed sequence gives each device two causal chunks at
  // step 0 and one full chunk at one other step, idle at the other six; per
  // document every step does the same smaller share in short varlen calls.
  // Each device's total is the same, so the times differ by the calls' shapes.
  EXPECT_NE(ts, td);
  EXPECT_NE(td, tc);
  EXPECT_NE(ts, tc);
  // Eight documents of 8192 hold 8 x 8192 x 8193 / 2 pairs of 32 heads; one of
  // 65536, 65536 x 65537 / 2 of them: the useful work says which was run.
  const double per_head_docs = 8.0 * 8192 * 8193 / 2, per_head_one = 65536.0 * 65537 / 2;
  EXPECT_DOUBLE_EQ(seq["useful_flops"].get<double>() / doc["useful_flops"].get<double>(), 1.0);
  EXPECT_NEAR(seq["useful_flops"].get<double>() / causal["useful_flops"].get<double>(),
              per_head_docs / per_head_one, 1e-12);
}

// Llama 4's chunked layers (--layer-kind chunked) are its 8192-token chunks
// as packed documents: the same run as --documents fixed:8192 with its
// heads, to the byte in time; its global layers are the plain causal run.
TEST(DocumentsRun, ChunkedLayerIsItsChunksAsDocuments) {
  const std::vector<std::string> scout{"--model", "llama4-scout"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), scout.begin(), scout.end());
    return nlohmann::json::parse(run_json(extra));
  };
  const auto chunked = with({"--layer-kind", "chunked"});
  const auto documents = with({"--documents", "fixed:8192"});
  const auto global = with({}), named = with({"--layer-kind", "global"});
  EXPECT_EQ(chunked["time_s"], documents["time_s"]);
  EXPECT_EQ(chunked["useful_flops"], documents["useful_flops"]);
  EXPECT_EQ(global["time_s"], named["time_s"]);
  EXPECT_LT(chunked["time_s"].get<double>(), global["time_s"].get<double>());
  EXPECT_EQ(chunked["layer_kind"], "chunked");
  EXPECT_EQ(global["layer_kind"], "global");
  EXPECT_TRUE(nlohmann::json::parse(run_json({}))["layer_kind"].is_null());
}

TEST(DocumentsRun, OneDeviceRunsTheSameDocuments) {
  // "vs one device" compares with one GPU attending over the same packed
  // documents (one varlen launch of eight causal calls of 8192), not over one
  // causal document of 65536: 1/8 of the pairs, at shorter calls' lower rate.
  const auto docs = nlohmann::json::parse(run_json({"--documents", "fixed:8192"}));
  const auto causal = nlohmann::json::parse(run_json({}));
  const double ratio =
      docs["single_device_time_s"].get<double>() / causal["single_device_time_s"].get<double>();
  const double pairs = (8.0 * 8192 * 8193 / 2) / (65536.0 * 65537 / 2);
  EXPECT_GT(ratio, pairs);
  EXPECT_LT(ratio, 2 * pairs);
  EXPECT_NEAR(docs["efficiency_vs_single_device"].get<double>(),
              docs["single_device_time_s"].get<double>() / (8 * docs["time_s"].get<double>()),
              1e-12);
}

TEST(DocumentsRun, OneDocumentIsTheCausalRunByteForByte) {
  const auto causal = run_json({});
  EXPECT_EQ(run_json({"--documents", "fixed:64K"}), causal);
  EXPECT_EQ(run_json({"--documents", "64K", "--pack", "document"}), causal);
  EXPECT_EQ(run_json({"--documents", "fixed:1M"}), causal);  // cut to the sequence
}

std::string write_cu_seqlens(const std::string& name, NpyDType dtype,
                             const std::vector<std::int64_t>& cu) {
  const auto path = ::testing::TempDir() + "ringsim_run_" + name;
  std::ofstream(path, std::ios::binary)
      << encode_npy_ints({static_cast<std::int64_t>(cu.size())}, dtype, cu);
  return path;
}

TEST(DocumentsRun, CuSeqlensFileIsTheListByteForByte) {
  // 8K, 2K, 512 and 3000 tokens, repeated to fill 64K and the last one cut,
  // as flash_attn_varlen_func's cu_seqlens.
  const std::vector<std::int64_t> cu{0, 8192, 10240, 10752, 13752};
  for (const auto dtype : {NpyDType::I32, NpyDType::I64}) {
    const auto path = write_cu_seqlens(dtype == NpyDType::I32 ? "cu32.npy" : "cu64.npy", dtype, cu);
    for (const char* pack : {"sequence", "document"}) {
      const auto list = run_json({"--documents", "8K,2K,512,3000", "--pack", pack});
      EXPECT_EQ(run_json({"--documents", path, "--pack", pack}), list) << path << " " << pack;
      // The documents do change the run (the test can fail).
      EXPECT_NE(list, run_json({"--pack", pack}));
    }
  }
}

TEST(DocumentsRun, BadCuSeqlensFilesAreOneLineNamingTheFile) {
  const std::vector<std::pair<std::string, std::string>> bad{
      {write_cu_seqlens("cu-start.npy", NpyDType::I64, {4, 8, 16}), "must start at 0"},
      {write_cu_seqlens("cu-flat.npy", NpyDType::I32, {0, 8, 8, 16}), "increase strictly"},
      {write_cu_seqlens("cu-zero.npy", NpyDType::I32, {0}), "holds no documents"}};
  for (const auto& [path, words] : bad) {
    const auto r = run_cli({"run", "--engine", "analytic", "--documents", path});
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_EQ(r.err.rfind("ringsim: error: --documents " + path + ": ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// A dataset's histogram is drawn with --seed: the same seed, the same run to
// the byte; another seed, other documents and another run.
TEST(DocumentsRun, DatasetDrawIsTheSeeds) {
  const auto a = run_json({"--documents", "dataset:wikipedia", "--seed", "3"});
  EXPECT_EQ(run_json({"--documents", "dataset:wikipedia", "--seed", "3"}), a);
  EXPECT_NE(run_json({"--documents", "dataset:wikipedia", "--seed", "4"}), a);
  const auto r = run_cli({"run", "--engine", "analytic", "--documents", "dataset:nope"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "ringsim: error: --documents: unknown dataset 'nope' in 'dataset:nope'; known: "
            "wikipedia\n");
}

TEST(DocumentsRun, BadDocumentsAreOneLine) {
  for (const auto& extra : std::vector<std::vector<std::string>>{
           {"--documents", "8,x"},
           {"--documents", "fixed:8", "--no-causal"},
           // One document of the whole sequence (256 tokens) is refused alike:
           // it was run non-causal, without a word about the documents.
           {"--documents", "fixed:256", "--no-causal"},
           {"--documents", "256", "--no-causal"},
           {"--pack", "thd"}}) {
    std::vector<std::string> args{"run", "--engine", "analytic", "--devices", "4", "--block", "64"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_cli(args);
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(DocumentsRun, ManyShortDocumentsCostTheirStepsNotTheirCount) {
  // 350,000 documents of 1-2 tokens on a ring of 512: each step's calls are
  // found by a few searches where its blocks share no document (seconds,
  // where walking every document at every step took minutes). The answer is
  // whole: every pair of the mask, and no time below the ideal.
  const auto r = run_cli({"run", "--engine", "analytic", "--devices", "512", "--block", "1K",
                          "--documents", "uniform:1..2", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["time_s"].get<double>(), 0);
  EXPECT_LE(j["efficiency"].get<double>(), 1.0);
  EXPECT_TRUE(j["min_block"].is_null()) << "packed documents have no minimum block";
}

TEST(DocumentsRun, SizeGuardRefusesBeforeAnyWork) {
  const auto ring = run_cli({"run", "--engine", "analytic", "--devices", "4096", "--block", "4K",
                             "--documents", "lognormal:512,1"});
  EXPECT_EQ(ring.code, 2);
  EXPECT_EQ(ring.err,
            "ringsim: error: --devices: 4096 devices with packed documents are beyond the closed "
            "forms' size guard: they evaluate every device at every ring step (16777216 "
            "device-steps), at most 4194304; give --devices 2048 or fewer\n");
  const auto striped = run_cli({"run", "--engine", "analytic", "--devices", "1024", "--block", "1K",
                                "--layout", "striped", "--documents", "uniform:1..4"});
  EXPECT_EQ(striped.code, 2);
  EXPECT_EQ(striped.err.rfind("ringsim: error: --devices/--block: 1024 devices of 1024 tokens", 0),
            0u)
      << striped.err;
  EXPECT_EQ(std::count(striped.err.begin(), striped.err.end(), '\n'), 1) << striped.err;
}

}  // namespace
}  // namespace ringsim::cli
