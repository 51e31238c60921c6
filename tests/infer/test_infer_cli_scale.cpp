// The 1M-token Llama 3 405B prefill on 128 H100s answered by both engines,
// equal on this rail-optimised cluster (a child `ringsim infer`: SimGrid runs
// in the child). Its own program so that the sanitizer stage can leave it
// out: 3.08M simulated activities take ~5 s here but ~300 s under ASan at -O0,
// and the smaller InferCli and InferSim cases run the same code there.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "proc/child.hpp"
#include "tests/infer/run_json.hpp"

namespace ringsim {
namespace {

using infer_testing::run_json;

TEST(InferCli, Llama405bAtOneMillionTokensBothEnginesAgree) {
  const auto j = run_json({"infer", "--model", "llama3-405b", "--context", "1M", "--gpus", "128",
                           "--gpu", "h100-sxm", "--tp", "8", "--cp", "16"});
  const auto& a = j["analytic"];
  const auto& s = j["simgrid"];
  // Nothing cached, 16 query heads per KV head: pass-kv's K/V message is 16x
  // smaller than pass-q's and every transfer hides: pass-kv, by its TTFT.
  EXPECT_EQ(j["variant"], "pass-kv");
  EXPECT_EQ(j["ring_message_bytes"]["pass-kv"], 2ull * 65536 * 1 * 128 * 2);
  EXPECT_EQ(j["ring_message_bytes"]["pass-q"], 65536ull * 16 * 128 * 2);
  EXPECT_LT(j["ttft_s_by_variant"]["pass-kv"].get<double>(),
            j["ttft_s_by_variant"]["pass-q"].get<double>());
  const double ttft = a["ttft_s"];
  EXPECT_GT(ttft, 0);
  // The breakdown adds up to the TTFT.
  double parts = 0;
  for (const char* k :
       {"attention_s", "return_s", "merge_s", "dense_s", "pointwise_s", "tp_comm_s", "head_s"})
    parts += a[k].get<double>();
  EXPECT_NEAR(parts, ttft, ttft * 1e-12);
  // Rails give every CP transfer its own NICs, the NVLink switch every TP
  // transfer its own ports: the simulation lands on the closed forms.
  EXPECT_NEAR(s["ttft_s"].get<double>(), ttft, ttft * 1e-9);
  EXPECT_NEAR(s["decode_s_per_token"].get<double>(), a["decode_s_per_token"].get<double>(),
              a["decode_s_per_token"].get<double>() * 1e-9);
  // BF16 weights of 405B over TP 8 exceed an 80 GB H100: said, not hidden.
  EXPECT_FALSE(j["memory"]["fits"].get<bool>());
  EXPECT_GT(j["memory"]["weights_bytes"].get<double>(), j["memory"]["hbm_bytes"].get<double>());
}

}  // namespace
}  // namespace ringsim
