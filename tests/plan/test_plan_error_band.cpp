// Error bands (models/plan/error_band.hpp): the arithmetic by hand, and the
// bands the commands print against the scoreboard's own leave-one-out
// residuals, recomputed here from `ringsim validate --json`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "models/plan/error_band.hpp"
#include "proc/child.hpp"

namespace ringsim {
namespace {

using nlohmann::json;

TEST(ErrorBand, EightyPercentOfTheResidualsByHand) {
  // |r| sorted: 0.02 0.05 0.10 0.20 0.30; 80% of 5 cases = 4: the 4th, 0.20.
  const auto b = compute_band("k", {0.05, -0.1, 0.2, 0.3, -0.02}, {"a", "b", "c", "d", "e"});
  EXPECT_TRUE(b.validated());
  EXPECT_DOUBLE_EQ(b.high, 0.2);
  EXPECT_DOUBLE_EQ(b.low, -0.2);
  EXPECT_EQ(b.cases, 5);
  EXPECT_EQ(b.text(), "+-20% (80% of 5 validated cases of k)");
  // 80% of 10 = 8: the 8th smallest of 0.01 .. 0.10.
  std::vector<double> ten;
  for (int i = 1; i <= 10; ++i) ten.push_back(i % 2 ? i / 100.0 : -i / 100.0);
  EXPECT_DOUBLE_EQ(compute_band("k", ten, std::vector<std::string>(10, "x")).high, 0.08);
  // Rounded up to 0.1%, so the case that sets the band stays inside it:
  // 0.1234 -> 0.124 (to nearest it would be 0.123, and the case outside).
  EXPECT_DOUBLE_EQ(compute_band("k", {0.1234, 0.01, 0.02}, {"a", "b", "c"}).high, 0.124);
  EXPECT_DOUBLE_EQ(compute_band("k", {0.123, 0.01, 0.02}, {"a", "b", "c"}).high, 0.123);
}

TEST(ErrorBand, FewerThanThreeCasesAreUnvalidated) {
  const auto b = compute_band("k", {0.1, 0.2}, {"a", "b"});
  EXPECT_FALSE(b.validated());
  EXPECT_EQ(b.text(), "unvalidated (2 validated cases of k; 3 needed for a band)");
  const auto j = b.to_json();
  EXPECT_TRUE(j.at("low").is_null());
  EXPECT_EQ(j.at("cases"), 2);
  EXPECT_FALSE(find_band("no-such/family/regime").validated());
}

TEST(ErrorBand, ThroughputErrorsCountAsTimeErrors) {
  // 25% more tokens/s than published = a step 20% short.
  EXPECT_NEAR(time_residual("tokens_per_s_per_gpu", 0.25), -0.2, 1e-12);
  EXPECT_DOUBLE_EQ(time_residual("step_time_s", 0.25), 0.25);
  EXPECT_DOUBLE_EQ(time_residual("speedup", -0.1), -0.1);
}

TEST(ErrorBand, ClassesNameTheRegime) {
  EXPECT_EQ(band_class("megatron", "hopper", training_regime(8192)),
            "megatron/hopper/training-short");
  EXPECT_EQ(band_class("pytorch-fsdp", "hopper", training_regime(131072)),
            "pytorch-fsdp/hopper/training-long");
}

json cli(std::vector<std::string> args) {
  args.insert(args.begin(), RINGSIM_BIN);
  const auto r = proc::run(args, 300);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

// The band of `klass` from validate's rows: each case's leave-one-out error
// (its plain error where no factor was fitted to it), as a time error.
double band_from_scoreboard(const json& v, const std::string& klass, int* n) {
  std::vector<double> a;
  for (const auto& c : v.at("cases")) {
    if (!c.at("class").is_string() || c.at("class") != klass || !c.at("refused").is_null())
      continue;
    const double e =
        c.at("loo_error").is_null() ? c.at("error").get<double>() : c.at("loo_error").get<double>();
    const bool throughput =
        c.at("metric") == "tokens_per_s_per_gpu" || c.at("metric") == "model_tflops_per_gpu";
    a.push_back(std::abs(throughput ? 1 / (1 + e) - 1 : e));
  }
  *n = static_cast<int>(a.size());
  std::sort(a.begin(), a.end());
  const auto k = static_cast<std::size_t>(std::ceil(0.8 * static_cast<double>(a.size())));
  return a.empty() ? 0 : std::ceil(a[std::max<std::size_t>(k, 1) - 1] * 1000 - 1e-9) / 1000;
}

TEST(ErrorBand, CommandsPrintTheScoreboardsLeaveOneOutBand) {
  const auto v = cli({"validate", "--json"});
  // plan: Llama 3 8B at 128K on H100 under PyTorch (a long-context class).
  const auto plan = cli({"plan", "--model", "llama3-8b", "--context", "128K", "--gpus", "64",
                         "--tp", "1", "--pp", "1", "--json"});
  // infer: prefill and decode on H100.
  const auto infer = cli({"infer", "--model", "llama3-8b", "--context", "32K", "--gpus", "8",
                          "--engine", "analytic", "--json"});
  for (const auto* band :
       {&plan.at("error_band"), &infer.at("error_band"), &infer.at("decode_error_band")}) {
    int n = 0;
    const auto klass = band->at("class").get<std::string>();
    const double q = band_from_scoreboard(v, klass, &n);
    ASSERT_GE(n, 3) << klass;
    EXPECT_EQ(band->at("cases"), n) << klass;
    EXPECT_DOUBLE_EQ(band->at("high").get<double>(), q) << klass;
    EXPECT_DOUBLE_EQ(band->at("low").get<double>(), -q) << klass;
  }
  EXPECT_EQ(plan.at("error_band").at("class"), "pytorch-fsdp/hopper/training-long");
  // Every feasible row carries the band; rows inside it are tied with the best.
  const auto& rows = plan.at("configs");
  const double q = plan.at("error_band").at("high").get<double>();
  const double best = rows[0].at("tokens_per_s_per_gpu").get<double>();
  for (const auto& c : rows) {
    if (!c.at("feasible").get<bool>()) continue;
    EXPECT_EQ(c.at("error_band"), plan.at("error_band"));
    const double t = c.at("tokens_per_s_per_gpu").get<double>();
    const bool inside = &c != &rows[0] && (1 - q) / t <= (1 + q) / best;
    EXPECT_EQ(c.at("tied").get<bool>(), inside) << c.at("label");
  }
}

TEST(ErrorBand, TheCommittedTableIsTheScoreboards) {
  // `validate --error-bands` from the same rows writes the embedded table
  // byte for byte: a scoreboard change without a refreshed table fails here.
  const std::string out = testing::TempDir() + "/error_bands.json";
  const auto r = proc::run({RINGSIM_BIN, "validate", "--error-bands", out}, 300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto read = [](const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  };
  EXPECT_EQ(read(out), read(RINGSIM_ERROR_BANDS))
      << "refresh it: ringsim validate --error-bands models/data/error_bands.json";
}

}  // namespace
}  // namespace ringsim
