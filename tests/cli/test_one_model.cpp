// One model in every command: the same configuration sent through `run`,
// `minblock` and `plan` charges the same bytes per ring step (the
// implementation's K/V, grouped or expanded, in the dtype) and the same link
// rate, and `run`'s "communication hidden" agrees with the minimum block it
// prints. Each command runs as a child process, as a user runs it.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "proc/child.hpp"

namespace {

using nlohmann::json;

json cli(std::vector<std::string> args) {
  args.insert(args.begin(), RINGSIM_BIN);
  const auto r = ringsim::proc::run(args, 120);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

// A configuration: model, CP degree, block, the cluster and its device's link.
struct Case {
  std::string name, model, cluster, gpu, link;
  int cp = 8;
  int block = 8192;
  // Expected K/V heads on the ring over the model's KV heads (4: Llama 3
  // 8B's 8 KV heads expanded to its 32 query heads, as TorchTitan does
  // before SDPA under PyTorch context_parallel).
  int expansion = 1;
};

const std::vector<Case> kCases = {
    {"pytorch-h100", "llama3-8b", "dgx-h100", "h100-sxm", "nvlink4", 8, 8192, 4},
    {"jax-v5p", "llama3-8b", "tpu-v5p-pod", "tpu-v5p", "ici-v5p", 8, 2048, 1},
    // Below its minimum block (about 1.8K forward and backward): not hidden.
    {"jax-v5p-small-block", "llama3-8b", "tpu-v5p-pod", "tpu-v5p", "ici-v5p", 8, 1024, 1},
};

class OneModel : public ::testing::TestWithParam<Case> {};

TEST_P(OneModel, RunMinblockAndPlanSendTheSameBytesPerRingStep) {
  const auto& c = GetParam();
  const auto block = std::to_string(c.block), cp = std::to_string(c.cp);
  const auto run = cli({"run", "--engine", "analytic", "--model", c.model, "--cluster", c.cluster,
                        "--devices", cp, "--block", block, "--json"});
  const auto mb =
      cli({"minblock", "--model", c.model, "--gpu", c.gpu, "--intra", c.link, "--json"});
  const auto plan = cli({"plan", "--model", c.model, "--cluster", c.cluster, "--gpus", cp,
                         "--context", std::to_string(c.cp * c.block), "--cp", cp, "--tp", "1",
                         "--pp", "1", "--layout", "ring", "--json"});
  const double run_bytes = run.at("bytes_per_step").get<double>();
  // K and V of one block in bf16: block x kv heads x head dim x 2 x 2 B.
  const double kv = 8.0 * c.expansion, d = 128;
  EXPECT_DOUBLE_EQ(run_bytes, c.block * kv * d * 2 * 2) << "run";
  ASSERT_EQ(mb.at("rows").size(), 1u);
  EXPECT_DOUBLE_EQ(mb.at("rows")[0].at("ring_bytes_per_token").get<double>() * c.block, run_bytes)
      << "minblock";
  ASSERT_FALSE(plan.at("configs").empty());
  const auto& row = plan.at("configs")[0];
  EXPECT_EQ(row.at("layout"), "ring");
  EXPECT_DOUBLE_EQ(row.at("ring_bytes_per_step").get<double>(), run_bytes) << "plan";
}

TEST_P(OneModel, RunAndMinblockChargeTheSameLinkRate) {
  const auto& c = GetParam();
  const auto run =
      cli({"run", "--engine", "analytic", "--model", c.model, "--cluster", c.cluster, "--devices",
           std::to_string(c.cp), "--block", std::to_string(c.block), "--json"});
  const auto mb =
      cli({"minblock", "--model", c.model, "--gpu", c.gpu, "--intra", c.link, "--json"});
  // run: one step's transfer is bytes / rate + one hop's latency.
  const double bytes = run.at("bytes_per_step").get<double>();
  const double comm = run.at("comm_s_per_step").get<double>();
  const double rate = mb.at("rows")[0].at("ring_bandwidth").get<double>();
  EXPECT_NEAR(comm, bytes / rate, 2e-6) << "run's step transfer is not bytes over minblock's rate";
}

TEST_P(OneModel, HiddenAgreesWithTheMinimumBlock) {
  const auto& c = GetParam();
  for (const auto* layout : {"ring", "zigzag"})
    for (const auto* pass : {"fwd", "fwdbwd"}) {
      const auto run = cli({"run", "--engine", "analytic", "--model", c.model, "--cluster",
                            c.cluster, "--devices", std::to_string(c.cp), "--block",
                            std::to_string(c.block), "--layout", layout, "--pass", pass, "--json"});
      const auto& v = run.at("verdict");
      ASSERT_TRUE(v.at("min_block").is_number()) << layout << " " << pass;
      const bool above = c.block >= v.at("min_block").get<int>();
      EXPECT_EQ(v.at("hidden").get<bool>(), above)
          << layout << " " << pass << ": block " << c.block << ", min block " << v.at("min_block");
    }
}

TEST(OneModelByHand, MinblockCombinedIsRunsMinimumBlock) {
  // A pair given by hand: minblock's `combined` and run's minimum block on a
  // ring of 8 with the same flags take the same kernel fraction and latency.
  // 1e18 over 9e8 puts the block near 4e8 tokens, where doubling the search
  // overshoots into blocks whose pairs overflow 64 bits: searched below them.
  for (const auto& [flops, bw] : std::vector<std::pair<std::string, std::string>>{
           {"1e15", "9e10"}, {"4e14", "2.5e10"}, {"1e18", "9e8"}}) {
    const auto mb = cli({"minblock", "--flops", flops, "--bandwidth", bw, "--json"});
    const auto run = cli({"run", "--engine", "analytic", "--flops", flops, "--bandwidth", bw,
                          "--devices", "8", "--block", "1K", "--json"});
    ASSERT_TRUE(mb.at("rows").at(0).at("combined").is_number()) << flops << " " << bw;
    EXPECT_EQ(mb.at("rows").at(0).at("combined").get<std::int64_t>(),
              run.at("min_block").get<std::int64_t>())
        << flops << " " << bw;
  }
}

TEST(OneModelByHand, MinblockCombinedIsRunsMinimumBlockOnACatalogDevice) {
  // Every row of minblock's catalog table (each device on each of its default
  // links) against run on a flat ring of that device and link: the device as
  // deployed (the H100 96GB at its 500 W, where minblock had taken the rated
  // peak), its settled clock's share of the published curve (catalog
  // gemm_sustained), its link's ring-step rate. One function builds both
  // (Device::deploy), where the two had parted twice.
  const auto table = cli({"minblock", "--json"});
  ASSERT_GE(table.at("rows").size(), 20u);
  for (const auto& row : table.at("rows")) {
    const auto gpu = row.at("device").get<std::string>(),
               link = row.at("interconnect").get<std::string>();
    const auto run = cli({"run", "--engine", "analytic", "--gpu", gpu, "--platform", "flat",
                          "--intra", link, "--devices", "8", "--block", "1K", "--json"});
    EXPECT_EQ(row.at("combined"), run.at("min_block")) << gpu << " on " << link;
  }
}

TEST(OneModelByHand, MinblockTakesThePowerLimitRunTakes) {
  // --power-limit moves minblock's row as it moves run's minimum block (it
  // had been read and not applied to the catalog rows).
  const auto capped = cli(
      {"minblock", "--gpu", "h100-sxm", "--intra", "nvlink4", "--power-limit", "400", "--json"});
  const auto rated = cli({"minblock", "--gpu", "h100-sxm", "--intra", "nvlink4", "--json"});
  const auto run =
      cli({"run", "--engine", "analytic", "--gpu", "h100-sxm", "--platform", "flat", "--intra",
           "nvlink4", "--devices", "8", "--block", "1K", "--power-limit", "400", "--json"});
  const auto& row = capped.at("rows").at(0);
  EXPECT_EQ(row.at("combined"), run.at("min_block"));
  // Less compute per step at the lower clock: a smaller block still hides.
  EXPECT_LT(row.at("combined").get<std::int64_t>(),
            rated.at("rows").at(0).at("combined").get<std::int64_t>());
  EXPECT_LT(row.at("flops").get<double>(), rated.at("rows").at(0).at("flops").get<double>());
  EXPECT_EQ(capped.at("selection").at("power_w").get<double>(), 400);
  // --hbm-bandwidth moves the merges and accumulations a step does in HBM,
  // in minblock's row as in run (it had been left at the catalog's rate).
  const auto slow_hbm = cli(
      {"minblock", "--gpu", "h100-sxm", "--intra", "nvlink4", "--hbm-bandwidth", "1e12", "--json"});
  const auto run_hbm =
      cli({"run", "--engine", "analytic", "--gpu", "h100-sxm", "--platform", "flat", "--intra",
           "nvlink4", "--devices", "8", "--block", "1K", "--hbm-bandwidth", "1e12", "--json"});
  EXPECT_EQ(slow_hbm.at("rows").at(0).at("combined"), run_hbm.at("min_block"));
  EXPECT_NE(slow_hbm.at("rows").at(0).at("combined"), rated.at("rows").at(0).at("combined"));
  EXPECT_EQ(slow_hbm.at("selection").at("hbm_bandwidth").get<double>(), 1e12);
}

TEST(OneModelByHand, HardwareListsEachDeviceAsTheCommandsRunIt) {
  // `hardware --json` keeps the datasheet's peak and adds the device as
  // deployed; that peak is the one minblock's row (and so run) charges.
  const auto hw = cli({"hardware", "--json"});
  const auto table = cli({"minblock", "--json"});
  for (const auto& d : hw.at("devices")) {
    const auto name = d.at("name").get<std::string>();
    const auto& dep = d.at("deployed");
    EXPECT_LE(dep.at("peak_flops").at("bf16").get<double>(),
              d.at("peak_flops").at("bf16").get<double>())
        << name;
    for (const auto& row : table.at("rows"))
      if (row.at("device") == name)
        EXPECT_DOUBLE_EQ(row.at("flops").get<double>(),
                         dep.at("peak_flops").at("bf16").get<double>())
            << name;
    if (name == "h100-sxm-96gb") {
      EXPECT_EQ(dep.at("power_w").get<double>(), 500);  // Meta's Grand Teton hosts
      EXPECT_LT(dep.at("clock_scale").get<double>(), 1);
    }
    if (name == "h100-sxm") {
      EXPECT_EQ(dep.at("power_w").get<double>(), 700);
      EXPECT_EQ(dep.at("clock_scale").get<double>(), 1);
    }
  }
}

TEST(OneModelByHand, MinblockRefusesLayoutsRunCallsNotApplicable) {
  // run prints n/a for these; minblock says why in one line naming --layout
  // (it named --devices, a flag minblock does not have).
  for (const std::string layout : {"ulysses", "allgather"}) {
    const auto r = ringsim::proc::run({RINGSIM_BIN, "minblock", "--layout", layout}, 60);
    EXPECT_EQ(r.exit_code, 2) << layout;
    EXPECT_EQ(r.err.rfind("ringsim: error: --layout: " + layout + " has no ring step", 0), 0u)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, OneModel, ::testing::ValuesIn(kCases), [](const auto& info) {
  auto n = info.param.name;
  for (auto& ch : n)
    if (ch == '-') ch = '_';
  return n;
});

}  // namespace
