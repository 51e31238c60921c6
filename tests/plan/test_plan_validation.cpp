// `ringsim validate`: the fit's arithmetic by hand (geometric mean, leave-one-
// out, the direction of time and throughput metrics), the speedup metric (two
// runs whose ratio is known by construction), and the scoreboard itself: every published case of
// models/data/validation.json within its tolerance, so a later change cannot silently undo
// fidelity.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/validate_case.hpp"
#include "cli/validate_plot.hpp"
#include "helpers.hpp"
#include "models/core/errors.hpp"
#include "models/plan/validation.hpp"
#include "proc/child.hpp"

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

TEST(ValidationFindings, StatusByHand) {
  // Tolerance 20%, a finding stated at -30%: -30% and -34% are the finding
  // (within the 5-point slack), -36% has grown (OUT), -10% is back within
  // tolerance while the finding still stands (resolved: remove it).
  auto c = make_case("f", "step_time_s", 10);
  c.fit = false;
  c.tolerance = 0.20;
  ValidationRow row{&c, "", 7, 7, 7, "", ""};
  EXPECT_EQ(row.status(), "OUT");  // -30%, nothing stated
  c.finding = "why";
  c.finding_error = -0.30;
  EXPECT_EQ(row.status(), "finding");
  EXPECT_FALSE(row.failing());
  row.predicted = 6.6;  // -34%
  EXPECT_EQ(row.status(), "finding");
  row.predicted = 6.4;  // -36%
  EXPECT_EQ(row.status(), "OUT");
  EXPECT_TRUE(row.failing());
  row.predicted = 9;  // -10%
  EXPECT_EQ(row.status(), "resolved");
  EXPECT_TRUE(row.failing());
  // A finding must say why, with its error.
  const std::string head =
      R"({"schema": "ringsim-validation-1", "sources": [{"id": "s", "title": "t", "url": "u",
      "setup": "x"}], "cases": [{"id": "a", "source": "s", "command": "plan", "args": "--gpus 8",
      "metric": "step_time_s", "published": 1, "tolerance": 0.2, "fit": false, )";
  EXPECT_THROW(parse_validation(head + R"("finding": "why"}]})", "f.json"), InputError);
  EXPECT_THROW(parse_validation(head + R"("finding": "", "finding_error": 0.3}]})", "f.json"),
               InputError);
  const auto ok = parse_validation(head + R"("finding": "why", "finding_error": 0.3}]})", "f.json");
  EXPECT_EQ(ok.cases.front().finding, "why");
  // Its derived fits case carries no finding, unless the case states one for
  // its fit (a run that ran and is refused): then a refused fits row is the
  // finding, not a failure.
  ASSERT_EQ(ok.cases.size(), 2u);
  EXPECT_TRUE(ok.cases.back().finding.empty());
  const auto refused = parse_validation(
      head + R"("finding": "why", "finding_error": -1, "fits_finding": "fit"}]})", "f.json");
  ASSERT_EQ(refused.cases.size(), 2u);
  EXPECT_EQ(refused.cases.back().finding, "fit");
  ValidationRow fits{&refused.cases.back(), "", 0, 0, 0, "", ""};
  EXPECT_EQ(fits.status(), "finding");
  fits.predicted = 1;  // it fits now: remove the finding
  EXPECT_EQ(fits.status(), "resolved");
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

// A speedup case: `ringsim run` one layer of ringattention-jax (striped, 4
// A100s) against a baseline of its own flags.
ValidationCase speedup_case(const std::string& baseline_extra) {
  ValidationCase c;
  c.id = "hand";
  c.source = "hand";
  c.command = "run";
  c.metric = "speedup";
  c.args =
      "--cluster dgx-a100 --kernel ringattention-jax --devices 4 --block 4K --pass fwdbwd "
      "--scope layer --layout striped";
  c.baseline_args = c.args + baseline_extra;
  c.published = 1;
  c.fit = false;
  return c;
}

TEST(ValidationSpeedup, SameCommandIsExactlyOne) {
  const auto c = speedup_case("");
  const auto row = cli::predict_case(c);
  EXPECT_EQ(row.first_principles, 1.0);
  EXPECT_TRUE(row.group.empty()) << "a ratio has no calibration group";
}

TEST(ValidationSpeedup, BaselineOfThreeLayersIsThreeTimesSlower) {
  // --layers 3 runs the same layer three times: the baseline takes 3x as long.
  const auto c = speedup_case(" --layers 3");
  const auto row = cli::predict_case(c);
  EXPECT_NEAR(row.first_principles, 3.0, 1e-12);
  // A factor on the step time multiplies both runs: the ratio ignores it.
  EXPECT_EQ(apply_factor(c, row.first_principles, 1.7), row.first_principles);
  EXPECT_EQ(cli::case_command(c, true).back(), "--json");
  EXPECT_EQ(cli::case_command(c, true).front(), "run");
}

TEST(ValidationSpeedup, TheFileRefusesWhatARatioCannotBe) {
  const std::string head =
      R"({"schema": "ringsim-validation-1", "sources": [{"id": "s", "title": "t", "url": "u",
      "setup": "x"}], "cases": [{"id": "a", "source": "s", "published": 1.2, "tolerance": 0.35, )";
  auto refused = [&](const std::string& rest, const std::string& why) {
    try {
      parse_validation(head + rest + "}]}", "f.json");
      ADD_FAILURE() << "accepted: " << rest;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused(R"("command": "run", "args": "--devices 4", "metric": "speedup", "fit": false)",
          "'baseline_args'");
  refused(R"("command": "run", "args": "--devices 4", "baseline_args": "--devices 8",
      "metric": "speedup", "fit": true)",
          "only plan cases calibrate");
  refused(R"("command": "plan", "args": "--devices 4", "baseline_args": "--devices 8",
      "metric": "speedup", "fit": true)",
          "does not calibrate");
  refused(R"("command": "run", "args": "--devices 4", "metric": "step_time_s", "fit": false)",
          "only the metric speedup");
  refused(R"("command": "infer", "args": "--devices 4", "baseline_args": "--devices 8",
      "metric": "speedup", "fit": false)",
          "plan or run");
  const auto ok = parse_validation(
      head + R"("command": "run", "args": "--devices 4", "baseline_args": "--devices 8",
      "metric": "speedup", "fit": false, "table": "Table 3", "also_published": {"tms": 1.5}}]})",
      "f.json");
  EXPECT_EQ(ok.cases.at(0).baseline_args, "--devices 8");
  EXPECT_EQ(ok.cases.at(0).table, "Table 3");
  EXPECT_EQ(ok.cases.at(0).also_published.at("tms"), 1.5);
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto i = text.find(what); i != std::string::npos; i = text.find(what, i + 1)) ++n;
  return n;
}

TEST(ValidatePlot, RatiosHaveAPanelOfTheirOwn) {
  // A step time of 2 s and a speedup of 1.5: one log-log panel each, the
  // ratio's from 1.25 to 1.75 (10% beyond, to the quarter) with ticks in
  // steps of 0.25, not decades.
  auto a = make_case("a", "step_time_s", 2);
  auto b = make_case("b", "speedup", 1.5);
  a.source = b.source = "s";
  ValidationSet set;
  set.sources.push_back({"s", "t", "u", "x"});
  std::vector<ValidationRow> rows{{&a, "", 2, 2, 2}, {&b, "", 1.5, 1.5, 1.5}};
  const auto both = cli::validation_plot_svg(rows, set);
  EXPECT_EQ(count(both, "stroke=\"#444\""), 2) << both;
  EXPECT_EQ(count(both, "<circle"), 5)
      << "two cases in their log-log panels, the same two in the error panel, one legend entry";
  EXPECT_NE(both.find(">1.25</text>"), std::string::npos);
  EXPECT_NE(both.find(">1e0</text>"), std::string::npos);
  rows.pop_back();
  const auto one = cli::validation_plot_svg(rows, set);
  EXPECT_EQ(count(one, "stroke=\"#444\""), 1);
  EXPECT_EQ(one.find(">1.25</text>"), std::string::npos);
}

TEST(ValidatePlot, SignedErrorPanelShowsEachCaseByItsError) {
  // Published 100 tokens/s: predicted 110 (+10%, within 20%), 150 (+50%, out
  // and unstated), and a refused run. The error panel maps +-100% onto its
  // 260 px (y0 660): +10% sits 13 px above the zero line at 790, +50% 65 px.
  auto ok = make_case("ok", "tokens_per_s_per_gpu", 100);
  auto out = make_case("out", "tokens_per_s_per_gpu", 100);
  auto refused = make_case("refused", "tokens_per_s_per_gpu", 100);
  for (auto* c : {&ok, &out, &refused}) {
    c->source = "s";
    c->fit = false;
    c->tolerance = 0.2;
  }
  ValidationSet set;
  set.sources.push_back({"s", "t", "u", "x"});
  std::vector<ValidationRow> rows{{&ok, "", 110, 110, 110, "", "c"},
                                  {&out, "", 150, 150, 150, "", "c"},
                                  {&refused, "", 0, 0, 0, "needs 90 GiB", "c"}};
  const auto svg = cli::validation_plot_svg(rows, set);
  EXPECT_NE(svg.find("stroke=\"#666\""), std::string::npos) << "the error panel's frame";
  EXPECT_NE(svg.find("fill=\"#e8f5e9\""), std::string::npos) << "the +-20% band";
  EXPECT_NE(svg.find("cy=\"777.0\" r=\"3\" fill=\"#1f77b4\""), std::string::npos)
      << "+10%: filled (within), 13 px above 790";
  EXPECT_NE(svg.find("cy=\"725.0\" r=\"3\" fill=\"none\" stroke=\"#d00\""), std::string::npos)
      << "+50%: out and unstated, a red ring";
  EXPECT_NE(svg.find("refused: refused"), std::string::npos) << "the refused run's x";
  EXPECT_NE(svg.find(">+100%</text>"), std::string::npos);
  EXPECT_NE(svg.find(">-100%</text>"), std::string::npos);
}

TEST(ValidateCli, Scoreboard) {
  const auto r = run_cli({"validate", "--json"});
  const auto j = nlohmann::json::parse(r.out);
  // Every case within its tolerance (20% for a whole step or a speedup), or
  // out of it with a stated finding that has not grown.
  int findings = 0;
  for (const auto& c : j.at("cases")) {
    const auto status = c.at("status").get<std::string>();
    if (status == "finding") {
      ++findings;
      EXPECT_TRUE(c.at("finding").is_string()) << c.at("id");
      EXPECT_FALSE(c.at("within").get<bool>()) << c.at("id");
    } else {
      EXPECT_EQ(status, "ok") << c.at("id") << ": predicted " << c.at("predicted") << ", published "
                              << c.at("published");
    }
    const auto metric = c.at("metric").get<std::string>();
    if (metric != "fits" && metric != "peak_memory_gib")
      EXPECT_LE(c.at("tolerance").get<double>(), 0.20) << c.at("id");
  }
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(j.at("summary").at("failing").get<int>(), 0);
  EXPECT_EQ(j.at("summary").at("stated_findings").get<int>(), findings);
  EXPECT_EQ(j.at("summary").at("out_of_tolerance").get<int>(), findings);
  EXPECT_LE(j.at("summary").at("median_abs_error").get<double>(), 0.15);
  // Striped Attention's Tables 3-5 are on the board, each a held-out ratio.
  int striped = 0;
  for (const auto& c : j.at("cases"))
    if (c.at("source") == "striped-attention-2311") {
      ++striped;
      EXPECT_EQ(c.at("metric"), "speedup");
      EXPECT_FALSE(c.at("fit").get<bool>());
      EXPECT_TRUE(c.at("baseline_args").is_string());
    }
  EXPECT_EQ(striped, 53);
  // Does it fit: at least 30 measured peaks from at least 4 sources within
  // 10%; every training run on the board also a fits case; none refused; the
  // published out-of-memory runs refused; no case turns the memory check off.
  std::set<std::string> memory_sources, fits_args;
  int memory = 0, ran = 0, oom = 0, refused_stated = 0, oom_fits_stated = 0;
  for (const auto& c : j.at("cases")) {
    EXPECT_EQ(c.at("args").get<std::string>().find("--memory-check"), std::string::npos)
        << c.at("id");
    if (c.at("metric") == "peak_memory_gib") {
      ++memory;
      memory_sources.insert(c.at("source").get<std::string>());
      EXPECT_LE(c.at("tolerance").get<double>(), 0.10) << c.at("id");
    }
    if (c.at("metric") != "fits") continue;
    fits_args.insert(c.at("command").get<std::string>() + " " + c.at("args").get<std::string>());
    const bool stated = c.at("status") == "finding";
    EXPECT_TRUE(c.at("within").get<bool>() || stated) << c.at("id") << ": " << c.at("refused");
    (c.at("published").get<double>() > 0 ? ran : oom) += 1;
    if (stated && !c.at("within").get<bool>())
      (c.at("published").get<double>() > 0 ? refused_stated : oom_fits_stated) += 1;
  }
  EXPECT_GE(memory, 30);
  EXPECT_GE(memory_sources.size(), 4u);
  EXPECT_GE(oom, 2);
  for (const auto& c : j.at("cases"))
    if (c.at("command") != "run" && c.at("metric") != "fits")
      EXPECT_TRUE(fits_args.count(c.at("command").get<std::string>() + " " +
                                  c.at("args").get<std::string>()))
          << c.at("id") << " has no fits case";
  // A run that ran and is refused is a stated finding, or the board fails;
  // so is a published out-of-memory run the model lets through.
  EXPECT_EQ(j.at("summary").at("refused").get<int>(), refused_stated);
  EXPECT_EQ(j.at("summary").at("oom_refused").get<int>(), oom - oom_fits_stated);
  EXPECT_LE(j.at("summary").at("memory_max_abs_error").get<double>(), 0.10);
}

TEST(ValidationMemory, TheFileRefusesWhatAMemoryCaseCannotBe) {
  const std::string head =
      R"({"schema": "ringsim-validation-1", "sources": [{"id": "s", "title": "t", "url": "u",
      "setup": "x"}], "cases": [{"id": "a", "source": "s", "tolerance": 0.1, )";
  auto refused = [&](const std::string& rest, const std::string& why) {
    try {
      parse_validation(head + rest + "}]}", "f.json");
      ADD_FAILURE() << "accepted: " << rest;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused(R"("command": "plan", "args": "--gpus 8", "metric": "peak_memory_gib",
      "published": 40, "fit": false)",
          "'memory_scope'");
  refused(R"("command": "plan", "args": "--gpus 8", "metric": "peak_memory_gib",
      "published": 40, "fit": false, "memory_scope": "nvml")",
          "reserved, allocated or device");
  refused(R"("command": "plan", "args": "--gpus 8", "metric": "peak_memory_gib",
      "published": 40, "fit": true, "memory_scope": "reserved")",
          "does not calibrate");
  refused(R"("command": "plan", "args": "--gpus 8", "metric": "fits", "published": 2,
      "fit": false)",
          "publishes 1");
  refused(R"("command": "plan", "args": "--gpus 8 --memory-check off", "metric": "fits",
      "published": 1, "fit": false)",
          "must fit");
  // A run case yields a derived fits case with its flags; an explicit one does not.
  const auto v =
      parse_validation(head + R"("command": "plan", "args": "--gpus 8", "metric": "step_time_s",
      "published": 3, "fit": false}, {"id": "b", "source": "s", "command": "plan",
      "args": "--gpus 16", "metric": "fits", "published": 0, "tolerance": 0.01, "fit": false}]})",
                       "f.json");
  ASSERT_EQ(v.cases.size(), 3u);
  EXPECT_EQ(v.cases.at(2).id, "a:fits");
  EXPECT_TRUE(v.cases.at(2).derived);
  EXPECT_EQ(v.cases.at(2).args, "--gpus 8");
  EXPECT_EQ(v.cases.at(1).published, 0);  // a published out-of-memory run
}

TEST(ValidationMemory, APeakIsNotScaledByTheStepFactor) {
  auto c = make_case("m", "peak_memory_gib", 40);
  EXPECT_EQ(apply_factor(c, 41, 1.7), 41);
  auto f = make_case("f", "fits", 1);
  EXPECT_EQ(apply_factor(f, 1, 1.7), 1);
  ValidationRow row{&f, "", 0, 0, 0};
  EXPECT_FALSE(row.within()) << "a run that ran, refused";
  row.predicted = 1;
  EXPECT_TRUE(row.within());
}

TEST(ValidateCli, OutputsAreCheckedFirstAndWrittenWhole) {
  // The extension names the format: another is refused before any work.
  const auto txt = run_cli({"validate", "--plot", "x.txt"});
  EXPECT_EQ(txt.code, 2);
  EXPECT_NE(txt.err.find("--plot: the extension names the format"), std::string::npos) << txt.err;
  // Two outputs on one file are refused, and the file is left as it was.
  const auto dir = std::filesystem::temp_directory_path() / "ringsim_validate_outputs";
  std::filesystem::create_directories(dir);
  const auto svg = (dir / "x.svg").string();
  { std::ofstream(svg) << "old"; }
  const auto twice =
      run_cli({"validate", "--only", "distflashattn-2023", "--csv", svg, "--plot", svg});
  EXPECT_EQ(twice.code, 2);
  EXPECT_NE(twice.err.find("also the --csv output"), std::string::npos) << twice.err;
  std::ifstream in(svg);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "old");
  // Both written, whole.
  const auto csv = (dir / "x.csv").string();
  const auto both =
      run_cli({"validate", "--only", "distflashattn-2023", "--csv", csv, "--plot", svg});
  EXPECT_EQ(both.code, 0) << both.err;
  std::ifstream c(csv);
  std::string head;
  std::getline(c, head);
  EXPECT_EQ(head.rfind("case,source,command", 0), 0u) << head;
  std::filesystem::remove_all(dir);
}

TEST(ValidateCli, PlotWritesTheFormatItsExtensionNames) {
  if (proc::sibling_exe("ringsim-plot").empty())
    GTEST_SKIP() << "SKIPPED: ringsim-plot is not built (RINGSIM_GUI=OFF or no Qt 6 Charts/Svg)";
  const auto dir = std::filesystem::temp_directory_path() / "ringsim_validate_formats";
  std::filesystem::create_directories(dir);
  // Magic bytes: PNG's signature, PDF's header, SVG's root element.
  for (const auto& [ext, magic] : std::vector<std::pair<std::string, std::string>>{
           {"png", "\x89PNG\r\n\x1a\n"}, {"pdf", "%PDF-"}, {"svg", "<svg"}}) {
    const auto path = (dir / ("v." + ext)).string();
    const auto r = run_cli({"validate", "--only", "distflashattn-2023", "--plot", path});
    ASSERT_EQ(r.code, 0) << ext << ": " << r.err;
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(bytes.find(magic), std::string::npos) << ext;
    if (ext != "svg") EXPECT_EQ(bytes.rfind(magic, 0), 0u) << ext << " starts with its magic";
  }
  std::filesystem::remove_all(dir);
}

TEST(ValidateCli, BadOnlyIsOneLine) {
  const auto r = run_cli({"validate", "--only", "nosuch"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--only"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ringsim
