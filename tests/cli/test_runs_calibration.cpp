// A team's own measured runs (docs/own-cluster.md): `ringsim calibrate
// --runs` fits the factors by the scoreboard's procedure, `--calibration
// FILE` applies them in plan and validate, `validate --cases` scores a runs
// file, and a broken file is refused with one line.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/core/errors.hpp"
#include "models/plan/calibration.hpp"
#include "models/plan/error_band.hpp"
#include "models/plan/runs_csv.hpp"
#include "tests/run_cli.hpp"

namespace ringsim {
namespace {

const std::string kRuns = std::string(RINGSIM_RUNS_DATA) + "/torchtitan-2412.csv";

std::string temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() / name).string();
}

// The file holds exactly the runs the project's pytorch-fsdp/hopper factor
// was fitted to: the same procedure on them gives the same factor and the
// same leave-one-out errors.
TEST(RunsCalibration, ReproducesTheScoreboardsFitForOneSource) {
  const auto out = temp("ringsim-runs-cal.json");
  const auto r = cli_testing::run_cli({"calibrate", "--runs", kRuns, "--out", out});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto mine = read_calibration_file(out);
  ASSERT_EQ(mine.factors.size(), 1u);
  const auto& f = mine.factors[0];
  const auto* project = find_calibration("pytorch-fsdp", "hopper");
  ASSERT_NE(project, nullptr);
  EXPECT_EQ(f.key, "pytorch-fsdp/hopper");
  EXPECT_EQ(f.runs, project->runs);
  EXPECT_EQ(f.cases, project->cases);
  EXPECT_NEAR(f.factor, project->factor, 1e-4);
  EXPECT_NEAR(f.loo_median_abs_error, project->loo_median_abs_error, 1e-4);
  EXPECT_NE(mine.procedure.find("calibrate --runs"), std::string::npos);
  EXPECT_NE(r.out.find("LOO"), std::string::npos);  // each run's leave-one-out error
  std::filesystem::remove(out);
}

// plan and validate apply the file's factor and name the file.
TEST(RunsCalibration, PlanAndValidateUseTheFile) {
  const auto cal = temp("ringsim-runs-cal2.json");
  {
    std::ofstream o(cal);
    o << R"({"schema": "ringsim-calibration-1", "procedure": "test", "factors": [
      {"framework": "pytorch-fsdp", "family": "hopper", "factor": 2.0, "runs": 3,
       "loo_median_abs_error": 0.01, "loo_max_abs_error": 0.02, "cases": ["a", "b", "c"]}]})";
  }
  const std::vector<std::string> plan{"plan",   "--model", "llama3-8b", "--context", "8K",
                                      "--gpus", "8",       "--cp",      "1",         "--tp",
                                      "1",      "--pp",    "1",         "--json"};
  auto with = plan;
  with.insert(with.end() - 1, {"--calibration", cal});
  auto none = plan;
  none.insert(none.end() - 1, {"--calibration", "none"});
  const auto a = cli_testing::run_cli(with), b = cli_testing::run_cli(none);
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_DOUBLE_EQ(ja["calibration"]["factor"].get<double>(), 2.0);
  EXPECT_NE(ja["calibration"]["line"].get<std::string>().find(cal), std::string::npos);
  const double ta = ja["configs"][0]["step_time_s"].get<double>();
  const double tb = jb["configs"][0]["step_time_s"].get<double>();
  EXPECT_NEAR(ta / tb, 2.0, 1e-9);
  const auto v =
      cli_testing::run_cli({"validate", "--cases", kRuns, "--calibration", cal, "--json"});
  EXPECT_EQ(v.code, 1);  // x2 puts every run far outside its 20%
  std::filesystem::remove(cal);
}

// The file keeps the error band of each class its runs validate, from their
// leave-one-out residuals; plan and infer state that band, naming the file,
// and fall back to the project's for classes it does not cover.
TEST(RunsCalibration, ErrorBandsFromYourOwnRuns) {
  const auto out = temp("ringsim-runs-cal3.json");
  const auto r = cli_testing::run_cli({"calibrate", "--runs", kRuns, "--out", out});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto mine = read_calibration_file(out);
  const ErrorBand* shorter = nullptr;
  for (const auto& b : mine.bands)
    if (b.klass == "pytorch-fsdp/hopper/training-short") shorter = &b;
  ASSERT_NE(shorter, nullptr);
  EXPECT_GE(shorter->cases, kMinBandCases);
  // The band holds 80% of the class's runs' leave-one-out errors: recompute
  // it from validate's own rows of the same file.
  const auto v =
      cli_testing::run_cli({"validate", "--cases", kRuns, "--calibration", out, "--json"});
  const auto rows = nlohmann::json::parse(v.out)["cases"];
  std::vector<double> inside;
  for (const auto& c : rows)
    if (c["class"] == shorter->klass) {
      // A throughput error as the step-time error it is (time = work / rate).
      const double e = c["loo_error"].get<double>();
      inside.push_back(std::abs(c["metric"] == "tokens_per_s_per_gpu" ? 1 / (1 + e) - 1 : e));
    }
  ASSERT_EQ(static_cast<int>(inside.size()), shorter->cases);
  std::size_t within = 0;
  for (double e : inside) within += e <= shorter->high + 1e-9 ? 1 : 0;
  EXPECT_GE(static_cast<double>(within), 0.8 * static_cast<double>(inside.size()));
  const auto p = cli_testing::run_cli({"plan", "--model", "llama3-8b", "--context", "8K", "--gpus",
                                       "8", "--cp", "1", "--calibration", out, "--json"});
  ASSERT_EQ(p.code, 0) << p.err;
  const auto band = nlohmann::json::parse(p.out)["error_band"];
  EXPECT_EQ(band["source"], out);
  EXPECT_DOUBLE_EQ(band["high"].get<double>(), shorter->high);
  // infer: the file has no inference runs, so the project's band, no source.
  const auto i =
      cli_testing::run_cli({"infer", "--model", "llama3-8b", "--context", "8K", "--gpus", "8",
                            "--engine", "analytic", "--calibration", out, "--json"});
  ASSERT_EQ(i.code, 0) << i.err;
  EXPECT_TRUE(nlohmann::json::parse(i.out)["error_band"]["source"].is_null());
  std::filesystem::remove(out);
}

// A runs file may hold run's measured time (time_s: one layer's attention,
// the scope run times): validate scores it, and with 3 or more of a class
// the file keeps run's band, which `run --calibration FILE` prints.
TEST(RunsCalibration, RunTimesGiveRunsBand) {
  const auto runs = temp("ringsim-run-times.csv");
  {
    std::ofstream o(runs);
    o << "id,command,args,metric,value\n";
    // Measured times 10% above ringsim's for three ring sizes.
    for (const char* d : {"8", "16", "32"}) {
      const auto j =
          nlohmann::json::parse(cli_testing::run_cli({"run", "--devices", d, "--block", "4K",
                                                      "--engine", "analytic", "--json"})
                                    .out);
      o << "ring-" << d << ",run,--devices " << d << " --block 4K,time_s,"
        << j["time_s"].get<double>() * 1.1 << "\n";
    }
  }
  const auto out = temp("ringsim-run-times-cal.json");
  const auto c = cli_testing::run_cli({"calibrate", "--runs", runs, "--out", out});
  ASSERT_EQ(c.code, 0) << c.err;
  const auto mine = read_calibration_file(out);
  ASSERT_EQ(mine.bands.size(), 1u);
  EXPECT_EQ(mine.bands[0].klass, "run/hopper/attention");
  EXPECT_EQ(mine.bands[0].cases, 3);
  // The prediction is 1/1.1 of each measured time: -9.1% on every run.
  EXPECT_NEAR(mine.bands[0].high, 0.091, 1e-3);
  const auto r = cli_testing::run_cli({"run", "--devices", "8", "--block", "4K", "--engine",
                                       "analytic", "--calibration", out, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto band = nlohmann::json::parse(r.out)["error_band"];
  EXPECT_EQ(band["source"], out);
  EXPECT_EQ(band["cases"], 3);
  std::filesystem::remove(out);
  std::filesystem::remove(runs);
}

std::string refusal(const std::string& text) {
  try {
    parse_runs_csv(text, "runs.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(RunsCalibration, RefusesBrokenRunsFiles) {
  EXPECT_NE(refusal("").find("empty"), std::string::npos);
  EXPECT_NE(refusal("id,command,args,metric\n").find("'value' is missing"), std::string::npos);
  EXPECT_NE(refusal("id,command,args,metric,value\n").find("no runs"), std::string::npos);
  EXPECT_NE(refusal("id,command,args,metric,value\na,sweep,--devices 8,time_s,1\n")
                .find("'command' must be plan, infer or run"),
            std::string::npos);
  EXPECT_NE(refusal("id,command,args,metric,value\na,run,--devices 8,ttft_s,1\n")
                .find("'metric' for run must be time_s"),
            std::string::npos);
  EXPECT_NE(refusal("id,command,args,metric,value\na,plan,--gpus 8,ttft_s,1\n").find("'metric'"),
            std::string::npos);
  EXPECT_NE(refusal("id,command,args,metric,value\na,plan,--gpus 8,step_time_s,-1\n")
                .find("'value' must be a number"),
            std::string::npos);
  EXPECT_NE(refusal("id,command,args,metric,value\na,plan,\"--gpus 8,step_time_s,1\n")
                .find("quote opened"),
            std::string::npos);
  EXPECT_NE(refusal("id,command,args,metric,value\na,plan,--gpus 8,step_time_s,1\n"
                    "a,plan,--gpus 16,step_time_s,1\n")
                .find("used twice"),
            std::string::npos);
  // A quoted field may hold commas (a --layout list).
  const auto ok = parse_runs_csv(
      "id,command,args,metric,value\na,plan,\"--gpus 8 --layout ring,zigzag\",step_time_s,1.5\n",
      "runs.csv");
  ASSERT_EQ(ok.cases.size(), 1u);
  EXPECT_EQ(ok.cases[0].args, "--gpus 8 --layout ring,zigzag");
  EXPECT_TRUE(ok.cases[0].fit);
}

}  // namespace
}  // namespace ringsim
