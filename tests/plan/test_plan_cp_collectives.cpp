// The planner's CP collectives: the "CP comm" row charges the implementation's
// payload (fa3 sends dK/dV in bf16, fa2 in fp32), the itemised rows add up to
// it, and on a TPU torus XLA's collectives separate ring, all-gather and
// Ulysses (docs/plan.md, "Step time"; docs/models.md, "XLA collectives").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "helpers.hpp"

namespace ringsim {
namespace {

using plan_testing::run_cli;

nlohmann::json plan(std::vector<std::string> extra) {
  std::vector<std::string> a{"plan", "--tp", "1", "--pp", "1", "--json"};
  a.insert(a.end(), extra.begin(), extra.end());
  const auto r = run_cli(a);
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out).at("configs").at(0);
}

// cp_link_s = layers x micro-batch x accumulation x (fwd + recompute fwd + bwd)
// under full checkpointing, each pass the sum of its rows.
double rows_total(const nlohmann::json& c, int layers) {
  double fwd = 0, bwd = 0;
  for (const auto& x : c.at("cp_collectives"))
    (x.at("pass") == "fwd" ? fwd : bwd) +=
        x.at("seconds").get<double>() * x.at("per_layer").get<double>();
  return layers * c.at("micro_batch").get<double>() * c.at("grad_accum_steps").get<double>() *
         (2 * fwd + bwd);
}

std::string bwd_ring_payload(const nlohmann::json& c) {
  for (const auto& x : c.at("cp_collectives"))
    if (x.at("pass") == "bwd" && x.at("per_layer") != 1) return x.at("what");
  return "";
}

TEST(PlanCpCollectives, CpCommChargesTheImplementationsGradBytes) {
  const std::vector<std::string> base{"--model", "llama3-8b", "--context", "64K",
                                      "--gpus",  "8",         "--cp",      "8"};
  // Megatron implements the load-balanced ring (zigzag), not the plain one;
  // a step passes the same block's K/V either way.
  auto with = [&](const char* kernel, const char* framework = "pytorch-fsdp") {
    auto a = base;
    const std::string fw = framework;
    a.insert(a.end(), {"--kernel", kernel, "--framework", fw, "--layout",
                       fw == "megatron" ? "zigzag" : "ring"});
    return plan(a);
  };
  const auto fa2 = with("fa2"), fa3 = with("fa3");
  const auto fa2_megatron = with("fa2", "megatron"), fa3_megatron = with("fa3", "megatron");
  // The framework decides which K/V the ring passes, the kernel the dK/dV
  // bytes. pytorch-fsdp (TorchTitan: repeat_kv before SDPA) expands them to
  // the 32 query heads: K/V 8192 x 32 x 128 x 2 B x 2 = 134,217,728 B; megatron
  // (TransformerEngine's CP) passes the 8 groups: 33,554,432 B. dK/dV: fa2
  // under PyTorch's merge in fp32 (twice K/V), fa3 under TE in bf16 (once).
  EXPECT_EQ(bwd_ring_payload(fa2), "K/V + dK/dV (402653184 B)");
  EXPECT_EQ(bwd_ring_payload(fa3), "K/V + dK/dV (268435456 B)");
  EXPECT_EQ(bwd_ring_payload(fa2_megatron), "K/V + dK/dV (100663296 B)");
  EXPECT_EQ(bwd_ring_payload(fa3_megatron), "K/V + dK/dV (67108864 B)");
  for (const auto* c : {&fa2, &fa3}) {
    EXPECT_EQ(c->at("cp_collective_model"), "links");
    EXPECT_NEAR(c->at("time_breakdown").at("cp_link_s").get<double>(), rows_total(*c, 32),
                1e-9 * rows_total(*c, 32));
  }
  EXPECT_LT(fa3.at("time_breakdown").at("cp_link_s").get<double>(),
            fa2.at("time_breakdown").at("cp_link_s").get<double>());
}

TEST(PlanCpCollectives, TpuItemisesXlaCollectivesThatSeparateTheLayouts) {
  auto on_v5p = [](const char* layout) {
    return plan({"--model", "llama2-7b", "--context", "32K", "--gpus", "64", "--cluster",
                 "tpu-v5p-pod", "--framework", "jax-xla", "--cp", "16", "--layout", layout,
                 "--micro-batch", "16", "--global-batch-tokens", "2M"});
  };
  const auto ring = on_v5p("ring"), ag = on_v5p("allgather"), uly = on_v5p("ulysses");
  // One ring step: K/V (2048 x 32 x 128 x 2 B x 2) over one 9e10 B/s link + 1 us.
  const auto& step = ring.at("cp_collectives").at(0);
  EXPECT_EQ(step.at("op"), "collective-permute");
  EXPECT_TRUE(step.at("overlapped").get<bool>());
  EXPECT_EQ(step.at("per_layer"), 15);
  EXPECT_NEAR(step.at("seconds").get<double>(), 1e-6 + 33554432 / 9e10, 1e-12);
  // All-gather: 15 blocks in over the 4 links of a 4x4 group; its reduce-scatter
  // in bf16 (JAX's transpose of the all-gather), the same time.
  const auto& g = ag.at("cp_collectives");
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g.at(0).at("op"), "all-gather");
  EXPECT_NEAR(g.at(0).at("seconds").get<double>(), 15 * 33554432 / (4 * 9e10), 1e-12);
  EXPECT_EQ(g.at(2).at("op"), "reduce-scatter");
  EXPECT_NEAR(g.at(2).at("seconds").get<double>(), 15 * 33554432 / (4 * 9e10), 1e-12);
  // Ulysses forward: Q, K, V in (3 x 16,777,216 B), each busiest link b / 2.
  const auto& u = uly.at("cp_collectives").at(0);
  EXPECT_EQ(u.at("op"), "all-to-all");
  EXPECT_FALSE(u.at("overlapped").get<bool>());
  EXPECT_NEAR(u.at("seconds").get<double>(), 3 * 16777216 / 2 / 9e10, 1e-12);
  for (const auto* c : {&ring, &ag, &uly}) EXPECT_EQ(c->at("cp_collective_model"), "xla-ici");
  // The ring's link-bound steps make it the slowest of the three here.
  EXPECT_GT(ring.at("step_time_s").get<double>(), ag.at("step_time_s").get<double>());
  EXPECT_GT(ag.at("step_time_s").get<double>(), uly.at("step_time_s").get<double>());
}

}  // namespace
}  // namespace ringsim
