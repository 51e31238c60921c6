// The run summary is written and read in one place (RunSummary): what
// to_json writes, from_json reads back field for field, and a missing or
// mistyped key is an error naming it, never a silent 0.
#include <gtest/gtest.h>

#include "models/analytic/analytic.hpp"
#include "models/analytic/report.hpp"
#include "models/core/catalog.hpp"
#include "models/core/errors.hpp"
#include "models/kernel/implementation.hpp"
#include "tests/models/helpers.hpp"

namespace ringsim {
namespace {

Summary zigzag_summary() {
  Workload w;
  w.devices = 8;
  w.block = 4096;
  w.layout = Layout::Zigzag;
  w.pass = Pass::FwdBwd;
  Hardware hw;
  hw.flops = 1e15;
  hw.efficiency = 0.5;
  hw.platform = Platform::Flat;
  hw.bandwidth_override = true;
  hw.intra_bw = hw.inter_bw = 5e10;
  hw.intra_lat = hw.inter_lat = 2e-6;
  return analyze(w, hw);
}

TEST(RunSummary, ReadsBackWhatItWrites) {
  const auto s = zigzag_summary();
  const auto j = summary_json(s);
  const auto r = RunSummary::from_json(j, "test");
  EXPECT_EQ(r.to_json(), j);
  EXPECT_DOUBLE_EQ(r.time_s, s.time_s);
  EXPECT_DOUBLE_EQ(r.compute_only_s, s.compute_only_s);
  EXPECT_GT(r.compute_only_s, 0);
  EXPECT_EQ(r.layout, "zigzag");
  EXPECT_FALSE(r.sim.has_value());
}

TEST(RunSummary, AMoeLayerReadsBackItsExpertsAndDispatch) {
  // A mixture-of-experts layer with EP 4: `moe` and `ep_comm_s` round-trip.
  Workload w;
  w.devices = 4;
  w.block = 2048;
  w.scope = Scope::Layer;
  w.shape.experts = 8;
  w.shape.experts_per_token = 2;
  w.shape.expert_ffn = 1024;
  w.shape.ffn = 2048;
  w.ep = 4;
  w.routing_seed = 5;
  Hardware hw;
  hw.flops = 1e15;
  hw.efficiency = 0.5;
  hw.hbm_bandwidth = 3e12;
  hw.platform = Platform::Flat;
  hw.bandwidth_override = true;
  hw.intra_bw = hw.inter_bw = 5e10;
  const auto s = analyze(w, hw);
  const auto j = summary_json(s);
  const auto r = RunSummary::from_json(j, "test");
  EXPECT_EQ(r.to_json(), j);
  ASSERT_TRUE(r.moe.has_value());
  EXPECT_EQ(r.moe->ep, 4);
  EXPECT_EQ(r.moe->routing_seed, 5u);
  EXPECT_DOUBLE_EQ(r.moe->experts_s, s.moe_compute_s);
  EXPECT_GT(r.ep_comm_s, 0);
  EXPECT_DOUBLE_EQ(r.ep_comm_s, s.ep_comm_s);
  // A dense run's `moe` is null and reads back as none.
  EXPECT_TRUE(summary_json(zigzag_summary()).at("moe").is_null());
}

TEST(RunSummary, CarriesTheImplementationAndItsCosts) {
  // cuDNN under PyTorch on a flat H100 ring: every implementation key is
  // written, read back equal, and says what ran.
  const auto& cat = Catalog::embedded();
  const auto& d = cat.device("h100-sxm");
  auto hw = testing::flat(d.peak(DType::BF16), 450e9, 2e-6);
  hw.gpu_name = d.name;
  hw.hbm_bandwidth = d.hbm_bandwidth;
  hw.intra_kind = hw.inter_kind = "nvlink";
  const auto im = make_implementation(cat, hw, DType::BF16, {});
  auto w = testing::make_workload(8, 8192, Layout::Zigzag, true, Pass::FwdBwd);
  const auto s = analyze(w, hw, *im);
  const auto j = summary_json(s);
  const auto r = RunSummary::from_json(j, "test");
  EXPECT_EQ(r.to_json(), j);
  EXPECT_EQ(r.kernel, "cudnn");
  EXPECT_GT(r.merge_s_per_step, 0);
  EXPECT_GT(r.accumulate_s_per_step, 0);
  EXPECT_GT(r.reduce_s, 0);
  EXPECT_GT(r.interference_compute, 1);
  EXPECT_EQ(r.comm_link_kind, "nvlink");
  EXPECT_GT(r.executed_flops, r.useful_flops);
  EXPECT_GT(r.single_device_time_s, 0);
  EXPECT_LT(r.efficiency_vs_single_device, 1);
  for (const char* key :
       {"kernel", "interference", "executed_flops", "efficiency_vs_single_device"}) {
    auto broken = j;
    broken.erase(key);
    EXPECT_THROW(RunSummary::from_json(broken, "child"), InputError) << key;
  }
}

TEST(RunSummary, SimulatedPartRoundTrips) {
  auto r = RunSummary::of(zigzag_summary());
  r.engine = "simgrid";
  RunSummary::Simulated m;
  m.analytic_time_s = 1.5;
  m.platform = "flat";
  m.network_model = "exact";
  m.stalled_fwd = {0, 2};
  m.critical_device = 7;
  r.sim = m;
  const auto back = RunSummary::from_json(r.to_json(), "test");
  ASSERT_TRUE(back.sim.has_value());
  EXPECT_EQ(back.sim->stalled_fwd, (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(back.sim->critical_device, 7);
  EXPECT_EQ(back.to_json(), r.to_json());
}

TEST(RunSummary, MissingOrMistypedKeyIsAnErrorNamingIt) {
  const auto j = summary_json(zigzag_summary());
  for (const char* key : {"time_s", "compute_only_s", "min_block", "engine", "memory_breakdown"}) {
    auto broken = j;
    broken.erase(key);
    try {
      RunSummary::from_json(broken, "child");
      ADD_FAILURE() << key << " missing was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
  auto typed = j;
  typed["time_s"] = "fast";
  EXPECT_THROW(RunSummary::from_json(typed, "child"), InputError);
  // A simgrid summary without its simulated part is incomplete.
  auto sim = j;
  sim["engine"] = "simgrid";
  EXPECT_THROW(RunSummary::from_json(sim, "child"), InputError);
}

}  // namespace
}  // namespace ringsim
