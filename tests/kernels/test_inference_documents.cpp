// Packed documents in the inference emulator (kernels/inference.hpp): prefill
// pass-kv, pass-q and decode under the document mask over the absolute
// positions (cache, then new tokens) against the float64 reference; the
// emulator's recorded work against models/core/infer_work.hpp; and
// `ringsim verify --mode prefill|decode --documents` through the command line.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "kernels/inference.hpp"
#include "models/core/calls.hpp"
#include "models/core/documents.hpp"
#include "models/core/errors.hpp"

namespace ringsim::kernels {
namespace {

using testing::run_cli;

struct Scheme {
  InferMode mode;
  InferVariant variant;
};

constexpr Scheme kSchemes[] = {{InferMode::Prefill, InferVariant::PassKv},
                               {InferMode::Prefill, InferVariant::PassQ},
                               {InferMode::Decode, InferVariant::PassKv}};

InferWork doc_work(Scheme sc, Layout layout, std::int64_t ranks, std::int64_t cached,
                   std::int64_t fresh, std::vector<std::int64_t> docs) {
  InferWork w;
  w.mode = sc.mode;
  w.variant = sc.variant;
  w.layout = layout;
  w.ranks = ranks;
  w.cached = cached;
  w.fresh = fresh;
  w.heads = 4;
  w.kv_heads = 2;
  w.head_dim = 5;
  w.documents = std::move(docs);
  return w;
}

std::string describe(const InferWork& w) {
  return fmt::format("{} {} {} N={} cached={} fresh={} docs {}", to_string(w.mode),
                     to_string(w.variant), to_string(w.layout), w.ranks, w.cached, w.fresh,
                     fmt::join(w.documents, ","));
}

// Matches the reference in fp64 and fp32, every count equals the model's,
// the model's calls cover its entries, and the total is the sum of the steps.
void expect_exact(const InferWork& w, std::uint64_t seed) {
  SCOPED_TRACE(describe(w));
  std::uint64_t model = 0;
  for (std::int64_t i = 0; i < w.ranks; ++i)
    for (std::int64_t s = 0; s < infer_steps(w); ++s) {
      const auto e = infer_step_entries(w, i, s);
      std::uint64_t calls = 0;
      for (const auto& c : infer_step_calls(w, i, s)) calls += call_pairs(c);
      EXPECT_EQ(calls, e) << "rank " << i << " step " << s;
      model += e;
    }
  EXPECT_EQ(infer_total_entries(w), model);
  for (bool fp64 : {false, true}) {
    const auto in = random_infer_inputs(w, seed, fp64 ? NpyDType::F64 : NpyDType::F32);
    // Tiles smaller than a shard, so document boundaries cut some of them.
    const auto rep = verify_infer(w, in, fp64, BlockOpts{3, 2});
    for (const auto& e : rep.errors)
      EXPECT_TRUE(e.ok) << e.tensor << " error " << e.max_abs << " > tolerance " << e.tolerance
                        << (fp64 ? " fp64" : " fp32");
    EXPECT_EQ(rep.work_mismatch, "");
  }
}

// 8 cached + 16 new tokens on 4 ranks (ring: 2 cached and 4 new per rank).
// Documents [0,3) [3,4) [4,13) [13,24): the 1-token one is shorter than a
// shard; [0,3) crosses the cached shard boundary at 2; [4,13) runs from the
// cache into the new tokens and over the new shards of ranks 0 and 1 (a
// shard boundary inside it); [13,24) spans ranks 1, 2 and 3.
const std::vector<std::int64_t> kDocs{3, 1, 9, 11};

TEST(InferDocuments, TheExampleHasEachCase) {
  const auto starts = document_starts(kDocs);
  EXPECT_LT(kDocs[1], 2);                                       // shorter than a cached shard
  EXPECT_EQ(document_of(starts, 1), document_of(starts, 2));    // cached shard boundary inside
  EXPECT_EQ(document_of(starts, 7), document_of(starts, 8));    // cache and new in one document
  EXPECT_EQ(document_of(starts, 11), document_of(starts, 12));  // new shard boundary inside
  EXPECT_EQ(document_of(starts, 13), document_of(starts, 23));  // spans ranks 1..3
}

TEST(InferDocuments, EverySchemeAndLayoutMatchesTheReference) {
  std::uint64_t seed = 1;
  for (const auto& sc : kSchemes)
    for (Layout l : {Layout::Ring, Layout::Striped, Layout::Zigzag}) {
      // Decode: 4 query tokens after 20 cached (zigzag: 8 after 16, 2 per chunk of 2 x 4).
      const auto cached = sc.mode == InferMode::Decode ? (l == Layout::Zigzag ? 16 : 20) : 8;
      expect_exact(doc_work(sc, l, 4, cached, 24 - cached, kDocs), seed++);
    }
}

TEST(InferDocuments, RandomDocumentListsUnderAFixedSeed) {
  const auto spec = parse_documents("--documents", "uniform:1..12");
  std::uint64_t seed = 100;
  for (const auto& sc : kSchemes)
    for (Layout l : {Layout::Ring, Layout::Striped, Layout::Zigzag})
      for (std::int64_t n : {1, 2, 3}) {
        const auto unit = l == Layout::Zigzag ? 2 * n : n;
        const auto cached = 2 * unit;
        const auto fresh = sc.mode == InferMode::Prefill ? 3 * unit : 5;
        const auto docs = pack_documents("--documents", spec, cached + fresh, seed);
        expect_exact(doc_work(sc, l, n, cached, fresh, docs), seed++);
      }
}

// N = 2, ring, 4 cached + 4 new tokens, documents [0,3) [3,8), 1 head.
// Rank 0 holds cached {0, 1} and new {4, 5}; rank 1 cached {2, 3}, new {6, 7}.
// Query p sees keys 3 .. p.
//   pass-kv  rank 0 step 0: 4,5 vs {0,1,4,5}: 1 + 2 -> 3; step 1: vs {2,3,6,7}: 1 + 1 -> 2
//            rank 1 step 0: 6,7 vs {2,3,6,7}: 2 + 3 -> 5; step 1: vs {0,1,4,5}: 2 + 2 -> 4
//   pass-q   rank 0 step 1: 6,7 vs {0,1,4,5} -> 4; rank 1 step 1: 4,5 vs {2,3,6,7} -> 2
//   decode   queries 4..7; rank 0 keys {0,1,4,6}: 1 + 1 + 2 + 2 -> 6
//                          rank 1 keys {2,3,5,7}: 1 + 2 + 2 + 3 -> 8
// Total: (4-3+1) + ... + (7-3+1) = 2 + 3 + 4 + 5 = 14. Of rank 0's step 0
// pairs none are cached keys; of its step 1, 2 (key 3).
TEST(InferDocuments, HandComputedCounts) {
  auto w = doc_work(kSchemes[0], Layout::Ring, 2, 4, 4, {3, 5});
  w.heads = w.kv_heads = 1;
  EXPECT_EQ(infer_step_entries(w, 0, 0), 3u);
  EXPECT_EQ(infer_step_entries(w, 0, 1), 2u);
  EXPECT_EQ(infer_step_entries(w, 1, 0), 5u);
  EXPECT_EQ(infer_step_entries(w, 1, 1), 4u);
  EXPECT_EQ(infer_step_cached_entries(w, 0, 0), 0u);
  EXPECT_EQ(infer_step_cached_entries(w, 0, 1), 2u);
  EXPECT_EQ(infer_total_entries(w), 14u);
  w.variant = InferVariant::PassQ;
  EXPECT_EQ(infer_step_entries(w, 0, 1), 4u);
  EXPECT_EQ(infer_step_entries(w, 1, 1), 2u);
  w.mode = InferMode::Decode;
  EXPECT_EQ(infer_step_entries(w, 0, 0), 6u);
  EXPECT_EQ(infer_step_entries(w, 1, 0), 8u);
  EXPECT_EQ(infer_total_entries(w), 14u);
  for (const auto& sc : kSchemes) {
    w.mode = sc.mode;
    w.variant = sc.variant;
    const auto in = random_infer_inputs(w, 1, NpyDType::F64);
    EXPECT_EQ(check_infer_work(w, emulate_infer<double>(w, in)), "") << describe(w);
  }
}

// One document of the cache and one of the new tokens: every pair with a
// cached key is masked, and pass-kv rank 0's step 1 (queries 4,5 against keys
// {2,3,6,7}) sees nothing at all. Its partial is skipped: leaving it out of
// the merge changes no bit.
TEST(InferDocuments, FullyMaskedStepIsSkipped) {
  auto w = doc_work(kSchemes[0], Layout::Ring, 2, 4, 4, {4, 4});
  EXPECT_EQ(infer_step_entries(w, 0, 1), 0u);
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t s = 0; s < 2; ++s) EXPECT_EQ(infer_step_cached_entries(w, i, s), 0u);
  const auto in = random_infer_inputs(w, 5, NpyDType::F32);
  const auto full = emulate_infer<float>(w, in);
  EXPECT_EQ(full.steps[0][1].entries, 0u);
  const auto skipped = emulate_infer<float>(w, in, {}, InferFault{0, 1});
  EXPECT_EQ(full.o, skipped.o);
  EXPECT_EQ(full.lse, skipped.lse);
  EXPECT_TRUE(judge_infer(w, in, full, false).passed());
}

// A lost partial, a corrupted output and a corrupted count each fail.
TEST(InferDocuments, CorruptedResultFails) {
  for (const auto& sc : kSchemes) {
    const auto cached = sc.mode == InferMode::Decode ? 20 : 8;
    const auto w = doc_work(sc, Layout::Ring, 4, cached, 24 - cached, kDocs);
    SCOPED_TRACE(describe(w));
    const auto in = random_infer_inputs(w, 9, NpyDType::F64);
    const auto good = emulate_infer<double>(w, in);
    ASSERT_TRUE(judge_infer(w, in, good, true).passed());
    // The first rank-step with visible pairs other than the first of its rank.
    InferFault fault;
    for (std::int64_t i = 0; i < w.ranks && fault.drop_rank < 0; ++i)
      for (std::int64_t s = 0; s < infer_steps(w); ++s)
        if ((s > 0 || sc.mode == InferMode::Decode) &&
            good.steps[static_cast<std::size_t>(i)][static_cast<std::size_t>(s)].entries > 0) {
          fault = {i, s};
          break;
        }
    ASSERT_GE(fault.drop_rank, 0);
    auto lost = judge_infer(w, in, emulate_infer<double>(w, in, {}, fault), true);
    EXPECT_EQ(lost.work_mismatch, "");
    EXPECT_FALSE(lost.passed());
    auto r = good;
    r.o[r.o.size() / 2] += 1e-3;
    EXPECT_FALSE(judge_infer(w, in, r, true).passed());
    r = good;
    r.steps[1][0].entries += 1;
    EXPECT_NE(judge_infer(w, in, r, true).work_mismatch.find("rank 1 step 0 computed"),
              std::string::npos);
  }
}

TEST(InferDocuments, BadDocumentsAreRefused) {
  auto w = doc_work(kSchemes[0], Layout::Ring, 2, 4, 4, {3, 4});
  EXPECT_THROW(check_infer(w), InputError);  // sums to 7, not 8
  w.documents = {8};
  w.causal = false;
  EXPECT_THROW(check_infer(w), InputError);
}

// ---- `ringsim verify --mode prefill|decode --documents` ----

TEST(InferDocumentsCli, EveryModeSaysTrue) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--mode", "prefill", "--cached", "16", "--documents", "8,24,3"},
        {"--mode", "prefill", "--variant", "pass-q", "--layout", "zigzag", "--cached", "8",
         "--documents", "uniform:1..20"},
        {"--mode", "decode", "--cached", "64", "--decode-tokens", "3", "--layout", "striped",
         "--documents", "30,5"}}) {
    std::vector<std::string> a{"verify"};
    a.insert(a.end(), args.begin(), args.end());
    const auto r = run_cli(a);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("Documents: "), std::string::npos) << r.out;
    EXPECT_NE(
        r.out.find("Work counts equal the inference model (models/core/infer_work.hpp): True"),
        std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("Matches full attention: True\n"), std::string::npos) << r.out;
  }
  // 16 cached + 32 new tokens: 8, 24, 3, then 8, 5 (the last cut to fit).
  const auto r =
      run_cli({"verify", "--mode", "prefill", "--cached", "16", "--documents", "8,24,3", "--json"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["documents"], (std::vector<std::int64_t>{8, 24, 3, 8, 5}));
  EXPECT_TRUE(j["matches"].get<bool>());
  const auto plain = run_cli({"verify", "--mode", "decode", "--cached", "8", "--json"});
  EXPECT_EQ(nlohmann::json::parse(plain.out)["documents"], nlohmann::json::array());
}

TEST(InferDocumentsCli, BadInputsExitTwoWithOneLine) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--mode", "prefill", "--documents", "8", "--pack", "document"},
       "--pack: applies to --mode train"},
      {{"--mode", "decode", "--documents", "8", "--no-causal"}, "--documents: the document mask"},
      {{"--mode", "prefill", "--documents", "0,4"}, "--documents"},
      {{"--mode", "decode", "--documents", "lognormal:8"}, "--documents"},
  };
  for (const auto& [args, needle] : cases) {
    std::vector<std::string> a{"verify"};
    a.insert(a.end(), args.begin(), args.end());
    const auto r = run_cli(a);
    EXPECT_EQ(r.code, 2) << needle << "\n" << r.out << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(needle), std::string::npos) << "wanted: " << needle << "\ngot: " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace ringsim::kernels
