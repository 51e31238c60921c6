// ringsim-plot as a program: a spec renders to a PNG of the requested size,
// and a bad spec is one line on stderr with exit 2. Skipped where ringsim-plot
// is not built (RINGSIM_GUI off or no Qt 6 Charts).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "proc/child.hpp"

namespace ringsim::exp {
namespace {

namespace fs = std::filesystem;

bool have_plotter() {
  return std::string(RINGSIM_PLOT_BIN).size() > 0;
}

fs::path tmp(const std::string& name) {
  const auto d = fs::path(RINGSIM_TEST_TMP) / "plot";
  fs::create_directories(d);
  return d / name;
}

// Width and height from the PNG header (IHDR follows the 8-byte signature).
std::pair<unsigned, unsigned> png_size(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  unsigned char h[24] = {};
  f.read(reinterpret_cast<char*>(h), 24);
  auto be = [&](int o) {
    return (unsigned{h[o]} << 24) | (unsigned{h[o + 1]} << 16) | (unsigned{h[o + 2]} << 8) |
           h[o + 3];
  };
  if (h[1] != 'P' || h[2] != 'N' || h[3] != 'G') return {0, 0};
  return {be(16), be(20)};
}

TEST(PlotProgram, RendersSpecToPng) {
  if (!have_plotter())
    GTEST_SKIP() << "ringsim-plot is not built (needs RINGSIM_GUI and Qt 6 Charts)";
  const auto spec = tmp("ok.json"), png = tmp("ok.png");
  std::ofstream(spec) << R"J({"title": "t", "width": 640, "height": 400, "columns": 2, "note": "n",
    "panels": [{"title": "a", "x": {"label": "block (tokens)", "log": true, "base": 2},
                "y": {"label": "share", "min": 0, "max": 1},
                "series": [{"name": "ring", "type": "line", "color": "#0072B2", "points": [[256, 0.9], [4096, 0.0]]},
                           {"name": "sim", "type": "scatter", "hollow": true, "points": [[512, 0.5], [0, 1]]}]},
               {"title": "b", "x": {"categories": ["x", "y"]}, "y": {"label": "v", "log": true},
                "legend": "right", "series": [{"name": "p", "type": "scatter", "points": [[0, 10], [1, 1000]]}]}]})J";
  const auto r = proc::run({RINGSIM_PLOT_BIN, spec.string(), png.string()}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "no noise on stderr";
  EXPECT_EQ(png_size(png), std::make_pair(640u, 400u));
}

// Labels are plain text: markup in a title, an axis label, a category or a
// series name is drawn as the characters it is, never loaded (an <img> of
// /dev/zero used to read until the process aborted).
TEST(PlotProgram, LabelsAreTextNotMarkup) {
  if (!have_plotter())
    GTEST_SKIP() << "ringsim-plot is not built (needs RINGSIM_GUI and Qt 6 Charts)";
  const auto spec = tmp("html.json"), png = tmp("html.png");
  const std::string img = R"(<img src=\"/dev/zero\">)";
  std::ofstream(spec) << R"J({"title": ")J" << img
                      << R"J(", "width": 480, "height": 320, "columns": 1,
    "panels": [{"title": ")J"
                      << img << R"J(", "x": {"categories": [")J" << img << R"J(", "b"]},
                "y": {"label": ")J"
                      << img << R"J(", "min": 0, "max": 1},
                "series": [{"name": ")J"
                      << img << R"J(", "type": "scatter", "points": [[0, 0.5], [1, 0.7]]}]}]})J";
  const auto r = proc::run({RINGSIM_PLOT_BIN, spec.string(), png.string()}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(png_size(png), std::make_pair(480u, 320u));
}

// OUT.svg: the same figure as vector SVG beside the PNG, its tick labels
// (with their units) as text.
TEST(PlotProgram, WritesSvgBesidePng) {
  if (!have_plotter())
    GTEST_SKIP() << "ringsim-plot is not built (needs RINGSIM_GUI and Qt 6 Charts)";
  const auto spec = tmp("svg.json"), png = tmp("svg.png"), svg = tmp("svg.svg");
  fs::remove(svg);
  // y from 1 MiB to 1 TiB, bytes: ticks "1 MiB", ..., "1 TiB".
  std::ofstream(spec) << R"J({"title": "svg", "width": 900, "height": 600, "panels": [{"title": "m",
    "x": {"label": "devices N (count)", "log": true, "base": 2},
    "y": {"label": "memory (bytes)", "unit": "bytes", "log": true, "base": 2},
    "series": [{"name": "ring", "points": [[2, 1048576], [64, 1099511627776]]},
               {"name": "twin", "points": [[2, 1048576], [64, 1099511627776]]}]}]})J";
  const auto r = proc::run({RINGSIM_PLOT_BIN, spec.string(), png.string(), svg.string()}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(png_size(png), std::make_pair(900u, 600u));
  std::ifstream f(svg);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_NE(text.find("viewBox=\"0 0 900 600\""), std::string::npos);
  EXPECT_NE(text.find("GiB"), std::string::npos) << "tick labels carry the unit";
  EXPECT_NE(text.find("ring (= twin here)"), std::string::npos) << "the coincidence note";
  EXPECT_EQ(text.find("<image"), std::string::npos) << "vector, not an embedded raster";
}

TEST(PlotProgram, BadSpecIsOneLineAndExit2) {
  if (!have_plotter())
    GTEST_SKIP() << "ringsim-plot is not built (needs RINGSIM_GUI and Qt 6 Charts)";
  const auto spec = tmp("bad.json"), png = tmp("bad.png");
  for (const std::string& text :
       {std::string("{not json"), std::string(R"({"panels": []})"),
        std::string(R"({"panels": [{"series": [{"type": "pie", "points": []}]}]})"),
        std::string(R"({"panels": [{"y": {"log": true, "min": 0}}]})")}) {
    std::ofstream(spec) << text;
    const auto r = proc::run({RINGSIM_PLOT_BIN, spec.string(), png.string()}, 60);
    EXPECT_EQ(r.exit_code, 2) << text;
    EXPECT_EQ(r.err.rfind("ringsim-plot: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  const auto r = proc::run({RINGSIM_PLOT_BIN, "/nonexistent/spec.json", png.string()}, 60);
  EXPECT_EQ(r.exit_code, 2);
}

// The rules ringsim's own files follow: a directory or a FIFO as the spec is
// one line and exit 2 (a directory aborted, a FIFO with no writer hung), the
// output is never the spec, and a spec past the per-panel point budget is
// refused. The FIFO case runs under a 60 s child deadline, so a hang fails.
TEST(PlotProgram, PathsAndSizesFollowTheBadInputRules) {
  if (!have_plotter())
    GTEST_SKIP() << "ringsim-plot is not built (needs RINGSIM_GUI and Qt 6 Charts)";
  const auto png = tmp("rules.png");
  const auto fifo = tmp("spec.fifo");
  fs::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto spec = tmp("rules.json");
  std::ofstream(spec) << R"({"panels": [{"series": []}]})";
  std::ostringstream big;
  big << R"({"panels": [{"series": [{"name": "n", "type": "scatter", "points": [)";
  for (int i = 0; i < 100001; ++i) big << (i ? "," : "") << "[" << i << ",1]";
  big << "]}]}]}";
  const auto big_spec = tmp("big.json");
  std::ofstream(big_spec) << big.str();
  struct Case {
    std::string spec, out, needle;
  };
  for (const auto& c :
       std::vector<Case>{{tmp("").string(), png.string(), "is not a regular file"},
                         {fifo.string(), png.string(), "is not a regular file"},
                         {spec.string(), spec.string(), "is the SPEC.json input"},
                         {spec.string(), "/nonexistent/x.png", "No such file or directory"},
                         {big_spec.string(), png.string(), "more than 100000 points"}}) {
    const auto r = proc::run({RINGSIM_PLOT_BIN, c.spec, c.out}, 60);
    EXPECT_EQ(r.exit_code, 2) << c.spec << " " << r.failure();
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  fs::remove(fifo);
}

// The plot spec's fuzzer: seeded mutations of a good spec (numbers swapped
// for extremes, keys and brackets dropped, types changed) run through the real
// program, whose Qt rendering the sanitizer fuzz build does not link. Each
// must render a PNG (exit 0) or be refused with one line (exit 2); a crash,
// a hang past the deadline or an exit 3 is a finding.
TEST(PlotProgram, MutatedSpecsRenderOrAreRefusedWithOneLine) {
  if (!have_plotter())
    GTEST_SKIP() << "ringsim-plot is not built (needs RINGSIM_GUI and Qt 6 Charts)";
  const std::string good =
      R"J({"title": "t", "width": 320, "height": 200, "columns": 2, "note": "n", "panels": [{"title": "a", "legend": "right", "x": {"label": "b", "log": true, "base": 2}, "y": {"label": "s", "min": 0, "max": 1}, "series": [{"name": "ring", "type": "line", "dash": true, "color": "#0072B2", "width": 2, "points": [[256, 0.9], [4096, 0.1]]}, {"name": "sim", "type": "scatter", "hollow": true, "marker": "diamond", "points": [[512, 0.5]]}]}, {"x": {"categories": ["x", "y"]}, "y": {"log": true}, "series": [{"type": "scatter", "points": [[0, 10], [1, 1000]]}]}]})J";
  const char* tokens[] = {"1e308",    "-1e308",  "0",          "-1",   "1e-320",
                          "99999999", "null",    "true",       "\"\"", "[]",
                          "{}",       "\"pie\"", "2147483648", "-0",   "1e6"};
  std::uint64_t seed = 12345;
  auto rnd = [&seed] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::size_t>(seed >> 33);
  };
  const auto png = tmp("mut.png"), spec = tmp("mut.json");
  int rendered = 0, refused = 0;
  for (int i = 0; i < 40; ++i) {
    std::string s = good;
    for (int m = 0; m < 1 + static_cast<int>(rnd() % 3); ++m) {
      const auto pos = rnd() % s.size();
      switch (rnd() % 3) {
        case 0:
          s.erase(pos, 1 + rnd() % 6);
          break;
        case 1:
          s.insert(pos, tokens[rnd() % std::size(tokens)]);
          break;
        default: {  // replace the number at or after pos
          const auto b = s.find_first_of("0123456789", pos);
          if (b == std::string::npos) break;
          const auto e = s.find_first_not_of("0123456789.", b);
          s.replace(b, e - b, tokens[rnd() % std::size(tokens)]);
        }
      }
    }
    std::ofstream(spec, std::ios::trunc) << s;
    const auto r = proc::run({RINGSIM_PLOT_BIN, spec.string(), png.string()}, 60);
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 2) << r.failure() << "\n" << s;
    if (r.exit_code == 0) {
      ++rendered;
      EXPECT_NE(png_size(png).first, 0u) << s;
    } else {
      ++refused;
      EXPECT_EQ(r.err.rfind("ringsim-plot: error: ", 0), 0u) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(rendered, 0);
}

}  // namespace
}  // namespace ringsim::exp
