// Multi-slice TPU jobs (--slices): the gradient shard's all-reduce over the
// DCN worked out by hand, the optimizer state sharded inside one slice, and
// the refusals where no DCN tier is modelled.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "helpers.hpp"

namespace ringsim {
namespace {

using plan_testing::run_cli;

nlohmann::json top_config(const std::string& slices) {
  const auto r = run_cli({"plan",        "--model",
                          "llama2-7b",   "--context",
                          "2K",          "--gpus",
                          "128",         "--slices",
                          slices,        "--framework",
                          "jax-xla",     "--cluster",
                          "tpu-v5p-pod", "--tp",
                          "1",           "--pp",
                          "1",           "--cp",
                          "1",           "--micro-batch",
                          "4",           "--global-batch-tokens",
                          "1M",          "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out).at("configs").at(0);
}

double item(const nlohmann::json& c, const std::string& name) {
  const auto& m = c.at("memory_breakdown");
  if (!m.contains(name)) {
    ADD_FAILURE() << "no memory item " << name;
    return 0;
  }
  return m.at(name).at("bytes").get<double>();
}

TEST(PlanSlices, DcnAllReduceByHandAndStateShardedInsideASlice) {
  const auto one = top_config("1"), two = top_config("2");
  // One slice: no DCN. Two slices of 64 v5p chips: each chip's bf16 gradient
  // shard, 6,738,415,616 params x 2 B / 64, all-reduced over a ring of 2:
  // 2 x (1/2) x bytes / 6.25e9 B/s (2.5e10 per host / 4 chips) + 2 x 10 us.
  EXPECT_EQ(one.at("time_breakdown").at("dcn_s").get<double>(), 0);
  const double bytes = 6738415616.0 * 2 / 64;
  EXPECT_NEAR(two.at("time_breakdown").at("dcn_s").get<double>(), bytes / 6.25e9 + 2e-5, 1e-9);
  // Hidden behind the backward here, so the step does not move.
  EXPECT_EQ(two.at("time_breakdown").at("dcn_exposed_s").get<double>(), 0);
  // The optimizer state shards over a slice (64 chips), not the job (128).
  EXPECT_NEAR(item(two, "optimizer_m_v_fp32"), 2 * item(one, "optimizer_m_v_fp32"), 1);
}

TEST(PlanSlices, RefusedWhereNoDcnTierIsModelled) {
  const auto gpu = run_cli({"plan", "--model", "llama2-7b", "--context", "2K", "--gpus", "128",
                            "--slices", "2", "--framework", "megatron"});
  EXPECT_EQ(gpu.code, 2);
  EXPECT_NE(gpu.err.find("--slices: multi-slice training over the DCN"), std::string::npos);
  const auto odd = run_cli({"plan", "--model", "llama2-7b", "--context", "2K", "--gpus", "128",
                            "--slices", "3", "--framework", "jax-xla", "--cluster", "tpu-v5p-pod"});
  EXPECT_EQ(odd.code, 2);
  EXPECT_NE(odd.err.find("--slices: must divide --gpus 128, got 3"), std::string::npos);
}

}  // namespace
}  // namespace ringsim
