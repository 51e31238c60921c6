// The grid: how axes expand, the cartesian product in order, a point whose
// flags the run parser refuses kept as a failed point, the grid file.
#include <gtest/gtest.h>

#include <fstream>

#include "models/core/errors.hpp"
#include "sweep/sweep.hpp"

namespace ringsim::sweep {
namespace {

using V = std::vector<std::string>;

// Each value of `flag` refused with a line that begins with the flag's name.
void expect_refused_naming(const std::string& flag, const std::vector<const char*>& bad) {
  for (const auto* text : bad) {
    try {
      expand(flag, text);
      ADD_FAILURE() << text << " accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(flag + ": ", 0), 0u) << e.what();
    }
  }
}

// The message `expand` refuses `text` with ("" and a failure if it is accepted).
std::string refusal(const std::string& flag, const std::string& text) {
  try {
    expand(flag, text);
    ADD_FAILURE() << flag << " " << text << " accepted";
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(SweepAxis, ListsAndRanges) {
  EXPECT_EQ(expand("--devices", "8,64,512"), (V{"8", "64", "512"}));
  EXPECT_EQ(expand("--block", "2K..32K:x2"), (V{"2048", "4096", "8192", "16384", "32768"}));
  EXPECT_EQ(expand("--devices", "1..4"), (V{"1", "2", "3", "4"}));
  EXPECT_EQ(expand("--devices", "2..9:+3"), (V{"2", "5", "8"}));
  EXPECT_EQ(expand("--layout", " ring , zigzag"), (V{"ring", "zigzag"}));
  EXPECT_EQ(expand("--block", "3K..10K:x2"), (V{"3072", "6144"}));
}

TEST(SweepAxis, DecimalRanges) {
  // Fractional flags: each value from the start (no running sum to drift),
  // 15 significant digits, the end kept when it rounds a hair past it.
  EXPECT_EQ(expand("--efficiency", "0.25..1:x2"), (V{"0.25", "0.5", "1"}));
  EXPECT_EQ(expand("--efficiency", "0.1..0.3:+0.1"), (V{"0.1", "0.2", "0.3"}));
  EXPECT_EQ(expand("--efficiency", "0.5..1"), (V{"0.5"}));  // the default step is +1
  EXPECT_EQ(expand("--jitter", "1e-6..4e-6:x2"), (V{"1e-06", "2e-06", "4e-06"}));
  expect_refused_naming("--efficiency",
                        {"0.5..0.25", "0.5..1:x1", "0..1:x2", "0.1..1:+0", "a.5..1", "-0.5..1"});
}

TEST(SweepAxis, IntegerRangesReachWhatAListReaches) {
  // A range's ends are any 64-bit count: the flag's own parser judges each
  // value (--routing-seed takes 0 .. 2^63 - 1).
  EXPECT_EQ(expand("--routing-seed", "9223372036854775806..9223372036854775807"),
            (V{"9223372036854775806", "9223372036854775807"}));
  // A bad end or step is named as the range's, not as the flag's values.
  for (const auto& [text, says] :
       std::vector<std::pair<std::string, std::string>>{{"-2..4", "its start '-2'"},
                                                        {"1..8:x1", "the factor of its step '1'"},
                                                        {"1..8:+0", "its step '0'"}}) {
    const auto what = refusal("--ep", text);
    EXPECT_NE(what.find(says), std::string::npos) << what;
  }
}

// An integer flag's range must step by integers: refused once, up front,
// not as a failed row per fractional value. A decimal flag's range may not.
TEST(SweepAxis, IntegerFlagsRefuseFractionalRanges) {
  for (const auto& [flag, text] :
       std::vector<std::pair<std::string, std::string>>{{"--ep", "1..8:x1.5"},
                                                        {"--routing-seed", "1..4:+0.5"},
                                                        {"--devices", "8..16:+0.5"},
                                                        {"--block", "1.5K..4K"}}) {
    const auto what = refusal(flag, text);
    EXPECT_EQ(what.rfind(flag + ": range '" + text + "': " + flag + " takes integers", 0), 0u)
        << what;
  }
  EXPECT_EQ(expand("--efficiency", "0.5..1:x1.5"), (V{"0.5", "0.75"}));
}

TEST(SweepAxis, BadRangesNameTheFlag) {
  expect_refused_naming("--devices", {"8..2", "2..8:y2", "2..8:x1", "8,,2", "0..8:x2", "1..100000",
                                      "1..4,8", "8,1..4"});
}

// One value spelt two ways is still one point: 4K and 4096, 0.5 and .50.
TEST(SweepAxis, TheSameValueTwiceIsRefusedHoweverSpelt) {
  for (const auto& [flag, list] :
       std::vector<std::pair<std::string, std::string>>{{"--devices", "4,4,8"},
                                                        {"--block", "4K,4096"},
                                                        {"--block", "1K, 1024"},
                                                        {"--efficiency", "0.5,.50"},
                                                        {"--layout", "ring,zigzag,ring"}}) {
    try {
      expand(flag, list);
      ADD_FAILURE() << flag << " " << list << " was accepted";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(flag + ":", 0), 0u) << what;
      EXPECT_NE(what.find("give each value once"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(expand("--block", "4K,8192"), (V{"4K", "8192"}));
  EXPECT_EQ(expand("--layout", "ring,zigzag"), (V{"ring", "zigzag"}));
}

TEST(SweepAxis, SetArrayValuesAreOneValue) {
  // A --set value may be an array (a catalog's gemm_fill): its commas do not
  // split the list, the ones between values do.
  EXPECT_FALSE(is_list("--set", "[0,13312]"));
  EXPECT_TRUE(is_list("--set", "[0,13312],[127,13312]"));
  EXPECT_EQ(expand("--set devices.h100-sxm.gemm_fill.bf16", "[0,13312], [127,13312]"),
            (V{"[0,13312]", "[127,13312]"}));
  EXPECT_EQ(expand("--set kernels.cudnn.rate_scale", "0.8,1"), (V{"0.8", "1"}));
  // Other flags split at every comma, as before.
  EXPECT_EQ(expand("--devices", "8,16"), (V{"8", "16"}));
  EXPECT_THROW(expand("--devices", "8,16,"), InputError);
  EXPECT_THROW(expand("--set kernels.cudnn.rate_scale", "0.8,,1"), InputError);
}

TEST(SweepAxis, DocumentsAreAPipeList) {
  // Its values hold ',' and '..' themselves: '|' separates them, no ranges.
  EXPECT_EQ(expand("--documents", "fixed:1K | 8K,2K|uniform:1..9|lognormal:2K,1"),
            (V{"fixed:1K", "8K,2K", "uniform:1..9", "lognormal:2K,1"}));
  EXPECT_TRUE(is_list("--documents", "fixed:1K|fixed:2K"));
  EXPECT_FALSE(is_list("--documents", "8K,2K"));         // one value: a list of lengths
  EXPECT_FALSE(is_list("--documents", "uniform:1..9"));  // one value: a distribution
  EXPECT_TRUE(is_list("--devices", "1..4"));
  EXPECT_THROW(expand("--documents", "fixed:1K||fixed:2K"), InputError);
  // Each point parses its own documents and pack mode.
  Grid g;
  g.axes = {{"--documents", expand("--documents", "8K,2K|fixed:512")},
            {"--pack", {"sequence", "document"}}};
  const auto p = points(g);
  ASSERT_EQ(p.size(), 4u);
  ASSERT_TRUE(p[1].spec.has_value());
  EXPECT_EQ(p[1].spec->workload.documents, "8K,2K");
  EXPECT_EQ(p[1].spec->workload.pack, Pack::Document);
  ASSERT_TRUE(p[2].spec.has_value());
  EXPECT_EQ(p[2].spec->workload.documents, "fixed:512");
  // A bad distribution is that point's error, naming the flag.
  g.axes = {{"--documents", {"fixed:512", "gauss:3"}}};
  const auto q = points(g);
  EXPECT_TRUE(q[0].spec.has_value());
  ASSERT_FALSE(q[1].spec.has_value());
  EXPECT_EQ(q[1].error.rfind("--documents: ", 0), 0u) << q[1].error;
}

TEST(SweepGrid, CartesianProductLastAxisFastest) {
  Grid g;
  g.axes = {{"--devices", {"2", "4"}}, {"--layout", {"ring", "zigzag", "striped"}}};
  const auto p = points(g);
  ASSERT_EQ(p.size(), 6u);
  EXPECT_EQ(p[0].key, "--devices=2 --layout=ring");
  EXPECT_EQ(p[1].key, "--devices=2 --layout=zigzag");
  EXPECT_EQ(p[3].key, "--devices=4 --layout=ring");
  ASSERT_TRUE(p[4].spec.has_value());
  EXPECT_EQ(p[4].spec->workload.devices, 4);
  EXPECT_EQ(p[4].spec->workload.layout, Layout::Zigzag);
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_EQ(p[i].index, i);
}

TEST(SweepGrid, RefusedPointKeepsItsErrorAndTheRestStay) {
  Grid g;
  g.axes = {{"--layout", {"ring", "spiral"}}};
  const auto p = points(g);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_TRUE(p[0].spec.has_value());
  EXPECT_FALSE(p[1].spec.has_value());
  EXPECT_EQ(p[1].error.rfind("--layout: ", 0), 0u) << p[1].error;
}

TEST(SweepGrid, BadGrids) {
  Grid g;
  EXPECT_THROW(points(g), InputError);  // nothing swept
  g.axes = {{"--devices", {"2"}}, {"--devices", {"4"}}};
  EXPECT_THROW(points(g), InputError);  // swept twice
  g.axes = {{"--trace", {"a", "b"}}};
  EXPECT_THROW(points(g), InputError);  // not sweepable
}

TEST(SweepGrid, FileAxesInFileOrderAndCommandLineWins) {
  const std::string path = ::testing::TempDir() + "ringsim-grid.json";
  std::ofstream(path) << R"({"base": {"--gpu": "a100-80gb", "--block": 512},
    "axes": {"--layout": ["zigzag", "ring"], "--devices": "2..4:x2"}})";
  proc::RunFlags cli;
  cli.w.block = "1024";
  const auto g = read_grid_file(path, "--grid", cli, {"--block"});
  ASSERT_EQ(g.axes.size(), 2u);
  EXPECT_EQ(g.axes[0].flag, "--layout");  // file order, not sorted
  EXPECT_EQ(g.axes[1].values, (V{"2", "4"}));
  EXPECT_EQ(g.base.hw.gpu, "a100-80gb");
  EXPECT_EQ(g.base.w.block, "1024");  // given on the command line
  std::ofstream(path) << R"({"axes": {"--nonsense": "1,2"}})";
  EXPECT_THROW(read_grid_file(path, "--grid", cli, {}), InputError);
}

TEST(SweepRows, JsonRoundTrip) {
  Row r;
  r.index = 3;
  r.key = "--devices=2";
  r.params = {{"--devices", "2"}};
  r.error = "exit 2: --block: bad";
  const auto back = row_from_json(to_json(r));
  EXPECT_EQ(back.key, r.key);
  EXPECT_FALSE(back.ok);
  EXPECT_EQ(back.error, r.error);
  EXPECT_THROW(row_from_json(nlohmann::json::parse("{\"x\": 1}")), std::runtime_error);
}

// The files a sweep reads are hashed once, at its start, and every child is
// held to those bytes: a catalog replaced mid-sweep fails the points left,
// naming why, instead of mixing rows of two catalogs in one journal.
TEST(SweepInputs, AFileReplacedMidSweepFailsThePointsLeft) {
  const auto path = ::testing::TempDir() + "ringsim_sweep_inputs_catalog.json";
  const std::string catalog =
      R"({"devices": [{"name": "mygpu", "peak_flops": {"bf16": 1e15, "fp16": 1e15, "fp32": 6e13},
      "hbm_bytes": 8e10, "hbm_bandwidth": 3e12, "attention_efficiency": 0.5,
      "default_intra": "nvlink4", "default_inter": "ib-ndr", "source": "s",
      "efficiency_source": "e"}]})";
  std::ofstream(path) << catalog;
  Grid g;
  g.base.hw.catalog = path;
  g.base.hw.gpu = "mygpu";
  g.base.sim.engine = "analytic";
  g.axes = {{"--devices", {"2", "4"}}};
  const auto p = points(g);
  ASSERT_EQ(p.size(), 2u);
  ASSERT_TRUE(p[0].spec.has_value());
  EXPECT_EQ(p[0].spec->inputs_sha256.size(), 64u);
  EXPECT_EQ(p[0].spec->inputs_sha256, p[1].spec->inputs_sha256);
  const auto first = run_point(p[0], RINGSIM_BIN, 120);
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_EQ(first.inputs_sha256, p[0].spec->inputs_sha256);
  EXPECT_EQ(to_json(first).at("inputs_sha256"), p[0].spec->inputs_sha256);
  // Another catalog now: the device twice as fast.
  std::string faster = catalog;
  faster.replace(faster.find("\"bf16\": 1e15"), 13, "\"bf16\": 2e15");
  std::ofstream(path) << faster;
  const auto second = run_point(p[1], RINGSIM_BIN, 120);
  EXPECT_FALSE(second.ok);
  EXPECT_NE(second.error.find("--inputs-sha256: the catalog, --calibration, --documents or "
                              "--profile files changed since the sweep started"),
            std::string::npos)
      << second.error;
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ringsim::sweep
