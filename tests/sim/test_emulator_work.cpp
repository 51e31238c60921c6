// The simulator computes what the kernels compute: per device and step, the
// score entries of its `partial` events equal those the ring emulator's
// kernels counted (kernels/emulator.hpp), and it sends a block after exactly
// the steps where the emulator sent one. One simulation per case.
#include <gtest/gtest.h>

#include <map>

#include "kernels/emulator.hpp"
#include "kernels/inputs.hpp"
#include "models/core/work.hpp"
#include "tests/sim/helpers.hpp"

namespace ringsim {
namespace {

struct Case {
  Layout layout;
  bool backward;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << to_string(c.layout) << (c.backward ? " bwd" : " fwd");
}

class EmulatorWork : public ::testing::TestWithParam<Case> {};

TEST_P(EmulatorWork, PartialEntriesAndSendsMatchTheKernels) {
  const auto [layout, backward] = GetParam();
  // Tiny but every layout legal: 4 devices, block 8, 8 heads, 4 KV heads.
  Workload w;
  w.devices = 4;
  w.block = 8;
  w.layout = layout;
  w.causal = true;
  w.pass = backward ? Pass::Bwd : Pass::Fwd;
  w.shape.name = "tiny";
  w.shape.heads = 8;
  w.shape.kv_heads = 4;
  w.shape.head_dim = 4;
  if (layout == Layout::Hybrid) w.ulysses_degree = 2;

  const auto in = kernels::random_inputs(w, 1, NpyDType::F64);
  const auto emu = kernels::emulate<double>(w, in, backward);
  const auto& pass = backward ? emu.bwd : emu.fwd;

  testing::SimRun run;
  run.options = testing::sim_options(w, testing::flat_hw(1e12, 1e11, 1e-6));
  run.options.record_events = true;
  RINGSIM_SIMULATE(run);

  for (std::int64_t d = 0; d < w.devices; ++d) {
    std::map<std::int32_t, std::uint64_t> partial;
    std::map<std::int32_t, int> sends;
    for (const auto& e : run.result.events[static_cast<std::size_t>(d)]) {
      if (e.phase == sim::Phase::Partial) partial[e.step] += e.entries;
      if (e.phase == sim::Phase::Send && e.step >= 0) ++sends[e.step];
    }
    const auto& steps = pass.steps[static_cast<std::size_t>(d)];
    ASSERT_EQ(static_cast<std::int64_t>(steps.size()), num_steps(w));
    for (std::size_t s = 0; s < steps.size(); ++s) {
      const auto step = static_cast<std::int32_t>(s);
      EXPECT_EQ(partial.count(step) ? partial[step] : 0, steps[s].entries)
          << "device " << d << " step " << s;
      EXPECT_EQ(sends.count(step) ? sends[step] : 0, steps[s].sent > 0 ? 1 : 0)
          << "device " << d << " step " << s;
      if (steps[s].kv_source >= 0) {
        for (const auto& e : run.result.events[static_cast<std::size_t>(d)]) {
          if (e.phase != sim::Phase::Partial || e.step != step) continue;
          EXPECT_EQ(e.kv_block, steps[s].kv_source);
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, EmulatorWork,
    ::testing::Values(Case{Layout::Ring, false}, Case{Layout::Ring, true},
                      Case{Layout::Striped, false}, Case{Layout::Striped, true},
                      Case{Layout::Zigzag, false}, Case{Layout::Zigzag, true},
                      Case{Layout::Ulysses, false}, Case{Layout::Ulysses, true},
                      Case{Layout::Allgather, false}, Case{Layout::Allgather, true},
                      Case{Layout::Hybrid, false}, Case{Layout::Hybrid, true}),
    [](const auto& info) {
      return to_string(info.param.layout) + (info.param.backward ? "_bwd" : "_fwd");
    });

}  // namespace
}  // namespace ringsim
