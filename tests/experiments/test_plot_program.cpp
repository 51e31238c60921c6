// ringsim-plot as a program: a spec renders to a PNG of the requested size,
// and a bad spec is one line on stderr with exit 2. Skipped where ringsim-plot
// is not built (RINGSIM_GUI off or no Qt 6 Charts).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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

}  // namespace
}  // namespace ringsim::exp
