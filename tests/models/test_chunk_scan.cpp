// The seed's JAX blockwise scan (ringattention-jax), worked out by hand: chunk
// tiles computed or skipped, the loop control every chunk pair costs, the
// precision's matmul rate and score traffic, the ring payload (K in fp32), and
// the closed forms built on them (docs/models.md, "JAX blockwise scan").
#include <gtest/gtest.h>

#include "models/analytic/analytic.hpp"
#include "models/analytic/report.hpp"
#include "models/core/catalog.hpp"
#include "models/core/errors.hpp"
#include "models/kernel/chunk_scan.hpp"
#include "models/kernel/implementation.hpp"
#include "tests/models/helpers.hpp"

namespace ringsim {
namespace {

using testing::make_workload;

const Catalog& cat() {
  return Catalog::embedded();
}

// An A100 80GB as the catalog has it, on a flat ring of `bw` B/s links that
// no communication library takes SMs on ("ici").
Hardware a100(double bw = 1e18) {
  const auto& d = cat().device("a100-80gb");
  auto hw = testing::flat(d.peak(DType::BF16), bw);
  hw.gpu_name = d.name;
  hw.efficiency = d.attention_efficiency;
  hw.gemm_efficiency = d.gemm_efficiency;
  hw.hbm_bandwidth = d.hbm_bandwidth;
  hw.hbm_efficiency = d.hbm_efficiency;
  hw.intra_kind = hw.inter_kind = "ici";
  return hw;
}

std::shared_ptr<const Implementation> jax(const Hardware& hw, std::int64_t qc, std::int64_t kc) {
  ImplementationChoice c;
  c.kernel = "ringattention-jax";
  c.query_chunk = qc;
  c.key_chunk = kc;
  return make_implementation(cat(), hw, DType::BF16, c);
}

const ChunkScanTarget& gpu_target() {
  return cat().kernel("ringattention-jax").chunk_scan.targets.at("gpu");
}

TEST(ChunkScan, TilesComputedUnlessWhollyMasked) {
  const ChunkScanModel m("jax", gpu_target(), 1024, 1024, a100());
  // Causal 4096 x 4096, one head: query chunk i touches key chunks 0..i,
  // 1 + 2 + 3 + 4 = 10 tiles of 1024 x 1024, partly masked ones in full.
  const KernelCall causal{4096, 4096, CallMask::Causal, 0, 1};
  auto t = m.tiles(causal);
  EXPECT_EQ(t.query_chunks, 4);
  EXPECT_EQ(t.key_chunks, 4);
  EXPECT_EQ(t.executed_pairs, 10u * 1024 * 1024);
  // Striped's strict diagonal (keys from a higher device): the same tiles.
  EXPECT_EQ(m.tiles({4096, 4096, CallMask::Causal, -1, 1}).executed_pairs, 10u * 1024 * 1024);
  // Full: every tile; heads multiply.
  EXPECT_EQ(m.tiles({4096, 4096, CallMask::Full, 0, 32}).executed_pairs, 32u * 4096 * 4096);
  // The Striped paper's A100 tiles, 2048 x 4096, on a 4096 block: both query
  // chunks touch the one key chunk, so the causal block costs a full one.
  const ChunkScanModel big("jax", gpu_target(), 2048, 4096, a100());
  t = big.tiles(causal);
  EXPECT_EQ(t.query_chunks, 2);
  EXPECT_EQ(t.key_chunks, 1);
  EXPECT_EQ(t.executed_pairs, 4096u * 4096);
  // A chunk larger than the call is the call: 512 rows, one chunk each way.
  t = big.tiles({512, 512, CallMask::Causal, 0, 1});
  EXPECT_EQ(t.query_chunks, 1);
  EXPECT_EQ(t.key_chunks, 1);
  EXPECT_EQ(t.executed_pairs, 512u * 512);
}

TEST(ChunkScan, EntryCostIsTheMatmulsAtTf32PlusTheScoreTraffic) {
  const auto hw = a100();
  const ChunkScanModel m("jax", gpu_target(), 512, 512, hw);
  const auto& d = cat().device("a100-80gb");
  // TF32 is half the bf16 peak; the einsums at the best-shape GEMM fraction.
  const double mm = d.peak(DType::BF16) * d.gemm_efficiency * 0.5;
  EXPECT_DOUBLE_EQ(m.matmul_flops(), mm);
  const double hbm = d.hbm_bandwidth * d.hbm_efficiency;
  // Forward 4d FLOPs and 20 B of fp32 scores per entry; backward 10d and 40 B.
  EXPECT_DOUBLE_EQ(m.entry_seconds(128, false), 512 / mm + 20 / hbm);
  EXPECT_DOUBLE_EQ(m.entry_seconds(128, true), 1280 / mm + 40 / hbm);
}

TEST(ChunkScan, LoopControlEveryChunkPairSkippedOrNot) {
  const auto& g = gpu_target();
  // 8.16 us per host-evaluated predicate: a chunk pair is a scan iteration
  // and a lax.cond, a query chunk and a ring step one iteration each.
  EXPECT_DOUBLE_EQ(g.chunk_iteration_s, 2 * 8.16e-6);
  EXPECT_DOUBLE_EQ(g.query_iteration_s, 8.16e-6);
  EXPECT_DOUBLE_EQ(g.step_s, 8.16e-6);
  const ChunkScanModel big("jax", g, 2048, 4096, a100());
  // Block 4096: 2 query chunks x 1 key chunk.
  EXPECT_NEAR(big.loop_seconds(4096, 4096), 8.16e-6 + 2 * 8.16e-6 + 2 * 16.32e-6, 1e-18);
  // The README's 512 x 512: 8 x 8 pairs, 1117.92 us a step.
  const ChunkScanModel dflt("jax", g, 512, 512, a100());
  EXPECT_NEAR(dflt.loop_seconds(4096, 4096), 1117.92e-6, 1e-15);
}

TEST(ChunkScan, StepChargesTilesLoopAndCarryInBothPasses) {
  const auto hw = a100();
  const auto im = jax(hw, 2048, 4096);
  const auto w = make_workload(4, 4096, Layout::Ring, true, Pass::FwdBwd);
  const auto* m = im->chunk_scan();
  ASSERT_NE(m, nullptr);
  const double loop = 8.16e-6 + 2 * 8.16e-6 + 2 * 16.32e-6;
  const double q_elems = 4096.0 * 32 * 128, kv_elems = 4096.0 * 8 * 128;
  const double hbm = cat().device("a100-80gb").hbm_bandwidth;  // the ops' rate
  // Device 3, step 0: its own causal block, both chunk tiles in full.
  auto c = im->step(w, 3, 0, false, true);
  EXPECT_NEAR(c.attention_s, 4096.0 * 4096 * 32 * m->entry_seconds(128, false), 1e-15);
  EXPECT_NEAR(c.loop_s, loop, 1e-18);
  EXPECT_NEAR(c.launch_s, loop, 1e-18);
  EXPECT_NEAR(c.merge_s, 24 * q_elems / hbm, 1e-15);
  // Device 0, step 1: a later block, every tile skipped; the scan still runs.
  c = im->step(w, 0, 1, false, true);
  EXPECT_EQ(c.attention_s, 0);
  EXPECT_EQ(c.merge_s, 0);
  EXPECT_NEAR(c.launch_s, loop, 1e-18);
  // Backward: the dQ carry (36 B per query element); dK and dV moved to the
  // chunk axis and back (32 B per key element) and added into the block's
  // after each of the 2 query chunks (32 B per key element each).
  c = im->step(w, 3, 1, true, true);
  EXPECT_NEAR(c.attention_s, 4096.0 * 4096 * 32 * m->entry_seconds(128, true), 1e-15);
  EXPECT_NEAR(c.merge_s, (36 * q_elems + (32 + 2 * 32) * kv_elems) / hbm, 1e-15);
  // A backward step whose tiles are all skipped still runs its scan, and so
  // still writes the zero dK/dV parts and adds them in.
  c = im->step(w, 0, 1, true, true);
  EXPECT_EQ(c.attention_s, 0);
  EXPECT_NEAR(c.merge_s, (32 + 2 * 32) * kv_elems / hbm, 1e-15);
  // The ring: K in fp32 (4 B) and V in bf16 (2 B); dK/dV in fp32.
  EXPECT_EQ(im->k_bytes(), 4);
  EXPECT_EQ(im->grad_bytes(), 4);
  const auto fwd = pass_bytes(w, false, im->grad_bytes(), im->k_bytes());
  EXPECT_EQ(fwd.ring, 4096u * 8 * 128 * 6);
  const auto bwd = pass_bytes(w, true, im->grad_bytes(), im->k_bytes());
  EXPECT_EQ(bwd.ring, 4096u * 8 * 128 * (6 + 8));
}

TEST(ChunkScan, BackwardAddsDkDvOncePerQueryChunk) {
  // The seed's backward returns (dk + dk_part, dv + dv_part) from its outer
  // scan: the whole block's dK and dV move once per query chunk, so halving
  // the query chunk doubles that traffic and nothing else.
  const auto hw = a100();
  const auto w = make_workload(4, 4096, Layout::Ring, true, Pass::FwdBwd);
  const double hbm = cat().device("a100-80gb").hbm_bandwidth;
  const double q_elems = 4096.0 * 32 * 128, kv_elems = 4096.0 * 8 * 128;
  for (const std::int64_t qc : {4096, 2048, 1024, 512}) {
    const auto im = jax(hw, qc, 4096);
    const double chunks = 4096.0 / static_cast<double>(qc);
    const auto c = im->step(w, 3, 1, true, true);
    EXPECT_NEAR(c.merge_s, (36 * q_elems + (32 + 32 * chunks) * kv_elems) / hbm, 1e-15) << qc;
  }
}

TEST(ChunkScan, ClosedFormIsTheSumOfHandSteps) {
  // Flat 4-device ring, causal forward, free links: the critical device (3)
  // computes a full 4096 block every step (2048 x 4096 chunks skip nothing
  // of its causal one), pays the loop and carry every step, then the output
  // normalisation once.
  const auto hw = a100();
  const auto im = jax(hw, 2048, 4096);
  const auto w = make_workload(4, 4096, Layout::Ring, true);
  const auto s = analyze(w, hw, *im);
  const double hbm = cat().device("a100-80gb").hbm_bandwidth;
  const double attn = 4096.0 * 4096 * 32 * im->chunk_scan()->entry_seconds(128, false);
  const double loop = 8.16e-6 + 2 * 8.16e-6 + 2 * 16.32e-6;
  const double carry = 24 * 4096.0 * 32 * 128 / hbm;
  const double final_op = 14 * 4096.0 * 32 * 128 / hbm;
  const double comm = 4096.0 * 8 * 128 * 6 / 1e18;
  EXPECT_NEAR(s.time_s, 4 * (attn + loop + carry) + final_op, comm * 4 + 1e-12);
  ASSERT_TRUE(s.chunk_scan.has_value());
  EXPECT_EQ(s.chunk_scan->query_chunk, 2048);
  EXPECT_EQ(s.chunk_scan->key_chunk, 4096);
  EXPECT_EQ(s.chunk_scan->chunk_iterations_per_step, 2);
  EXPECT_NEAR(s.chunk_scan->loop_s_per_step, loop, 1e-18);
  EXPECT_EQ(s.chunk_scan->k_bytes, 4);
  // The summary's JSON carries it and reads back the same.
  const auto back = RunSummary::from_json(summary_json(s), "test");
  ASSERT_TRUE(back.chunk_scan.has_value());
  EXPECT_EQ(*back.chunk_scan, *s.chunk_scan);
}

TEST(ChunkScan, StripedIsNotFasterThanRingWithinOneTile) {
  // Block 4096 <= one 2048 x 4096 tile: striped's strict causal blocks skip
  // no chunk, so every device computes a full block every step, which is
  // what ring's critical device does.
  const auto hw = a100(300e9);
  const auto im = jax(hw, 2048, 4096);
  for (const auto pass : {Pass::Fwd, Pass::FwdBwd}) {
    const auto ring = analyze(make_workload(4, 4096, Layout::Ring, true, pass), hw, *im);
    const auto striped = analyze(make_workload(4, 4096, Layout::Striped, true, pass), hw, *im);
    EXPECT_GE(striped.time_s, ring.time_s * (1 - 1e-12)) << to_string(pass);
  }
  // With small chunks striped skips the upper tiles and wins, as published.
  const auto small = jax(hw, 512, 512);
  const auto ring = analyze(make_workload(4, 16384, Layout::Ring, true), hw, *small);
  const auto striped = analyze(make_workload(4, 16384, Layout::Striped, true), hw, *small);
  EXPECT_LT(striped.time_s, ring.time_s);
}

TEST(ChunkScan, ChunkFlagsOnlyForTheChunkScanAndTpuHasNoScoreTraffic) {
  const auto hw = a100();
  ImplementationChoice c;
  c.kernel = "fa2";
  c.query_chunk = 1024;
  EXPECT_THROW(make_implementation(cat(), hw, DType::BF16, c), InputError);
  // Defaults: the seed README's 512 x 512.
  const auto dflt = jax(hw, 0, 0);
  EXPECT_EQ(dflt->chunk_scan()->query_chunk(), 512);
  EXPECT_EQ(dflt->chunk_scan()->key_chunk(), 512);
  // TPU: the Pallas kernel keeps the score tile on chip, one bf16 pass.
  const auto& t = cat().kernel("ringattention-jax").chunk_scan.targets.at("tpu");
  EXPECT_EQ(t.score_bytes_fwd, 0);
  EXPECT_EQ(t.matmul_peak_fraction, 1);
}

}  // namespace
}  // namespace ringsim

namespace ringsim {
namespace {

TEST(Permutation, PerLayerIsAnAllToAllOfQkvInAndOOut) {
  // Flat 4-device ring, striped, causal forward+backward, 1024 tokens a
  // device, 1e11 B/s links: reordering around every attention moves Q, K, V
  // (32 + 2 x 8 heads x 128 x 2 B per token) in and O (32 x 128 x 2 B) out
  // forward, dO in and dQ, dK, dV out backward; each device keeps 1/4 and
  // sends 3 quarters, one per round.
  const auto w = testing::make_workload(4, 1024, Layout::Striped, true, Pass::FwdBwd);
  const auto hw = testing::flat(1e15, 1e11);
  RooflineModel rm(1e15);
  auto pipeline = bare_implementation(rm);
  auto layer = bare_implementation(rm);
  layer.permutation_ = "layer";
  const std::uint64_t qkv = 1024ull * 48 * 128 * 2, o = 1024ull * 32 * 128 * 2;
  const auto f = pass_bytes(w, false, layer), b = pass_bytes(w, true, layer);
  EXPECT_EQ(f.a2a_in, qkv);
  EXPECT_EQ(f.a2a_out, o);
  EXPECT_EQ(b.a2a_in, o);
  EXPECT_EQ(b.a2a_out, qkv);
  EXPECT_EQ(pass_bytes(w, false, pipeline).a2a_in, 0u);
  // Ring layout: nothing to reorder.
  EXPECT_EQ(pass_bytes(testing::make_workload(4, 1024, Layout::Ring, true), false, layer).a2a_in,
            0u);
  const double a2a = 2 * 3 * ((qkv + o) / 4.0) / 1e11;  // both passes
  const auto sp = analyze(w, hw, pipeline), sl = analyze(w, hw, layer);
  EXPECT_NEAR(sl.time_s - sp.time_s, a2a, 1e-15);
  ASSERT_TRUE(sl.permutation.has_value());
  EXPECT_EQ(sl.permutation->where, "layer");
  EXPECT_TRUE(sl.permutation->charged);
  EXPECT_EQ(sl.permutation->bytes, 2 * (qkv + o));
  EXPECT_NEAR(sl.permutation->seconds, a2a, 1e-18);
  // The data pipeline's: token ids and positions, 8 B a token, not charged.
  ASSERT_TRUE(sp.permutation.has_value());
  EXPECT_EQ(sp.permutation->where, "pipeline");
  EXPECT_FALSE(sp.permutation->charged);
  EXPECT_EQ(sp.permutation->bytes, 8u * 1024);
  EXPECT_FALSE(analyze(testing::make_workload(4, 1024, Layout::Ring, true), hw, layer)
                   .permutation.has_value());
  const auto back = RunSummary::from_json(summary_json(sl), "test");
  ASSERT_TRUE(back.permutation.has_value());
  EXPECT_EQ(*back.permutation, *sl.permutation);
  // Every built-in implementation permutes in the data pipeline (its source says where).
  for (const auto& k : cat().kernels()) {
    EXPECT_EQ(k.permutation, "pipeline") << k.name;
    EXPECT_FALSE(k.permutation_source.empty()) << k.name;
  }
}

}  // namespace
}  // namespace ringsim
