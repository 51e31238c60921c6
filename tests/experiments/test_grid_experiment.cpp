// The declaration's optional parts (experiments/grid_experiment.hpp), on a
// tiny closed form evaluated in process: a configuration's own axis values,
// text measures, one series per measure (against an axis and as categories),
// single-valued axes in legends, points without a measure, list_points.
#include <gtest/gtest.h>

#include <algorithm>

#include "experiments/grid_experiment.hpp"
#include "models/core/errors.hpp"

namespace ringsim::exp::test {
namespace {

// y = a * n; "odd" only for odd n; a label; n = 3 is refused.
GridExperiment tiny() {
  GridExperiment g;
  g.name = "tiny";
  g.configs = {{"double", {}, {{"a", "2"}, {"panel", "p"}}},
               {"triple, n = 4", {}, {{"a", "3"}, {"panel", "p"}}, {{"--n", "4", "4"}}}};
  g.axes = {{"--n", "1,2,3", "1,2,3"}, {"--k", "7", "7"}};
  g.measures = {{"y", "y", ""}, {"odd", "odd", ""}, {"label", "label", ""}};
  g.evaluate = [](const Config& c, const std::map<std::string, std::string>& axes) {
    const int n = std::stoi(axes.at("--n")), a = std::stoi(c.facts.at("a"));
    if (n == 3) throw InputError("--n: 3 is refused");
    nlohmann::json j{{"y", a * n}, {"label", "n" + axes.at("--n")}};
    if (n % 2 == 1) j["odd"] = n;
    return j;
  };
  return g;
}

Output run(const GridExperiment& g) {
  Context ctx;
  ctx.engine = "analytic";
  Output out;
  declare(g).run(ctx, out);
  return out;
}

std::vector<std::string> column(const Output& out, const std::string& name) {
  std::vector<std::string> v;
  for (const auto& r : out.data.rows()) v.push_back(r.at(out.data.column(name)));
  return v;
}

TEST(GridExperiment, ConfigurationsSweepTheirOwnValues) {
  const auto out = run(tiny());
  // "double" sweeps 1,2,3; "triple, n = 4" only 4; n = 3 fails with its reason.
  EXPECT_EQ(column(out, "n"), (std::vector<std::string>{"1", "2", "3", "4"}));
  EXPECT_EQ(column(out, "y"), (std::vector<std::string>{"2", "4", "", "12"}));
  EXPECT_EQ(column(out, "status")[2], "--n: 3 is refused");
  EXPECT_EQ(out.failed_points, 1);
  EXPECT_EQ(column(out, "label"), (std::vector<std::string>{"n1", "n2", "", "n4"}));
  EXPECT_EQ(column(out, "odd"), (std::vector<std::string>{"1", "", "", ""}));
  EXPECT_NE(out.report.find("## Every point"), std::string::npos);
}

TEST(GridExperiment, SeriesPerConfigurationWithoutSingleValuedAxes) {
  auto g = tiny();
  g.panels = {{"y", "--n", "y", "p", {}, {}}, {"odd", "--n", "odd", "", {}, {}}};
  const auto out = run(g);
  ASSERT_EQ(out.plot.panels.size(), 2u);
  const auto& s = out.plot.panels[0].series;
  ASSERT_EQ(s.size(), 2u);
  // --k has one value: it names no series.
  EXPECT_EQ(s[0].name, "double");
  EXPECT_EQ(s[1].name, "triple, n = 4");
  EXPECT_EQ(s[0].points.size(), 2u);  // n = 3 failed
  // Points without the measure are not drawn: only n = 1 has "odd".
  ASSERT_EQ(out.plot.panels[1].series.size(), 1u);
  EXPECT_EQ(out.plot.panels[1].series[0].points.size(), 1u);
}

TEST(GridExperiment, SeriesPerMeasure) {
  auto g = tiny();
  PanelDecl against;
  against.x = "--n";
  against.series = {{"y", "y"}, {"odd", "odd", "#000000", "diamond", true}};
  PanelDecl categories;
  categories.series = {{"y", "y"}};
  g.panels = {against, categories};
  g.list_points = false;
  const auto out = run(g);
  ASSERT_EQ(out.plot.panels.size(), 2u);
  const auto& a = out.plot.panels[0];
  ASSERT_EQ(a.series.size(), 2u);
  EXPECT_EQ(a.series[0].type, "line");
  EXPECT_EQ(a.series[1].type, "scatter");
  EXPECT_TRUE(a.series[1].hollow);
  EXPECT_EQ(a.series[0].points, (std::vector<std::pair<double, double>>{{1, 2}, {2, 4}, {4, 12}}));
  // One category per point, failed ones too, so positions do not shift.
  const auto& c = out.plot.panels[1];
  EXPECT_EQ(c.x.categories.size(), 4u);
  EXPECT_EQ(c.series[0].points.back(), (std::pair<double, double>{3, 12}));
  EXPECT_EQ(out.report.find("## Every point"), std::string::npos);
}

TEST(GridExperiment, AnAxisOfItsOwnMustBeAGridAxis) {
  auto g = tiny();
  g.configs[1].axes = {{"--m", "1", "1"}};
  EXPECT_THROW(run(g), std::logic_error);
}

}  // namespace
}  // namespace ringsim::exp::test
