// The planner's re-check hands each config to a child as a run spec; the
// spec must describe the same attention layer the planner timed.
#include <gtest/gtest.h>

#include <cmath>

#include "models/analytic/analytic.hpp"
#include "models/core/catalog.hpp"
#include "models/core/errors.hpp"
#include "models/core/profile.hpp"
#include "models/kernel/gemm.hpp"
#include "proc/recheck.hpp"
#include "proc/resolve.hpp"

namespace ringsim::proc {
namespace {

TEST(Recheck, SpecIsTheConfigsAttentionLayer) {
  HardwareSpec hs;
  hs.gpu = "h100-sxm";
  hs.efficiency = 0.5;  // an override the child must see too
  const auto hw = resolve_hardware(hs, Catalog::embedded(), DType::BF16);
  PlanRequest r;
  r.shape = find_model("--model", "llama3-8b");
  r.context = 1 << 17;
  r.gpus = 16;
  r.tp_degrees = {2};
  const RooflineModel rm(hw.effective_flops());
  const auto cm = bare_implementation(rm);
  const auto c = evaluate(r, hw, cm, Layout::Zigzag, 8, 2, 1);
  ASSERT_TRUE(c.feasible) << c.reason();
  const auto spec = recheck_spec(r, c, hw, hs, Pass::FwdBwd);
  // Through flags and back, then resolved as the child resolves it.
  const auto back = parse_run_args(to_args(spec));
  EXPECT_EQ(back, spec);
  const auto chw = resolve_hardware(back.hardware, Catalog::embedded(), back.workload.dtype);
  const auto w = resolve_workload(back.workload, chw);
  const auto expect = attention_workload(r, c);
  EXPECT_EQ(w.devices, expect.devices);
  EXPECT_EQ(w.block, expect.block);
  EXPECT_EQ(w.layout, Layout::Zigzag);
  EXPECT_EQ(w.shape.heads, expect.shape.heads);  // tp 2: half the heads
  EXPECT_EQ(w.shape.kv_heads, expect.shape.kv_heads);
  EXPECT_EQ(w.layers, 1);
  EXPECT_EQ(chw.gpus_per_node, 4);  // tp 2 takes half of each 8-GPU node
  EXPECT_DOUBLE_EQ(chw.efficiency, 0.5);
  // So the child's closed form is the planner's per layer.
  auto wl = expect;
  wl.layers = 1;
  EXPECT_DOUBLE_EQ(analyze(w, chw).time_s, analyze(wl, group_hardware(hw, 2)).time_s);
}

// `model` on 64 GPUs of the default cluster, and its zigzag config of CP 8 x
// TP 2 (DP 4) as the planner evaluates it.
PlanRequest job_request(const std::string& model, std::int64_t context) {
  PlanRequest r;
  r.shape = find_model("--model", model);
  r.context = context;
  r.gpus = 64;
  r.tp_degrees = {2};
  return r;
}
PlanConfig zigzag_cp8_tp2(const PlanRequest& r, const Hardware& hw) {
  const RooflineModel rm(hw.effective_flops());
  return evaluate(r, hw, bare_implementation(rm), Layout::Zigzag, 8, 2, 1);
}

TEST(Recheck, JobSpecIsTheConfigsWholeLayerOnTheWholeCluster) {
  const auto hw = resolve_hardware(HardwareSpec{}, Catalog::embedded(), DType::BF16);
  const auto r = job_request("llama3-8b", 1 << 17);
  const auto c = zigzag_cp8_tp2(r, hw);
  ASSERT_TRUE(c.feasible) << c.reason();
  ASSERT_EQ(c.dp, 4);
  std::string why;
  ASSERT_TRUE(wants_job(r, c, &why));
  const auto spec = job_spec(r, c, hw, HardwareSpec{});
  EXPECT_EQ(parse_run_args(to_args(spec)), spec);
  EXPECT_EQ(spec.sim.dp, 4);
  EXPECT_EQ(spec.sim.fsdp, std::optional<bool>(true));  // pytorch-fsdp gathers per layer
  const auto chw = resolve_hardware(spec.hardware, Catalog::embedded(), DType::BF16);
  const auto w = resolve_workload(spec.workload, chw);
  EXPECT_EQ(w.devices, 8);
  EXPECT_EQ(w.tp, 2);
  EXPECT_EQ(w.scope, Scope::Layer);
  EXPECT_EQ(w.pass, Pass::FwdBwd);
  EXPECT_EQ(w.layers, 1);
  // The child splits by --tp itself: it gets the whole model's heads and the
  // whole node, and its TP rank's share is the planner's attention workload.
  EXPECT_EQ(w.shape.heads, r.shape.heads);
  EXPECT_EQ(chw.gpus_per_node, 8);
  const auto share = tp_rank_workload(w), planned = attention_workload(r, c);
  EXPECT_EQ(share.shape.heads, planned.shape.heads);
  EXPECT_EQ(share.shape.kv_heads, planned.shape.kv_heads);
  EXPECT_EQ(share.shape.ffn, planned.shape.ffn);
  // Not for a single ring without TP, nor for the all-to-all layouts.
  auto one = c;
  one.tp = one.dp = 1;
  EXPECT_FALSE(wants_job(r, one, &why));
  auto ulysses = c;
  ulysses.layout = Layout::Ulysses;
  EXPECT_FALSE(wants_job(r, ulysses, &why));
  EXPECT_NE(why.find("ulysses"), std::string::npos) << why;
}

// A MoE model's job is the model itself, not a dense stand-in of its width
// (the stand-in's MLP of top-k x expert width hid the experts' FSDP flows).
TEST(Recheck, JobSpecRunsAMoeModelByName) {
  const auto hw = resolve_hardware(HardwareSpec{}, Catalog::embedded(), DType::BF16);
  auto r = job_request("mixtral-8x7b", 1 << 15);
  r.routing_seed = 7;
  auto c = zigzag_cp8_tp2(r, hw);
  ASSERT_TRUE(c.feasible) << c.reason();
  c.ep = 1;
  std::string why;
  ASSERT_TRUE(wants_job(r, c, &why)) << why;
  const auto spec = job_spec(r, c, hw, HardwareSpec{});
  EXPECT_EQ(parse_run_args(to_args(spec)), spec);
  EXPECT_EQ(spec.workload.model, "mixtral-8x7b");
  EXPECT_FALSE(spec.workload.ffn.has_value());
  EXPECT_EQ(spec.workload.routing_seed, std::optional<std::uint64_t>(7));
  const auto chw = resolve_hardware(spec.hardware, Catalog::embedded(), DType::BF16);
  const auto w = resolve_workload(spec.workload, chw);
  EXPECT_EQ(w.shape.experts, 8);
  EXPECT_EQ(w.tp, 2);
  // EP over the data-parallel replicas, an expert TP of its own, a capacity
  // factor or an attention `run` does not model: no job, and why.
  auto wide = c;
  wide.ep = 4;  // dp 4: the EP group spans replicas
  ASSERT_GT(wide.dp, 1);
  EXPECT_FALSE(wants_job(r, wide, &why));
  EXPECT_NE(why.find("ep 4"), std::string::npos) << why;
  auto etp = c;
  etp.etp = 1;
  EXPECT_FALSE(wants_job(r, etp, &why));
  auto capped = r;
  capped.capacity_factor = 1;
  EXPECT_FALSE(wants_job(capped, c, &why));
  auto chunked = r;
  chunked.shape = find_model("--model", "llama4-scout");
  EXPECT_FALSE(wants_job(chunked, c, &why));
  EXPECT_NE(why.find("chunked"), std::string::npos) << why;
}

TEST(Recheck, OffWhenNotAsked) {
  const auto hw = resolve_hardware(HardwareSpec{}, Catalog::embedded(), DType::BF16);
  const RooflineModel rm(hw.effective_flops());
  const auto rc = recheck_top(0, {}, PlanRequest{}, hw, HardwareSpec{}, bare_implementation(rm));
  EXPECT_EQ(std::string(rc.status_name()), "off");
}

// plan's GPU numbering (TP innermost, then CP, then DP) onto the children's
// devices: the TP group of the GPU, its place in the ring or in the job.
TEST(Recheck, FaultsReachTheChildrenOnTheStragglersRingPosition) {
  const auto hw = resolve_hardware(HardwareSpec{}, Catalog::embedded(), DType::BF16);
  PlanRequest r;
  r.shape = find_model("--model", "llama3-8b");
  r.context = 1 << 17;
  r.gpus = 64;
  r.tp_degrees = {2};
  const RooflineModel rm(hw.effective_flops());
  const auto cm = bare_implementation(rm);
  const auto c = evaluate(r, hw, cm, Layout::Zigzag, 8, 2, 1);
  ASSERT_TRUE(c.feasible) << c.reason();
  PlanFaults f;
  f.stragglers = {{21, 1.5}};  // TP group 10: ring position 2 of the second ring
  f.jitter = 0.1;
  f.seed = 7;
  const auto ring = recheck_spec(r, c, hw, HardwareSpec{}, Pass::FwdBwd, f);
  ASSERT_EQ(ring.sim.faults.stragglers.size(), 1u);
  EXPECT_EQ(ring.sim.faults.stragglers[0].device, 2);
  EXPECT_DOUBLE_EQ(ring.sim.faults.stragglers[0].factor, 1.5);
  EXPECT_DOUBLE_EQ(ring.sim.faults.jitter_sigma, 0.1);
  EXPECT_EQ(ring.sim.faults.seed, 7u);
  EXPECT_EQ(parse_run_args(to_args(ring)), ring);  // through flags and back
  const auto job = job_spec(r, c, hw, HardwareSpec{}, f);
  EXPECT_EQ(job.sim.faults.stragglers.at(0).device, 10);  // of cp x dp = 32 TP groups
  EXPECT_EQ(f.describe(), "--straggler 21:1.5 --jitter 0.1 --seed 7");
  EXPECT_DOUBLE_EQ(f.worst(), 1.5);
}

TEST(ResolveHardware, ASaturatedDeviceRunsAtItsSettledClock) {
  // An H100 at its rated 700 W: the peak unscaled, a dense GEMM at the
  // sustained share the catalog measured (0.8921 bf16, 0.9185 FP8 of the
  // best-shape rates), a tensor-core attention kernel at the share a burst
  // keeps (0.8415).
  HardwareSpec hs;
  hs.gpu = "h100-sxm";
  const auto hw = resolve_hardware(hs, Catalog::embedded(), DType::BF16);
  EXPECT_DOUBLE_EQ(hw.clock_scale, 1);
  EXPECT_DOUBLE_EQ(hw.gemm_throttle, 0.8921);
  EXPECT_DOUBLE_EQ(hw.gemm_throttle_fp8, 0.9185);
  EXPECT_DOUBLE_EQ(hw.attention_throttle, 0.8415);
  EXPECT_DOUBLE_EQ(bf16_gemm_rates(hw).peak, 989e12 * 0.8921);
  EXPECT_DOUBLE_EQ(fp8_gemm_rates(hw, 1979e12, 0.709).peak, 1979e12 * 0.9185);
  EXPECT_DOUBLE_EQ(hw.gemm_flops(), hw.flops * 0.8921 * hw.gemm_efficiency);
  // An unmeasured part holds its best-shape rate.
  hs.gpu = "a100-80gb";
  const auto a100 = resolve_hardware(hs, Catalog::embedded(), DType::BF16);
  EXPECT_DOUBLE_EQ(a100.gemm_throttle, 1);
  EXPECT_DOUBLE_EQ(a100.attention_throttle, 1);
}

TEST(ResolveHardware, UnderACapTheSettledRatesFollowThePeaksClock) {
  // Grand Teton's H100 at its 500 W: the peak at the clock (275 W static,
  // 0.80897), and the settled shares on top of it, unchanged.
  HardwareSpec hs;
  hs.cluster = "grand-teton";
  const auto hw = resolve_hardware(hs, Catalog::embedded(), DType::BF16);
  EXPECT_DOUBLE_EQ(hw.power_limit_w, 500);
  EXPECT_NEAR(hw.clock_scale, std::cbrt(225.0 / 425.0), 1e-12);
  EXPECT_DOUBLE_EQ(hw.gemm_throttle, 0.8921);
  EXPECT_DOUBLE_EQ(hw.gemm_throttle_fp8, 0.9185);
  EXPECT_DOUBLE_EQ(hw.attention_throttle, 0.8415);
  EXPECT_DOUBLE_EQ(bf16_gemm_rates(hw).peak, hw.flops * hw.gemm_throttle);
  // No rate passes the capped peak anywhere in the range the model covers
  // (a GEMM or attention above it would read as more than 100% MFU).
  for (double w = 276; w <= 700; w += 2) {
    hs.power_limit = w;
    const auto h = resolve_hardware(hs, Catalog::embedded(), DType::BF16);
    EXPECT_LE(h.gemm_throttle * h.gemm_efficiency, 1.0) << w;
    EXPECT_LE(h.attention_throttle, 1.0) << w;
    EXPECT_LE(h.flops, 989e12 * 1.0000001) << w;
  }
  // At or below the static power the model refuses the limit.
  hs.power_limit = 275;
  EXPECT_THROW(resolve_hardware(hs, Catalog::embedded(), DType::BF16), InputError);
  hs.power_limit = 280;
  EXPECT_NO_THROW(resolve_hardware(hs, Catalog::embedded(), DType::BF16));
}

}  // namespace
}  // namespace ringsim::proc
