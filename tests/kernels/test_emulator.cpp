// The ring emulator against the float64 reference for every layout x mask x
// MHA/GQA x forward/backward x fp32/fp64, and its recorded work against the
// closed forms of models/core/work.hpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "kernels/inputs.hpp"
#include "kernels/verify.hpp"
#include "models/core/errors.hpp"
#include "models/core/work.hpp"

namespace ringsim::kernels {
namespace {

using testing::small_workload;

struct Config {
  Layout layout;
  std::int64_t devices, block;
  int heads, kv_heads, dim, ulysses = 0;
};

std::string describe(const Workload& w, bool fp64) {
  return fmt::format("{} n={} c={} H={} Hkv={} d={} u={} {} {}", to_string(w.layout), w.devices,
                     w.block, w.shape.heads, w.shape.kv_heads, w.shape.head_dim, w.ulysses(),
                     w.causal ? "causal" : "full", fp64 ? "fp64" : "fp32");
}

// Small shapes, including odd blocks, odd head dims, odd device counts, GQA and MHA.
std::vector<Config> configs() {
  return {
      {Layout::Ring, 4, 6, 4, 2, 8},      {Layout::Ring, 3, 5, 3, 3, 7},
      {Layout::Ring, 1, 9, 2, 1, 4},      {Layout::Striped, 4, 6, 4, 4, 8},
      {Layout::Striped, 3, 5, 6, 2, 7},   {Layout::Zigzag, 4, 6, 4, 2, 8},
      {Layout::Zigzag, 3, 4, 3, 3, 5},    {Layout::Ulysses, 2, 7, 4, 2, 8},
      {Layout::Ulysses, 4, 5, 4, 4, 6},   {Layout::Allgather, 4, 6, 4, 2, 8},
      {Layout::Allgather, 3, 4, 3, 3, 5}, {Layout::Hybrid, 4, 6, 4, 2, 8, 2},
      {Layout::Hybrid, 6, 3, 4, 2, 5, 2}, {Layout::Hybrid, 4, 4, 4, 4, 8, 4},
      {Layout::Hybrid, 3, 4, 2, 1, 4, 1},
  };
}

TEST(Emulator, EveryLayoutMatchesReferenceForwardAndBackward) {
  std::uint64_t seed = 1;
  for (const auto& c : configs())
    for (bool causal : {false, true})
      for (bool fp64 : {false, true}) {
        const auto w = small_workload(c.layout, c.devices, c.block, c.heads, c.kv_heads, c.dim,
                                      causal, c.ulysses);
        SCOPED_TRACE(describe(w, fp64));
        const auto in = random_inputs(w, seed++, fp64 ? NpyDType::F64 : NpyDType::F32);
        // Tiles smaller than a shard, so every step runs several masked and full tiles.
        const auto rep = verify_run(w, in, fp64, true, BlockOpts{4, 3});
        for (const auto& e : rep.errors)
          EXPECT_TRUE(e.ok) << e.tensor << " error " << e.max_abs << " > tolerance " << e.tolerance;
        EXPECT_EQ(rep.work_mismatch, "");
        EXPECT_EQ(rep.result.dq.size(), in.q.size());
      }
}

TEST(Emulator, ForwardOnlyLeavesBackwardEmpty) {
  const auto w = small_workload(Layout::Zigzag, 4, 4, 2, 1, 4, true);
  const auto in = random_inputs(w, 5, NpyDType::F32);
  const auto r = emulate<float>(w, in, false);
  EXPECT_TRUE(r.bwd.steps.empty());
  EXPECT_TRUE(r.dq.empty());
  EXPECT_EQ(check_work_counts(w, r), "");
}

// Larger rings with head_dim 1 (the counts do not depend on it): every
// device-step's kernel-counted entries, block source and elements sent equal
// models/core/work.hpp, forward and backward.
TEST(Emulator, WorkCountsEqualTheAnalyticModel) {
  const std::vector<Config> cs = {
      {Layout::Ring, 8, 8, 4, 2, 1},      {Layout::Striped, 8, 8, 4, 2, 1},
      {Layout::Zigzag, 8, 8, 4, 2, 1},    {Layout::Ulysses, 2, 16, 4, 2, 1},
      {Layout::Allgather, 8, 8, 4, 2, 1}, {Layout::Hybrid, 8, 4, 4, 2, 1, 2},
      {Layout::Striped, 5, 7, 2, 2, 1},   {Layout::Hybrid, 8, 3, 8, 4, 1, 4},
  };
  for (const auto& c : cs)
    for (bool causal : {false, true}) {
      const auto w = small_workload(c.layout, c.devices, c.block, c.heads, c.kv_heads, c.dim,
                                    causal, c.ulysses);
      SCOPED_TRACE(describe(w, false));
      const auto r = emulate<float>(w, random_inputs(w, 3, NpyDType::F32), true, BlockOpts{4, 4});
      EXPECT_EQ(check_work_counts(w, r), "");
      std::uint64_t total = 0;
      for (std::int64_t d = 0; d < w.devices; ++d)
        for (std::int64_t s = 0; s < num_steps(w); ++s) {
          const auto& st = r.fwd.steps[static_cast<std::size_t>(d)][static_cast<std::size_t>(s)];
          EXPECT_EQ(st.entries, step_entries(w, d, s));
          EXPECT_EQ(r.bwd.steps[static_cast<std::size_t>(d)][static_cast<std::size_t>(s)].entries,
                    step_entries(w, d, s));
          if (s + 1 < num_steps(w)) {
            EXPECT_EQ(st.sent, ring_elements_per_step(w, false));
            EXPECT_EQ(r.bwd.steps[static_cast<std::size_t>(d)][static_cast<std::size_t>(s)].sent,
                      ring_elements_per_step(w, true));
          }
          total += st.entries;
        }
      EXPECT_EQ(total, total_entries(w));
      const auto S = static_cast<std::uint64_t>(w.seq_len());
      EXPECT_EQ(total,
                static_cast<std::uint64_t>(w.shape.heads) * (causal ? S * (S + 1) / 2 : S * S));
    }
}

TEST(Emulator, WorkCheckCanFail) {
  const auto w = small_workload(Layout::Ring, 4, 4, 2, 2, 2, true);
  auto r = emulate<float>(w, random_inputs(w, 3, NpyDType::F32), true);
  ASSERT_EQ(check_work_counts(w, r), "");
  auto bad = r;
  bad.fwd.steps[2][1].entries += 1;
  EXPECT_NE(check_work_counts(w, bad), "");
  bad = r;
  bad.bwd.steps[0][3].sent = 1;  // the last step sends nothing
  EXPECT_NE(check_work_counts(w, bad), "");
  bad = r;
  bad.bwd.home_sent[1] = 0;  // dK/dV must go home
  EXPECT_NE(check_work_counts(w, bad), "");
}

TEST(Emulator, ScoreBlockPerDevice) {
  struct Want {
    Config c;
    std::int64_t rows, cols;
  };
  for (const auto& [c, rows, cols] :
       std::vector<Want>{{{Layout::Ring, 4, 8, 1, 1, 2}, 8, 8},
                         {{Layout::Zigzag, 4, 8, 1, 1, 2}, 8, 8},
                         {{Layout::Ulysses, 2, 8, 2, 2, 2}, 16, 16},
                         {{Layout::Allgather, 4, 8, 1, 1, 2}, 8, 32},
                         {{Layout::Hybrid, 4, 8, 2, 2, 2, 2}, 16, 16}}) {
    const auto w =
        small_workload(c.layout, c.devices, c.block, c.heads, c.kv_heads, c.dim, true, c.ulysses);
    const auto r = emulate<float>(w, random_inputs(w, 1, NpyDType::F32), false);
    EXPECT_EQ(r.max_q_rows, rows) << to_string(c.layout);
    EXPECT_EQ(r.max_k_cols, cols) << to_string(c.layout);
  }
}

// What the collectives move, per device: Ulysses all-to-alls Q, K, V in and O
// out ((N-1)/N of each device's share); all-gather forwards N-1 K/V blocks and
// reduce-scatters N-1 dK/dV blocks.
TEST(Emulator, CollectiveVolumes) {
  const std::int64_t n = 4, c = 6;
  const int H = 8, Hk = 4, d = 2;
  auto w = small_workload(Layout::Ulysses, n, c, H, Hk, d, true);
  auto r = emulate<double>(w, random_inputs(w, 1, NpyDType::F64), true);
  const std::uint64_t share = static_cast<std::uint64_t>((n - 1) * c * d);
  for (auto x : r.fwd.collective_sent) EXPECT_EQ(x, share * (H + 2 * Hk + H) / n);
  for (auto x : r.bwd.collective_sent)
    EXPECT_EQ(x, share * (H + H + 2 * Hk) / n);  // dO in; dQ, dK, dV out
  w = small_workload(Layout::Allgather, n, c, H, Hk, d, true);
  r = emulate<double>(w, random_inputs(w, 1, NpyDType::F64), true);
  for (auto x : r.fwd.collective_sent)
    EXPECT_EQ(x, static_cast<std::uint64_t>((n - 1) * 2 * c * Hk * d));
  for (auto x : r.bwd.collective_sent)
    EXPECT_EQ(x, static_cast<std::uint64_t>((n - 1) * 2 * c * Hk * d));
}

void expect_input_error(const Workload& w, const std::string& flag) {
  try {
    check_emulation(w);
    ADD_FAILURE() << "accepted " << describe(w, false);
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(flag + ":", 0), 0u) << e.what();
  }
}

TEST(Emulator, LayoutConstraints) {
  expect_input_error(small_workload(Layout::Zigzag, 4, 5, 2, 2, 4, true), "--block");
  expect_input_error(small_workload(Layout::Allgather, 4, 3, 2, 2, 4, true), "--block");
  expect_input_error(small_workload(Layout::Ulysses, 4, 4, 8, 2, 4, true), "--devices");
  expect_input_error(small_workload(Layout::Ulysses, 3, 4, 4, 4, 4, true), "--devices");
  expect_input_error(small_workload(Layout::Hybrid, 4, 4, 4, 4, 4, true, 3), "--ulysses-degree");
  expect_input_error(small_workload(Layout::Hybrid, 4, 4, 4, 2, 4, true, 4), "--ulysses-degree");
  expect_input_error(small_workload(Layout::Hybrid, 2, 3, 1, 1, 4, true, 1), "--block");
  expect_input_error(small_workload(Layout::Ring, 4, 4, 6, 4, 4, true), "--kv-heads");
  EXPECT_NO_THROW(check_emulation(small_workload(Layout::Ulysses, 2, 3, 4, 2, 4, true)));
}

// The check can fail: the same run against a tolerance below fp32 rounding.
TEST(Emulator, TinyToleranceFails) {
  auto w = small_workload(Layout::Striped, 4, 4, 2, 1, 4, true);
  const auto in = random_inputs(w, 11, NpyDType::F32);
  auto rep = verify_run(w, in, false, false);
  EXPECT_TRUE(rep.passed());
  rep = verify_run(w, in, false, false, {}, 1e-6);  // a tolerance below fp32 rounding
  EXPECT_FALSE(rep.passed());
}

}  // namespace
}  // namespace ringsim::kernels
