// The SimGrid model of inference against the hand-worked cases of
// test_infer_model.cpp and against the closed forms where no link is shared
// (docs/inference.md, "Both engines"). One simulation per test: SimGrid
// allows one engine per process, and ctest runs each test alone.
#include <gtest/gtest.h>

#include <memory>

#include "models/core/catalog.hpp"
#include "proc/resolve.hpp"
#include "sim/infer_sim.hpp"
#include "sim/simulate.hpp"
#include "tests/infer/helpers.hpp"

namespace ringsim {
namespace {

using namespace infer_testing;

constexpr double kRel = 1e-9;

sim::InferSimOptions options(const InferRequest& r, const Hardware& hw, const Implementation& im,
                             InferVariant v) {
  sim::InferSimOptions o;
  o.request = r;
  o.hardware = hw;
  o.prefill = infer_layer(r, hw, im, v, false);
  o.decode = infer_layer(r, hw, im, v, true);
  o.prefill_head_s = head_seconds(r, hw, 1);
  o.decode_head_s = head_seconds(r, hw, r.batch);
  return o;
}

#define RINGSIM_ONE_ENGINE()                                                        \
  do {                                                                              \
    if (!sim::simulation_available())                                               \
      GTEST_SKIP() << "SimGrid allows one engine per process: run this test alone " \
                      "(ctest does; by hand, use --gtest_filter)";                  \
  } while (0)

TEST(InferSim, HandCasePassQ) {
  RINGSIM_ONE_ENGINE();
  // test_infer_model.cpp's PrefillPassKvAndPassQ and DecodeOverShardedCache:
  // TTFT = 9.216 ms ring + 5.76 ms return + 294.912 ms dense + 16.2 us kernel
  // gaps + 9.728 us pointwise + 128 ms head; decode (pass-Q) 3.84 ms ring +
  // 1.44 ms all-to-all + 73.728 ms + 16.2 us + 2.432 us + 128 ms.
  Roofline rf;
  const auto hw = slow_flat();
  const auto r = tiny_request(2, 8, 0);
  const auto s = sim::simulate_infer(options(r, hw, rf.im, InferVariant::PassQ));
  const double ttft = 9.216e-3 + 5.76e-3 + 0.294912 + 16.2e-6 + 9.728e-6 + 0.128;
  EXPECT_NEAR(s.ttft_s, ttft, ttft * kRel);
  const double decode = 3.84e-3 + 1.44e-3 + 73.728e-3 + 16.2e-6 + 2.432e-6 + 0.128;
  EXPECT_NEAR(s.decode_s, decode, decode * kRel);
  EXPECT_NEAR(s.prefill.return_s, 5.76e-3, 5.76e-3 * kRel);
}

// The catalog's H100 nodes (NVLink, one NIC per GPU on rails) and their
// default attention implementation.
struct H100Nodes {
  Hardware hw;
  std::shared_ptr<const Implementation> im;
};
H100Nodes h100_nodes() {
  proc::HardwareSpec hs;
  hs.gpu = "h100-sxm";
  const auto& cat = Catalog::embedded();
  H100Nodes n{proc::resolve_hardware(hs, cat, DType::BF16), nullptr};
  n.im = proc::make_implementation(hs, cat, n.hw, DType::BF16);
  return n;
}

// Llama 3 8B on two H100 nodes (TP 8 x CP 2), one NIC per GPU on rails: every
// transfer has its own links, so SimGrid equals the closed forms.
void agree(InferVariant v, std::int64_t cached, Layout layout) {
  const auto [hw, im] = h100_nodes();
  InferRequest r;
  r.shape = find_model("--model", "llama3-8b");
  r.shape.layers = 4;
  r.context = 65536;
  r.cached = cached;
  r.gpus = 16;
  r.tp = 8;
  r.cp = 2;
  r.layout = layout;
  r.auto_variant = false;
  r.variant = v;
  const auto a = infer(r, hw, *im);
  const auto s = sim::simulate_infer(options(r, hw, *im, v));
  EXPECT_NEAR(s.ttft_s, a.ttft_s, a.ttft_s * kRel);
  EXPECT_NEAR(s.decode_s, a.decode_s_per_token, a.decode_s_per_token * kRel);
  EXPECT_NEAR(s.prefill.tp_s, a.tp_s, a.tp_s * kRel);
  // A rank that finishes its ring early waits in the all-to-all instead: the
  // split between the two phases is the busiest GPU's, their sum the same.
  const double ring = a.attention_s + a.return_s;
  EXPECT_NEAR(s.prefill.attention_s + s.prefill.return_s, ring, ring * kRel);
}

TEST(InferSim, AgreesPassKvZigzag) {
  RINGSIM_ONE_ENGINE();
  agree(InferVariant::PassKv, 0, Layout::Zigzag);
}

TEST(InferSim, AgreesPassQWithCache) {
  RINGSIM_ONE_ENGINE();
  agree(InferVariant::PassQ, 49152, Layout::Zigzag);
}

TEST(InferSim, AgreesPassKvStripedWithCache) {
  RINGSIM_ONE_ENGINE();
  agree(InferVariant::PassKv, 32768, Layout::Striped);
}

TEST(InferSim, HandCaseChunkedLayers) {
  RINGSIM_ONE_ENGINE();
  // test_infer_chunked.cpp's case: a chunked layer (5.12 ms of ring) then a
  // global one (9.216 ms), each with 294.912 ms dense + 16.2 us gaps + 9.728
  // us pointwise, then the 128 ms head.
  Roofline rf;
  const auto hw = slow_flat();
  auto r = tiny_request(2, 8, 0);
  r.shape.layers = 2;
  r.shape.attention_chunk = 4;
  r.shape.global_every = 2;
  auto o = options(r, hw, rf.im, InferVariant::PassKv);
  o.prefill_chunked = infer_layer(r, hw, rf.im, InferVariant::PassKv, false, true);
  o.decode_chunked = infer_layer(r, hw, rf.im, InferVariant::PassKv, true, true);
  const auto s = sim::simulate_infer(o);
  const double ttft = 5.12e-3 + 9.216e-3 + 2 * (0.294912 + 16.2e-6 + 9.728e-6) + 0.128;
  EXPECT_NEAR(s.ttft_s, ttft, ttft * kRel);
  const auto a = infer(r, hw, rf.im);
  EXPECT_NEAR(s.decode_s, a.decode_s_per_token, a.decode_s_per_token * kRel);
}

// Qwen3-30B-A3B on two H100 nodes (TP 4 x CP 4) with EP 16 across the four
// CP ranks: the dispatch and combine (decode: the all-reduce) are played at
// the closed forms' time, so the engines agree.
TEST(InferSim, AgreesExpertParallelAcrossCpRanks) {
  RINGSIM_ONE_ENGINE();
  const auto [hw, im] = h100_nodes();
  InferRequest r;
  r.shape = find_model("--model", "qwen3-30b-a3b");
  r.shape.layers = 2;
  r.context = 32768;
  r.gpus = 16;
  r.tp = 4;
  r.cp = 4;
  r.ep = 16;
  r.auto_variant = false;
  const auto a = infer(r, hw, *im);
  ASSERT_GT(a.ep_s, 0);
  const auto s = sim::simulate_infer(options(r, hw, *im, r.variant));
  EXPECT_NEAR(s.ttft_s, a.ttft_s, a.ttft_s * kRel);
  EXPECT_NEAR(s.decode_s, a.decode_s_per_token, a.decode_s_per_token * kRel);
  EXPECT_NEAR(s.prefill.ep_s, a.ep_s, a.ep_s * kRel);
}

TEST(InferSim, TraceHasEveryPhase) {
  RINGSIM_ONE_ENGINE();
  Roofline rf;
  const auto r = tiny_request(2, 8, 0);
  auto o = options(r, slow_flat(), rf.im, InferVariant::PassQ);
  o.record_events = true;
  const auto s = sim::simulate_infer(o);
  ASSERT_EQ(s.events.size(), 2u);
  bool seen[trace::kPhaseCount] = {};
  for (const auto& lane : s.events)
    for (const auto& e : lane) {
      EXPECT_GT(e.dur, 0);
      seen[static_cast<int>(e.phase)] = true;
    }
  for (auto p : {trace::Phase::Partial, trace::Phase::Send, trace::Phase::Recv,
                 trace::Phase::AllToAll, trace::Phase::Dense, trace::Phase::Wait})
    EXPECT_TRUE(seen[static_cast<int>(p)]) << trace::phase_name(p);
}

}  // namespace
}  // namespace ringsim
