// The plots' rules (issue 18, "Plots"): one style table, tick labels with
// units, log axes where the data spans decades, and a legend note where one
// series hides another, all in plain C++ (no Qt).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "experiments/plot/spec.hpp"
#include "experiments/plot/ticks.hpp"
#include "experiments/plot_spec.hpp"

namespace ringsim::exp {
namespace {

using nlohmann::json;

const std::vector<std::string> kLayoutNames{"ring",    "striped",   "zigzag",
                                            "ulysses", "allgather", "hybrid"};

TEST(PlotStyle, OneDistinctColourAndMarkerPerLayout) {
  std::set<std::string> colours, markers;
  for (const auto& l : kLayoutNames) {
    colours.insert(style_for(l).color);
    markers.insert(style_for(l).marker);
    // The palette lookups used by older code give the table's colour too.
    EXPECT_EQ(color_for(l, 7), style_for(l).color) << l;
    EXPECT_EQ(styled_line(l, l).color, style_for(l).color) << l;
    EXPECT_EQ(styled_line(l, l).marker, style_for(l).marker) << l;
  }
  EXPECT_EQ(colours.size(), kLayoutNames.size()) << "two layouts share a colour";
  EXPECT_EQ(markers.size(), kLayoutNames.size()) << "two layouts share a marker";
  // Issue 18: ring and hybrid were two similar blues; now Okabe-Ito blue and black.
  EXPECT_EQ(style_for("ring").color, "#0072B2");
  EXPECT_EQ(style_for("hybrid").color, "#000000");
  // Device families carry marker and dash only, so colour can mean layout.
  EXPECT_TRUE(style_for("A100").color.empty());
  EXPECT_NE(style_for("A100").dash, style_for("TPU v4").dash);
  EXPECT_THROW(style_for("zig-zag"), std::out_of_range) << "a typo must not pick a colour";
}

TEST(PlotTicks, LabelsCarryTheirUnit) {
  EXPECT_EQ(plot::unit_label(1024.0 * 1024 * 1024, "bytes"), "1 GiB");
  EXPECT_EQ(plot::unit_label(std::pow(2.0, 53), "bytes"), "8 PiB");  // 2^53 = 8 * 2^50
  EXPECT_EQ(plot::unit_label(512.0 * 1024 * 1024, "bytes"), "512 MiB");
  EXPECT_EQ(plot::unit_label(80e9, "bytes"), "74.5 GiB");  // 80e9 / 2^30 = 74.51
  EXPECT_EQ(plot::unit_label(100, "bytes"), "100 B");
  EXPECT_EQ(plot::unit_label(32768, "tokens"), "32K");  // binary, as the CLI reads 32K
  EXPECT_EQ(plot::unit_label(1048576, "tokens"), "1M");
  EXPECT_EQ(plot::unit_label(1.5e-3, "s"), "1.5 ms");
  EXPECT_EQ(plot::unit_label(40e-6, "s"), "40 us");
  EXPECT_EQ(plot::unit_label(2, "s"), "2 s");
  EXPECT_EQ(plot::unit_label(1000, "s"), "1000 s") << "not 1e+03 s";
  EXPECT_EQ(plot::unit_label(50, "%"), "50%");
  EXPECT_EQ(plot::unit_label(1.5, "x"), "1.5x");
}

TEST(PlotTicks, ByteAxesNeverShowABarePrefix) {
  // memory-scaling's left panel: 16 MiB .. 16 PiB (the 8 PiB vanilla line).
  const double lo = std::pow(2.0, 24), hi = std::pow(2.0, 54);
  const auto t = plot::log_ticks(lo, hi, 2, 12, "bytes");
  ASSERT_GE(t.size(), 3u);
  EXPECT_LE(t.size(), 12u);
  std::set<std::string> labels;
  for (const auto& k : t) {
    labels.insert(k.label);
    EXPECT_EQ(k.label.substr(k.label.size() - 2), "iB") << k.label << ": no unit";
    EXPECT_EQ(k.label.find("10P"), std::string::npos);
  }
  // 30 powers of two, at most 12 labels: every 5th, aligned, so the prefixes
  // themselves (2^30 = 1 GiB, 2^40 = 1 TiB, 2^50 = 1 PiB) are labelled.
  EXPECT_TRUE(labels.count("1 GiB") && labels.count("1 TiB") && labels.count("1 PiB"));
  // A linear byte axis steps in its prefix: 0 .. 80 GiB at 10 GiB.
  const double gib = std::pow(2.0, 30);
  const auto lin = plot::linear_ticks(0, 80 * gib, 8, "bytes");
  ASSERT_EQ(lin.size(), 9u);
  EXPECT_EQ(lin[1].label, "10 GiB");
  EXPECT_DOUBLE_EQ(lin[1].at, 10 * gib);
  EXPECT_EQ(lin.back().label, "80 GiB");
}

TEST(PlotAxes, LogWhereTheDataSpansDecades) {
  Series wide, narrow;
  // memory-scaling's left panel at 1M tokens: ring 6bch at N = 1024 (24 MiB)
  // up to vanilla 2bhs^2 = 2 * 4096 * 2^40 B = 8 PiB: 8.6 decades.
  wide.points = {{8, 24.0 * (1 << 20)}, {8, std::pow(2.0, 53)}};
  narrow.points = {{8, 1.5}, {16, 1.9}};
  EXPECT_TRUE(spans_decades({wide}, true));
  EXPECT_FALSE(spans_decades({narrow}, true));
  EXPECT_TRUE(spans_decades({narrow, wide}, true));
  EXPECT_FALSE(spans_decades({wide}, false)) << "x = 8 only";
  Series zero;
  zero.points = {{1, 0}, {2, 1e6}};
  EXPECT_FALSE(spans_decades({zero}, true)) << "a log axis cannot show 0";
}

json two_series(double y2_second) {
  return json::parse(R"({"panels": [{"y": {"min": 0, "max": 1}, "series": [
      {"name": "striped", "points": [[2, 0.5], [4, 0.6]]},
      {"name": "zigzag", "points": [[4, 0.6], [2, )" +
                     std::to_string(y2_second) + "]]}]}]}");
}

TEST(PlotSpecReader, NotesASeriesHiddenUnderAnother) {
  // Equal data (points in any order): "=" and the covered flag.
  auto r = plot::resolve_spec(two_series(0.5));
  EXPECT_EQ(r.panels[0].series[0].name, "striped (= zigzag here)");
  EXPECT_TRUE(r.panels[0].series[0].covered);
  EXPECT_EQ(r.panels[0].series[1].name, "zigzag") << "the one drawn on top is visible";
  // 0.505 vs 0.5: 0.005 of the 0..1 range, under kCoincideShare (1%): "≈".
  r = plot::resolve_spec(two_series(0.505));
  EXPECT_EQ(r.panels[0].series[0].name, "striped (\u2248 zigzag here)");
  // 0.52: 2% of the range apart, visible: no note.
  r = plot::resolve_spec(two_series(0.52));
  EXPECT_EQ(r.panels[0].series[0].name, "striped");
  EXPECT_FALSE(r.panels[0].series[0].covered);
  // Different x values are different series, whatever the y values.
  r = plot::resolve_spec(json::parse(R"({"panels": [{"series": [
      {"name": "a", "points": [[1, 1]]}, {"name": "b", "points": [[2, 1]]}]}]})"));
  EXPECT_EQ(r.panels[0].series[0].name, "a");
}

TEST(PlotSpecReader, UnitIsCheckedAndKept) {
  auto r =
      plot::resolve_spec(json::parse(R"({"panels": [{"y": {"unit": "bytes", "log": true}}]})"));
  EXPECT_EQ(r.panels[0].y.unit, "bytes");
  EXPECT_THROW(plot::resolve_spec(json::parse(R"({"panels": [{"y": {"unit": "furlongs"}}]})")),
               plot::SpecError);
}

}  // namespace
}  // namespace ringsim::exp
