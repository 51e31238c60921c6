// The experiments' helpers: CSV writing and reading, report cells, token
// labels, plot ticks and the plot spec (child processes: tests/proc).
#include <gtest/gtest.h>

#include "experiments/markdown.hpp"
#include "experiments/plot/spec.hpp"
#include "experiments/plot/ticks.hpp"
#include "experiments/plot_spec.hpp"
#include "experiments/table.hpp"

namespace ringsim::exp {
namespace {

TEST(Table, CsvQuotesAndRoundTrips) {
  Table t({"name", "value", "note"});
  t.add_row().set("name", "ring").set("value", 1.5).set("note", "a, \"quoted\"\nline");
  t.add_row().set("name", "zigzag").set("value", std::int64_t{1} << 40);
  const auto rows = parse_csv(t.csv());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"name", "value", "note"}));
  EXPECT_EQ(rows[1][2], "a, \"quoted\"\nline");
  EXPECT_EQ(rows[2][1], "1099511627776");
  EXPECT_EQ(rows[2][2], "") << "unset cells stay empty";
  EXPECT_THROW(t.add_row().set("nope", 1), std::logic_error);
}

TEST(Table, NumbersKeepSixDigits) {
  EXPECT_EQ(format_number(24960.0), "24960");
  EXPECT_EQ(format_number(1.0 / 3), "0.333333");
  EXPECT_EQ(format_number(1.5e-9), "1.5e-09");
}

TEST(Markdown, CellsAndTable) {
  EXPECT_EQ(rel_diff(24960, 24500), "+1.9%");
  EXPECT_EQ(rel_diff(1, 0), "") << "no published value, no difference";
  EXPECT_EQ(sig(1.4512, 3), "1.45");
  EXPECT_EQ(sig(24960, 3), "24960");
  EXPECT_EQ(tokens_k(262144), "256K");
  EXPECT_EQ(tokens_k(786432), "768K");
  EXPECT_EQ(tokens_k(1048576), "1M");
  EXPECT_EQ(tokens_k(16777216), "16M");
  EXPECT_EQ(tokens_k(921600), "900K");
  EXPECT_EQ(tokens_k(1000), "1000");
  MdTable m({"a", "b"});
  m.add({"1", "2"});
  EXPECT_EQ(m.str(), "| a | b |\n|---|---|\n| 1 | 2 |\n");
}

TEST(Ticks, LogLabelsArePowersOfTheBase) {
  auto t = plot::log_ticks(256, 131072, 2);
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t.front().label, "256");
  EXPECT_EQ(t.back().label, "128K");
  t = plot::log_ticks(1e3, 1e7, 10);
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0].label, "1K");
  EXPECT_EQ(t[3].label, "1M");
  EXPECT_DOUBLE_EQ(t[3].at, 6);
  // Many decades: thinned to at most 12 labels.
  EXPECT_LE(plot::log_ticks(1e-12, 1e20, 10).size(), 12u);
  EXPECT_TRUE(plot::log_ticks(0, 10, 10).empty()) << "a log axis cannot start at 0";
}

TEST(PlotSpec, JsonHasTheSchemaFields) {
  PlotSpec p;
  p.title = "t";
  Panel pn;
  pn.x = make_axis("x (tokens)", true, 2);
  pn.y = make_axis("y", false, 10, 0.0, 1.0);
  Series s = line_series("ring", color_for("ring", 0));
  s.points = {{1, 0.5}};
  pn.series.push_back(s);
  p.panels.push_back(pn);
  const auto j = to_json(p);
  EXPECT_EQ(j.at("schema"), "ringsim-plot-1");
  EXPECT_EQ(j.at("panels")[0].at("x").at("base"), 2);
  EXPECT_EQ(j.at("panels")[0].at("y").at("max"), 1.0);
  EXPECT_EQ(j.at("panels")[0].at("series")[0].at("color"), color_for("ring", 5))
      << "layouts keep their colour";

  // What the experiments write, ringsim-plot's reader accepts as drawn.
  const auto r = plot::resolve_spec(j);
  ASSERT_EQ(r.panels.size(), 1u);
  EXPECT_EQ(r.panels[0].y.lo, 0.0);
  EXPECT_EQ(r.panels[0].y.hi, 1.0);
  EXPECT_GT(r.panels[0].x.lo, 0.0);  // a log axis padded around its one point
  EXPECT_LT(r.panels[0].x.lo, 1.0);
  EXPECT_GT(r.panels[0].x.hi, 1.0);
}

// Ranges Qt would draw as an empty chart are refused with the field named.
TEST(PlotSpec, ReaderRefusesWhatCannotBeDrawn) {
  using nlohmann::json;
  auto refused = [](const std::string& text) {
    try {
      plot::resolve_spec(json::parse(text));
    } catch (const plot::SpecError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refused(R"({"panels": [{"y": {"min": 1, "max": 1}}]})").find("panels[0].y"),
            std::string::npos);
  EXPECT_NE(refused(R"({"panels": [{"series": [{"points": [[-1e308, 0], [1e308, 1]]}]}]})")
                .find("no finite range"),
            std::string::npos);
  EXPECT_NE(refused(R"({"panels": [{"series": [{"width": 1e308}]}]})").find("width"),
            std::string::npos);
  EXPECT_NE(refused(R"({"width": 1e308, "panels": [{}]})").find("width"), std::string::npos);
  EXPECT_NE(refused(R"({"panels": []})").find("panels"), std::string::npos);
  EXPECT_EQ(refused(R"({"panels": [{"x": {"log": true}, "series": [{"points": [[0, 1]]}]}]})"),
            "");  // a point a log axis cannot show is dropped, not refused
}

}  // namespace
}  // namespace ringsim::exp
