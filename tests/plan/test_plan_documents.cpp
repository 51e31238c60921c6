// `plan --documents DIST --samples N`: the spread by hand, one document of the
// whole context is the plan's own step, the best layout follows the
// distribution, the same seed gives the same table, and bad input is one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "models/core/errors.hpp"
#include "models/plan/documents.hpp"

namespace ringsim {
namespace {

using plan_testing::run_cli;

// 16K tokens on one node of 8 H100s, CP 8: ring against zigzag only.
std::vector<std::string> args(const std::string& documents, const std::string& samples = "2") {
  return {"plan",        "--model",     "llama3-8b", "--context", "16K",   "--gpus", "8",
          "--cp",        "8",           "--tp",      "1",         "--pp",  "1",      "--layout",
          "ring,zigzag", "--documents", documents,   "--samples", samples, "--json"};
}

nlohmann::json plan_json(const std::vector<std::string>& a) {
  const auto r = run_cli(a);
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(PlanDocuments, SpreadByHand) {
  const auto s = spread_of({10, 1, 9, 2, 8, 3, 7, 4, 6, 5});
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(8.25));  // population: sum (x - 5.5)^2 / 10
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 10);
  EXPECT_EQ(s.p10, 1);  // nearest rank: the 1st of 10
  EXPECT_EQ(s.p90, 9);  // the 9th
  const auto one = spread_of({3});
  EXPECT_EQ(one.p10, 3);
  EXPECT_EQ(one.stddev, 0);
}

TEST(PlanDocuments, OneDocumentOfTheContextIsThePlansOwnStep) {
  const auto j = plan_json(args("fixed:16K"));
  const auto& best = j.at("configs").at(0);
  const auto& d = j.at("documents");
  EXPECT_EQ(d.at("samples"), 2);
  ASSERT_EQ(d.at("rows").size(), 4u);  // ring and zigzag, each in both pack modes
  for (const auto& row : d.at("rows")) {
    EXPECT_EQ(row.at("documents_mean"), 1.0);
    EXPECT_EQ(row.at("step_time_s").at("stddev"), 0.0);
    if (row.at("layout") == best.at("layout")) {
      const double want = best.at("step_time_s");
      EXPECT_NEAR(row.at("step_time_s").at("mean").get<double>(), want, want * 1e-12);
    }
  }
  EXPECT_EQ(d.at("best"), "zigzag cp 8 / sequence");
}

TEST(PlanDocuments, TheBestLayoutFollowsTheDistribution) {
  // Short documents: each stays on one or two devices, the contiguous ring's
  // causal imbalance is gone, and zigzag only adds cross-device pairs.
  const auto j = plan_json(args("lognormal:512,0.5"));
  const auto& d = j.at("documents");
  EXPECT_EQ(d.at("best"), "ring cp 8 / sequence");
  EXPECT_GT(d.at("rows").at(0).at("documents_mean").get<double>(), 16);
  // Sampled packings differ: a spread, ordered.
  for (const auto& row : d.at("rows")) {
    const auto& s = row.at("step_time_s");
    EXPECT_LE(s.at("min").get<double>(), s.at("p10").get<double>());
    EXPECT_LE(s.at("p10").get<double>(), s.at("mean").get<double>());
    EXPECT_LE(s.at("mean").get<double>(), s.at("p90").get<double>());
    EXPECT_LE(s.at("p90").get<double>(), s.at("max").get<double>());
  }
  // The same seed draws the same packings.
  EXPECT_EQ(plan_json(args("lognormal:512,0.5")), j);
}

TEST(PlanDocuments, BadInputIsOneLine) {
  const auto zero = run_cli(args("fixed:1K", "0"));
  EXPECT_EQ(zero.code, 2);
  EXPECT_NE(zero.err.find("--samples"), std::string::npos) << zero.err;
  const auto alone = run_cli(
      {"plan", "--model", "llama3-8b", "--context", "16K", "--gpus", "8", "--samples", "4"});
  EXPECT_EQ(alone.code, 2);
  EXPECT_NE(alone.err.find("--samples: packings of --documents"), std::string::npos) << alone.err;
  const auto infer = run_cli({"plan", "--inference", "--model", "llama3-8b", "--context", "16K",
                              "--gpus", "8", "--documents", "fixed:1K"});
  EXPECT_EQ(infer.code, 2);
  EXPECT_NE(infer.err.find("--documents: plans training"), std::string::npos) << infer.err;
}

TEST(PlanDocuments, SizeGuardCutsTheDefaultAndRefusesAGivenCount) {
  // The guard by hand: kMaxSamplerUnits / first packing's units packings fit.
  DocumentSampling s;
  s.samples = 16;
  const std::uint64_t edge = kMaxSamplerUnits / 16;
  EXPECT_EQ(samples_within_guard(edge, s), 16);  // exactly at the guard
  s.samples_given = false;                       // the default: cut, not refused
  EXPECT_EQ(samples_within_guard(edge + 1, s), 15);
  EXPECT_EQ(samples_within_guard(kMaxSamplerUnits * 2, s), 1);  // one packing is always timed
  s.samples_given = true;
  EXPECT_THROW(samples_within_guard(edge + 1, s), InputError);
}

TEST(PlanDocuments, AGivenCountBeyondTheGuardIsOneLineNamingTheMostThatFit) {
  // One-token documents: every token is a call of the diagonal step. The
  // first packing is counted, then refused in well under a second.
  auto a = args("fixed:1", "10000");
  const auto r = run_cli(a);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.err.rfind("ringsim: error: --samples: 10000 packings of fixed:1 are beyond", 0), 0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  const auto at = r.err.find("give --samples ");
  ASSERT_NE(at, std::string::npos) << r.err;
  const auto most = std::stoll(r.err.substr(at + 15));
  EXPECT_GT(most, 16);  // the default fits this small plan
  const auto over = run_cli(args("fixed:1", std::to_string(most + 1)));
  EXPECT_EQ(over.code, 2) << over.err;
}

}  // namespace
}  // namespace ringsim
