// The inference emulator (kernels/inference.hpp) against the float64
// reference for prefill pass-kv, prefill pass-q and decode, on every ring
// layout, causal and not, MHA and GQA, fp32 and fp64, with and without a KV
// cache; its recorded work against models/core/infer_work.hpp; and
// `ringsim verify --mode prefill|decode` through the real command line.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "kernels/inference.hpp"
#include "models/core/errors.hpp"
#include "models/core/npy.hpp"

namespace ringsim::kernels {
namespace {

using testing::run_cli;
using testing::temp_path;

InferWork infer_work(InferMode mode, InferVariant variant, Layout layout, std::int64_t ranks,
                     std::int64_t cached, std::int64_t fresh, int heads, int kv_heads, int dim,
                     bool causal) {
  InferWork w;
  w.mode = mode;
  w.variant = variant;
  w.layout = layout;
  w.ranks = ranks;
  w.cached = cached;
  w.fresh = fresh;
  w.heads = heads;
  w.kv_heads = kv_heads;
  w.head_dim = dim;
  w.causal = causal;
  return w;
}

std::string describe(const InferWork& w, bool fp64) {
  return fmt::format("{} {} {} N={} cached={} fresh={} H={} Hkv={} d={} {} {}", to_string(w.mode),
                     to_string(w.variant), to_string(w.layout), w.ranks, w.cached, w.fresh, w.heads,
                     w.kv_heads, w.head_dim, w.causal ? "causal" : "full", fp64 ? "fp64" : "fp32");
}

struct Scheme {
  InferMode mode;
  InferVariant variant;
};

const std::vector<Scheme>& schemes() {
  static const std::vector<Scheme> s = {{InferMode::Prefill, InferVariant::PassKv},
                                        {InferMode::Prefill, InferVariant::PassQ},
                                        {InferMode::Decode, InferVariant::PassKv}};
  return s;
}

// Every scheme x layout x mask x MHA/GQA x precision x cache x ranks: the
// emulator matches full attention over cache + new tokens, and every count it
// recorded equals the inference model.
TEST(Inference, EverySchemeMatchesReferenceAndModel) {
  std::uint64_t seed = 1;
  int runs = 0;
  for (const auto& sc : schemes())
    for (Layout layout : {Layout::Ring, Layout::Striped, Layout::Zigzag})
      for (std::int64_t n : {1, 2, 3, 4})
        for (bool causal : {false, true})
          for (auto [h, hk] : {std::pair{2, 2}, std::pair{4, 2}})
            for (bool fp64 : {false, true})
              for (std::int64_t cached_per_unit : {0, 2}) {
                const auto unit = layout == Layout::Zigzag ? 2 * n : n;
                // Prefill: 4 new tokens per rank (even, for zigzag); decode:
                // one token, or 5 (speculative verification, more tokens than ranks).
                const auto fresh =
                    sc.mode == InferMode::Prefill ? 4 * n : (cached_per_unit == 0 ? 5 : 1);
                const auto w = infer_work(sc.mode, sc.variant, layout, n, cached_per_unit * unit,
                                          fresh, h, hk, 5, causal);
                SCOPED_TRACE(describe(w, fp64));
                const auto in =
                    random_infer_inputs(w, seed++, fp64 ? NpyDType::F64 : NpyDType::F32);
                // Tiles smaller than a shard, so steps run several masked and full tiles.
                const auto rep = verify_infer(w, in, fp64, BlockOpts{3, 2});
                for (const auto& e : rep.errors)
                  EXPECT_TRUE(e.ok)
                      << e.tensor << " error " << e.max_abs << " > tolerance " << e.tolerance;
                EXPECT_EQ(rep.work_mismatch, "");
                EXPECT_TRUE(rep.passed());
                ASSERT_EQ(rep.result.o.size(), in.q.size());
                ++runs;
              }
  EXPECT_EQ(runs, 3 * 3 * 4 * 2 * 2 * 2 * 2);
}

// A decode with fewer tokens than ranks and no cache leaves some ranks with
// no keys at all: their partial is empty (LSE -inf) and must merge as nothing.
TEST(Inference, DecodeRanksWithoutKeys) {
  for (bool causal : {false, true}) {
    const auto w =
        infer_work(InferMode::Decode, InferVariant::PassKv, Layout::Ring, 4, 0, 2, 2, 1, 4, causal);
    const auto in = random_infer_inputs(w, 7, NpyDType::F64);
    const auto rep = verify_infer(w, in, true);
    EXPECT_TRUE(rep.passed()) << rep.work_mismatch;
    EXPECT_EQ(rep.result.steps[3][0].entries, 0u);
    EXPECT_EQ(rep.result.steps[3][0].k_cols, 0);
  }
}

TEST(Inference, TinyToleranceFails) {
  for (const auto& sc : schemes()) {
    const auto w = infer_work(sc.mode, sc.variant, Layout::Zigzag, 2, 8, 8, 2, 1, 8, true);
    SCOPED_TRACE(describe(w, false));
    const auto in = random_infer_inputs(w, 3, NpyDType::F32);
    const auto rep = verify_infer(w, in, false, {}, 1e-9);
    EXPECT_FALSE(rep.passed());
    EXPECT_EQ(rep.work_mismatch,
              "");  // the counts are right; only the numbers are judged too strictly
  }
}

// A partial result the merge leaves out (a lost block) is caught by the
// numbers even though every count is still right (the kernel did the work).
TEST(Inference, DroppedPartialIsCaught) {
  for (const auto& sc : schemes())
    for (bool fp64 : {false, true}) {
      const auto w = infer_work(sc.mode, sc.variant, Layout::Ring, 3, 6, 6, 2, 2, 4, true);
      SCOPED_TRACE(describe(w, fp64));
      const auto in = random_infer_inputs(w, 11, fp64 ? NpyDType::F64 : NpyDType::F32);
      // Rank 1's partial at step 1 (decode: its only one); the cache makes
      // every partial see some keys, so dropping it changes the result.
      const InferFault fault{1, sc.mode == InferMode::Decode ? 0 : 1};
      auto r =
          fp64 ? emulate_infer<double>(w, in, {}, fault) : emulate_infer<float>(w, in, {}, fault);
      ASSERT_GT(r.steps[1][static_cast<std::size_t>(fault.drop_step)].entries, 0u);
      const auto rep = judge_infer(w, in, std::move(r), fp64);
      EXPECT_EQ(rep.work_mismatch, "");
      EXPECT_FALSE(rep.errors[0].ok) << "O error " << rep.errors[0].max_abs;
      EXPECT_FALSE(rep.errors[1].ok) << "LSE error " << rep.errors[1].max_abs;
      EXPECT_FALSE(rep.passed());
    }
}

// Corrupted counts are reported, naming the rank and step.
TEST(Inference, CorruptedCountsAreCaught) {
  const auto w =
      infer_work(InferMode::Prefill, InferVariant::PassQ, Layout::Striped, 3, 3, 6, 2, 1, 4, true);
  const auto in = random_infer_inputs(w, 2, NpyDType::F32);
  const auto good = emulate_infer<float>(w, in);
  ASSERT_EQ(check_infer_work(w, good), "");
  auto r = good;
  r.steps[2][1].entries += 1;
  EXPECT_NE(check_infer_work(w, r).find("rank 2 step 1 computed"), std::string::npos);
  r = good;
  r.steps[0][2].sent = 1;  // nothing is sent after the last step
  EXPECT_NE(check_infer_work(w, r).find("rank 0 step 2 sent"), std::string::npos);
  r = good;
  r.steps[1][1].q_source = 1;
  EXPECT_NE(check_infer_work(w, r).find("queries of 1"), std::string::npos);
  r = good;
  r.return_sent[0] = 0;
  EXPECT_NE(check_infer_work(w, r).find("rank 0 returned"), std::string::npos);
  r = good;
  r.steps.pop_back();
  EXPECT_NE(check_infer_work(w, r), "");
}

// N = 2, ring, causal, 4 cached + 4 new tokens, 1 head, head_dim 3, by hand.
// Rank 0 holds cached {0, 1} and new {4, 5}; rank 1 cached {2, 3}, new {6, 7}.
//   pass-kv  rank 0 step 0: queries 4,5 vs K/V {0,1,4,5}: 4 sees 3, 5 sees 4 -> 7
//            rank 0 step 1: queries 4,5 vs {2,3,6,7}: 2 + 2                -> 4
//            rank 1 step 0: queries 6,7 vs {2,3,6,7}: 3 + 4                -> 7
//            rank 1 step 1: queries 6,7 vs {0,1,4,5}: 4 + 4                -> 8
//            ring: each rank sends its 4 tokens' K and V: 2 x 4 x 3        = 24
//   pass-q   rank i at step 1 runs the other's queries on its own K/V:
//            rank 0 step 1: queries 6,7 vs {0,1,4,5} -> 8; rank 1 step 1: 4,5 vs {2,3,6,7} -> 4
//            ring: 2 queries x 1 head x 3 = 6; return: 2 queries x 1 head x (3 + 1) = 8
//   decode   (4 query tokens 4..7; new key j on rank j mod 2: rank 0 {4, 6}, rank 1 {5, 7})
//            rank 0: cache 4 x 2 = 8, key 4 seen by 4 queries, key 6 by 2  -> 14
//            rank 1: cache 8, key 5 seen by 3, key 7 by 1                  -> 12
//            return: rank 1 sends 4 queries x (3 + 1) = 16, rank 0 nothing
// All three total 4 x 4 cached pairs + 4 x 5 / 2 new pairs = 26.
TEST(Inference, HandComputedSmallCase) {
  auto w =
      infer_work(InferMode::Prefill, InferVariant::PassKv, Layout::Ring, 2, 4, 4, 1, 1, 3, true);
  EXPECT_EQ(infer_step_entries(w, 0, 0), 7u);
  EXPECT_EQ(infer_step_entries(w, 0, 1), 4u);
  EXPECT_EQ(infer_step_entries(w, 1, 0), 7u);
  EXPECT_EQ(infer_step_entries(w, 1, 1), 8u);
  EXPECT_EQ(infer_ring_elements(w), 24u);
  EXPECT_EQ(infer_return_elements(w, 0), 0u);
  EXPECT_EQ(infer_return_elements(w, 1), 0u);
  EXPECT_EQ(infer_total_entries(w), 26u);

  w.variant = InferVariant::PassQ;
  EXPECT_EQ(infer_step_entries(w, 0, 0), 7u);
  EXPECT_EQ(infer_step_entries(w, 0, 1), 8u);
  EXPECT_EQ(infer_step_entries(w, 1, 0), 7u);
  EXPECT_EQ(infer_step_entries(w, 1, 1), 4u);
  EXPECT_EQ(infer_ring_elements(w), 6u);
  EXPECT_EQ(infer_return_elements(w, 0), 8u);
  EXPECT_EQ(infer_return_elements(w, 1), 8u);

  w.mode = InferMode::Decode;
  EXPECT_EQ(infer_steps(w), 1);
  EXPECT_EQ(infer_step_entries(w, 0, 0), 14u);
  EXPECT_EQ(infer_step_entries(w, 1, 0), 12u);
  EXPECT_EQ(infer_ring_elements(w), 0u);
  EXPECT_EQ(infer_return_elements(w, 0), 0u);
  EXPECT_EQ(infer_return_elements(w, 1), 16u);
  EXPECT_EQ(infer_total_entries(w), 26u);

  // And the kernels count the same.
  for (const auto& sc : schemes()) {
    w.mode = sc.mode;
    w.variant = sc.variant;
    const auto in = random_infer_inputs(w, 1, NpyDType::F64);
    EXPECT_EQ(check_infer_work(w, emulate_infer<double>(w, in)), "") << describe(w, true);
  }
}

// The closed-form total equals the per-rank-step counts summed, and the
// kernel-counted entries summed, over layouts, masks, caches and rank counts.
TEST(Inference, TotalEntriesIsTheSumOverRanksAndSteps) {
  for (const auto& sc : schemes())
    for (Layout layout : {Layout::Ring, Layout::Striped, Layout::Zigzag})
      for (std::int64_t n : {1, 2, 3, 5})
        for (bool causal : {false, true}) {
          const auto unit = layout == Layout::Zigzag ? 2 * n : n;
          const auto fresh = sc.mode == InferMode::Prefill ? 3 * unit : 7;
          const auto w =
              infer_work(sc.mode, sc.variant, layout, n, 2 * unit, fresh, 3, 1, 1, causal);
          SCOPED_TRACE(describe(w, false));
          std::uint64_t model = 0, kernel = 0;
          const auto r = emulate_infer<float>(w, random_infer_inputs(w, 4, NpyDType::F32));
          for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t s = 0; s < infer_steps(w); ++s) {
              model += infer_step_entries(w, i, s);
              kernel += r.steps[static_cast<std::size_t>(i)][static_cast<std::size_t>(s)].entries;
            }
          EXPECT_EQ(infer_total_entries(w), model);
          EXPECT_EQ(kernel, model);
        }
}

TEST(Inference, WrongSizesAndShardingAreRefused) {
  auto w =
      infer_work(InferMode::Prefill, InferVariant::PassKv, Layout::Ring, 2, 4, 4, 1, 1, 2, true);
  auto in = random_infer_inputs(w, 1, NpyDType::F32);
  in.k.pop_back();
  EXPECT_THROW(emulate_infer<float>(w, in), std::invalid_argument);
  w.cached = 3;
  EXPECT_THROW(emulate_infer<float>(w, random_infer_inputs(w, 1, NpyDType::F32)), InputError);
}

// ---- `ringsim verify --mode prefill|decode` ----

TEST(InferVerifyCli, PrefillAndDecodeText) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--mode", "prefill", "--cached", "16"},
        {"--mode", "prefill", "--variant", "pass-q", "--layout", "zigzag", "--cached", "8"},
        {"--mode", "decode", "--cached", "64", "--decode-tokens", "3", "--layout", "striped"}}) {
    std::vector<std::string> a{"verify"};
    a.insert(a.end(), args.begin(), args.end());
    const auto r = run_cli(a);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(
        r.out.find("Work counts equal the inference model (models/core/infer_work.hpp): True"),
        std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("Matches full attention: True\n"), std::string::npos) << r.out;
    EXPECT_EQ(r.err, "");
  }
  // Default devices 4, block 8: 32 new tokens after 16 cached.
  const auto r = run_cli({"verify", "--mode", "prefill", "--cached", "16"});
  EXPECT_NE(r.out.find("Prefill pass-kv, layout ring on 4 virtual devices: 32 new tokens (8 per "
                       "device) after 16 cached (context 48)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Largest score block per device: 8x12, full matrix: 32x48\n"),
            std::string::npos)
      << r.out;
}

TEST(InferVerifyCli, Json) {
  const auto r = run_cli({"verify", "--mode", "prefill", "--variant", "pass-q", "--devices", "3",
                          "--block", "2", "--cached", "6", "--heads", "4", "--kv-heads", "2",
                          "--dtype", "fp64", "--json"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["mode"], "prefill");
  EXPECT_EQ(j["variant"], "pass-q");
  EXPECT_EQ(j["cached"], 6);
  EXPECT_EQ(j["fresh"], 6);
  EXPECT_EQ(j["block"], 2);
  EXPECT_EQ(j["compute"], "fp64");
  EXPECT_TRUE(j["matches"].get<bool>());
  EXPECT_TRUE(j["work"]["matches_model"].get<bool>());
  EXPECT_EQ(j["work"]["return_elements"].size(), 3u);
  EXPECT_EQ(j["errors"].size(), 2u);
  for (const auto& e : j["errors"])
    EXPECT_LE(e["max_abs"].get<double>(), e["tolerance"].get<double>());

  const auto d = run_cli({"verify", "--mode", "decode", "--cached", "8", "--json"});
  ASSERT_EQ(d.code, 0) << d.out << d.err;
  const auto jd = nlohmann::json::parse(d.out);
  EXPECT_EQ(jd["mode"], "decode");
  EXPECT_TRUE(jd["variant"].is_null());
  EXPECT_EQ(jd["fresh"], 1);
  EXPECT_EQ(jd["work"]["steps"], 1);
}

TEST(InferVerifyCli, ExceededToleranceExitsOne) {
  const auto r =
      run_cli({"verify", "--mode", "decode", "--cached", "8", "--tolerance-factor", "1e-9"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("EXCEEDED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Matches full attention: False"), std::string::npos) << r.out;
}

// .npy inputs: q holds the new tokens, k and v the cache and then the new tokens.
TEST(InferVerifyCli, FilesInOutputsOut) {
  auto write = [](const std::string& name, std::vector<std::int64_t> shape, std::uint64_t seed) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    const auto path = temp_path(name);
    write_npy(path, path, shape, NpyDType::F32, testing::randn(static_cast<std::size_t>(n), seed));
    return path;
  };
  const auto q = write("iq.npy", {8, 4, 6}, 1), k = write("ik.npy", {12, 2, 6}, 2),
             v = write("iv.npy", {12, 2, 6}, 3);
  const auto o = temp_path("io.npy"), lse = temp_path("ilse.npy");
  for (const char* mode : {"prefill", "decode"}) {
    const auto r = run_cli({"verify", "--mode", mode, "--devices", "2", "--layout", "striped",
                            "--q", q, "--k", k, "--v", v, "--out", o, "--lse-out", lse});
    ASSERT_EQ(r.code, 0) << mode << r.out << r.err;
    EXPECT_NE(r.out.find("after 4 cached (context 12)"), std::string::npos) << r.out;
    EXPECT_EQ(read_npy(o, "o", 3).shape, (std::vector<std::int64_t>{8, 4, 6}));
    EXPECT_EQ(read_npy(lse, "lse", 2).shape, (std::vector<std::int64_t>{8, 4}));
  }
  const auto r = run_cli({"verify", "--mode", "prefill", "--devices", "2", "--q", q, "--k", k,
                          "--v", v, "--cached", "8"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--cached: the .npy files hold 4 cached tokens"), std::string::npos)
      << r.err;
  const auto r2 = run_cli({"verify", "--mode", "prefill", "--q", k, "--k", q, "--v", q});
  EXPECT_EQ(r2.code, 2);
  EXPECT_NE(r2.err.find("fewer than the 12 new tokens"), std::string::npos) << r2.err;
}

// Every bad input: exit 2, one line on stderr that names the flag.
TEST(InferVerifyCli, BadInputsExitTwoWithOneLine) {
  struct Bad {
    std::vector<std::string> args;
    std::string needle;
  };
  const std::vector<Bad> cases = {
      {{"--mode", "prefill", "--cached", "6"}, "--cached: the 6 cached tokens must divide evenly"},
      {{"--mode", "decode", "--cached", "3"}, "--cached:"},
      {{"--mode", "prefill", "--layout", "zigzag", "--cached", "4"}, "--cached:"},
      {{"--variant", "pass-q"}, "--variant: applies to --mode prefill"},
      {{"--mode", "train", "--variant", "pass-kv"}, "--variant: applies to --mode prefill"},
      {{"--mode", "decode", "--variant", "pass-q"}, "--variant: applies to --mode prefill"},
      {{"--mode", "prefill", "--variant", "pass-o"},
       "--variant: unknown value 'pass-o'; did you mean 'pass-q'? choose one of: pass-kv, pass-q"},
      {{"--mode", "prefill", "--layout", "ulysses"}, "--layout:"},
      {{"--mode", "decode", "--layout", "allgather"}, "--layout:"},
      {{"--mode", "serve"}, "--mode: unknown value 'serve'; choose one of: train, prefill, decode"},
      {{"--cached", "8"}, "--cached: applies to --mode prefill or decode"},
      {{"--decode-tokens", "2"}, "--decode-tokens: applies to --mode decode"},
      {{"--mode", "prefill", "--decode-tokens", "2"}, "--decode-tokens: applies to --mode decode"},
      {{"--mode", "decode", "--block", "4"}, "--block: applies to --mode train and prefill"},
      {{"--mode", "prefill", "--pass", "fwdbwd"}, "--pass: inference runs the forward pass only"},
      {{"--mode", "prefill", "--layout", "zigzag", "--block", "3"}, "--block: zigzag"},
      {{"--mode", "prefill", "--heads", "4", "--kv-heads", "3"}, "--kv-heads: must divide"},
      {{"--mode", "decode", "--cached", "-4"}, "--cached"},
      {{"--mode", "decode", "--decode-tokens", "0"}, "--decode-tokens"},
      {{"--mode", "decode", "--ulysses-degree", "2"}, "--ulysses-degree"},
      {{"--mode", "decode", "--cached", "1G", "--decode-tokens", "1"}, "too large to check"},
      {{"--mode", "prefill", "--devices", "64", "--block", "1024"}, "too large to check"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"verify"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = run_cli(args);
    EXPECT_EQ(r.code, 2) << c.needle << "\n" << r.out << r.err;
    EXPECT_EQ(r.out, "") << c.needle;
    EXPECT_EQ(r.err.rfind("ringsim: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos)
        << "wanted: " << c.needle << "\ngot: " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace ringsim::kernels
