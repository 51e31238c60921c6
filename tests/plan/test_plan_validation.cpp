// `ringsim validate`: the fit's arithmetic by hand (geometric mean, leave-one-
// out, the direction of time and throughput metrics), and the scoreboard
// itself: every published case of models/data/validation.json within its
// tolerance, so a later change cannot silently undo fidelity.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "models/plan/validation.hpp"

namespace ringsim {
namespace {

using plan_testing::run_cli;

ValidationCase make_case(const char* id, const char* metric, double published) {
  ValidationCase c;
  c.id = id;
  c.metric = metric;
  c.published = published;
  c.fit = true;
  c.tolerance = 0.35;
  return c;
}

TEST(ValidationFit, GeometricMeanAndLeaveOneOut) {
  // Two step-time cases, published/predicted = 2 and 0.5 x 4 = 2 ... by hand:
  // a: published 2 s, predicted 1 s (ratio 2); b: throughput published 100,
  // predicted 400 (ratio 4). Factor = sqrt(2 x 4) = 2.828; LOO of a uses b's
  // ratio 4 alone: a predicted 4 s (+100%); LOO of b uses 2: 400/2 = 200 (+100%).
  const auto a = make_case("a", "step_time_s", 2);
  const auto b = make_case("b", "tokens_per_s_per_gpu", 100);
  std::vector<ValidationRow> rows(2);
  rows[0].c = &a;
  rows[0].group = "megatron/hopper";
  rows[0].first_principles = 1;
  rows[1].c = &b;
  rows[1].group = "megatron/hopper";
  rows[1].first_principles = 400;
  const auto f = fit_calibration(rows);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NEAR(f[0].factor, std::sqrt(8.0), 1e-12);
  EXPECT_EQ(f[0].framework, "megatron");
  EXPECT_EQ(f[0].family, "hopper");
  EXPECT_NEAR(rows[0].predicted, std::sqrt(8.0), 1e-12);
  EXPECT_NEAR(rows[1].predicted, 400 / std::sqrt(8.0), 1e-9);
  EXPECT_NEAR(rows[0].loo, 4, 1e-12);
  EXPECT_NEAR(rows[1].loo, 200, 1e-9);
  EXPECT_NEAR(f[0].loo_median_abs_error, 1.0, 1e-12);
  EXPECT_FALSE(rows[0].within());  // LOO +100% is outside 35%
}

TEST(ValidationFit, HeldOutCasesAreNotFitted) {
  auto a = make_case("a", "step_time_s", 2);
  auto b = make_case("b", "step_time_s", 10);
  b.fit = false;
  std::vector<ValidationRow> rows(2);
  rows[0] = {&a, "g/x", 1, 0, 0};
  rows[1] = {&b, "g/x", 1, 0, 0};
  const auto f = fit_calibration(rows);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_DOUBLE_EQ(f[0].factor, 2);  // b (x10) played no part
  EXPECT_DOUBLE_EQ(rows[1].predicted, 2);
  EXPECT_DOUBLE_EQ(rows[1].loo, 2);
}

TEST(ValidationData, EmbeddedSetMeetsTheBar) {
  const auto& v = embedded_validation();
  EXPECT_GE(v.cases.size(), 40u);
  EXPECT_GE(v.sources.size(), 6u);
}

TEST(ValidateCli, Scoreboard) {
  const auto r = run_cli({"validate", "--json"});
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& c : j.at("cases"))
    EXPECT_TRUE(c.at("within").get<bool>())
        << c.at("id") << ": predicted " << c.at("predicted") << ", published " << c.at("published");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_LE(j.at("summary").at("median_abs_error").get<double>(), 0.15);
  EXPECT_LE(j.at("summary").at("max_abs_error").get<double>(), 0.35);
}

TEST(ValidateCli, BadOnlyIsOneLine) {
  const auto r = run_cli({"validate", "--only", "nosuch"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--only"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ringsim
