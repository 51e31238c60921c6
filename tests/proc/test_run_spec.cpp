// A run spec crosses a process boundary as flags and must come back as the
// same spec: parse_run_args(to_args(spec)) == spec for every field, so a flag
// renamed on one side fails here, not in a child at run time.
#include <gtest/gtest.h>

#include "models/core/errors.hpp"
#include "proc/resolve.hpp"
#include "proc/run_spec.hpp"

namespace ringsim::proc {
namespace {

RunSpec every_field_set() {
  RunSpec s;
  auto& w = s.workload;
  w.devices = 48;
  w.block = 3000;
  w.layout = Layout::Hybrid;
  w.causal = false;
  w.pass = Pass::FwdBwd;
  w.dtype = DType::FP16;
  w.model = "llama3-70b";
  w.d_model = 1024;
  w.heads = 16;
  w.kv_heads = 4;
  w.head_dim = 64;
  w.ffn = 4096;
  w.mlp = "gelu";
  w.layers = 3;
  w.ulysses_degree = 4;
  w.scope = Scope::Layer;
  w.tp = 4;
  w.sequence_parallel = false;
  w.ep = 4;
  w.routing_seed = 0;
  w.documents = "uniform:1..9K";
  w.pack = Pack::Document;
  w.documents_seed = 42;  // --seed, shared with the jitter's (below)
  auto& h = s.hardware;
  h.gpu = "a100-80gb";
  h.cluster = "dgx-a100";
  h.intra = "nvlink3";
  h.inter = "ib-hdr";
  h.platform = Platform::Torus2D;
  h.gpus_per_node = 4;
  h.flops = 1.234567891234e15;
  h.efficiency = 0.3;
  h.bandwidth = 2.5e10;
  h.latency = 1.5e-6;
  h.nics_per_node = 4;
  h.nvlink_domain = 72;
  h.oversubscription = 2.5;
  h.catalog = "/tmp/c.json";
  h.profile = "/tmp/p.json";
  h.kernel = "fa3";
  auto& m = s.sim;
  m.engine = Engine::SimGrid;
  m.trace = "/tmp/t.json";
  m.csv = "/tmp/t.csv";
  m.network = sim::NetworkModel::LV08;
  m.inter_topology = sim::InterTopology::FatTree;
  m.inter_topology_given = true;
  m.torus_dims = {6, 8};
  m.faults.stragglers = {{3, 2.5}, {7, 1.25}};
  m.faults.degrades = {{"nic7", 4}, {"2-5", 0.5}};
  m.faults.jitter_sigma = 0.1;
  m.faults.seed = 42;
  m.symmetry = sim::Symmetry::Off;
  m.recurrence = sim::Recurrence::On;
  m.overlap = false;
  m.max_activities = 12345;
  m.max_memory = std::uint64_t{3} << 30;
  m.progress = true;
  s.json = true;
  return s;
}

TEST(RunSpec, EveryFieldSurvivesToArgsAndBack) {
  const auto s = every_field_set();
  const auto args = to_args(s);
  EXPECT_EQ(args.front(), "run");
  EXPECT_EQ(parse_run_args(args), s);
}

TEST(RunSpec, DefaultsLeaveOutWhatIsDefault) {
  const RunSpec s;
  const auto args = to_args(s);
  EXPECT_EQ(args, (std::vector<std::string>{"run", "--devices", "256", "--block", "4096",
                                            "--engine", "simgrid"}));
  EXPECT_EQ(parse_run_args(args), s);
}

TEST(RunSpec, EachFieldAloneRoundTrips) {
  // One field away from the default at a time: no flag may hide behind another.
  const auto full = every_field_set();
  std::vector<RunSpec> one(17);
  one[15].workload.ep = 8;
  one[16].workload.routing_seed = 7;
  one[13].workload.documents = "8K,2K,512";
  one[14].workload.pack = Pack::Document;
  one[0].workload.layout = Layout::Zigzag;
  one[1].workload.causal = false;
  one[2].hardware.bandwidth = 1e9;
  one[3].sim.overlap = false;
  one[4].sim.faults.jitter_sigma = 0.5;
  one[5].sim.engine = Engine::Analytic;
  one[6].workload.kv_heads = 2;
  one[7].hardware.platform = Platform::Flat;
  one[8].hardware.nics_per_node = 2;
  one[9].hardware.nvlink_domain = 16;
  one[10].hardware.oversubscription = 4;
  one[11].workload.tp = 2;
  one[12].workload.sequence_parallel = false;
  for (const auto& s : one) EXPECT_EQ(parse_run_args(to_args(s)), s);
  EXPECT_NE(parse_run_args(to_args(full)), RunSpec{});
}

TEST(RunSpec, BadFlagsNameTheFlag) {
  auto bad = [](std::vector<std::string> a) -> std::string {
    try {
      parse_run_args(a);
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(bad({"--devices", "0"}).find("--devices"), std::string::npos);
  EXPECT_NE(bad({"--layout", "spiral"}).find("--layout"), std::string::npos);
  EXPECT_NE(bad({"--overlap", "sometimes"}).find("--overlap"), std::string::npos);
  EXPECT_NE(bad({"--straggler", "9:2", "--devices", "4"}).find("--straggler"), std::string::npos);
  EXPECT_NE(bad({"--ulysses-degree", "2"}).find("--ulysses-degree"), std::string::npos);
  EXPECT_NE(bad({"--engine", "analytic", "--trace", "x.json"}).find("--trace"), std::string::npos);
  EXPECT_NE(bad({"--torus-dims", "8xx4"}).find("--torus-dims"), std::string::npos);
  EXPECT_NE(bad({"--no-such-flag"}).find("--no-such-flag"), std::string::npos);
  EXPECT_NE(bad({"--oversubscription", "0.5"}).find("--oversubscription"), std::string::npos);
  EXPECT_NE(bad({"--nics-per-node", "0"}).find("--nics-per-node"), std::string::npos);
  EXPECT_NE(bad({"--nvlink-domain", "x"}).find("--nvlink-domain"), std::string::npos);
  EXPECT_NE(bad({"--tp", "0"}).find("--tp"), std::string::npos);
  EXPECT_NE(bad({"--sequence-parallel", "maybe"}).find("--sequence-parallel"), std::string::npos);
}

TEST(RunSpec, TensorParallelFlagsRoundTrip) {
  // --tp and --sequence-parallel reach a child (a sweep point, the GUI's run)
  // as written: the flags, and back the same spec.
  RunSpec s;
  s.workload.scope = Scope::Layer;
  s.workload.tp = 8;
  s.workload.sequence_parallel = false;
  const auto args = to_args(s);
  auto has = [&](const std::string& flag, const std::string& value) {
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == flag && args[i + 1] == value) return true;
    return false;
  };
  EXPECT_TRUE(has("--tp", "8"));
  EXPECT_TRUE(has("--sequence-parallel", "off"));
  EXPECT_EQ(parse_run_args(args), s);
  // At their defaults (tp 1, sequence parallel on) neither is written.
  for (const auto& a : to_args(RunSpec{})) {
    EXPECT_NE(a, "--tp");
    EXPECT_NE(a, "--sequence-parallel");
  }
}

TEST(Resolve, TensorParallelReachesTheWorkload) {
  RunSpec s;
  s.workload.devices = 16;
  s.workload.model = "llama3-70b";
  s.workload.scope = Scope::Layer;
  s.workload.tp = 8;
  s.workload.sequence_parallel = false;
  const auto cat = load_catalog(s.hardware);
  const auto hw = resolve_hardware(s.hardware, cat, s.workload.dtype);
  const auto w = resolve_workload(s.workload, hw);
  EXPECT_EQ(w.tp, 8);
  EXPECT_FALSE(w.sequence_parallel);
  EXPECT_EQ(w.shape.heads, 64);  // the model's; each GPU runs 64 / 8
  EXPECT_EQ(tp_rank_workload(w).shape.heads, 8);
  EXPECT_EQ(tp_rank_workload(w).shape.kv_heads, 1);
  // 3 does not divide the node's 8 GPUs.
  s.workload.tp = 3;
  try {
    resolve_workload(s.workload, hw);
    ADD_FAILURE() << "--tp 3 accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--tp: must divide the GPUs per node (8), got 3");
  }
}

TEST(Resolve, SpecBecomesTheWorkloadAndHardware) {
  RunSpec s;
  s.workload.devices = 16;
  s.workload.block = 2048;
  s.workload.layout = Layout::Zigzag;
  s.workload.heads = 8;  // custom shape: KV heads follow down to the heads
  s.hardware.gpu = "a100-80gb";
  s.hardware.bandwidth = 1e10;
  const auto cat = load_catalog(s.hardware);
  const auto hw = resolve_hardware(s.hardware, cat, s.workload.dtype);
  EXPECT_EQ(hw.gpu_name, "a100-80gb");
  EXPECT_EQ(hw.platform, Platform::Flat);  // --bandwidth alone: a flat ring
  EXPECT_DOUBLE_EQ(hw.intra_bw, 1e10);
  const auto w = resolve_workload(s.workload, hw);
  EXPECT_EQ(w.shape.name, "custom");
  EXPECT_EQ(w.shape.heads, 8);
  EXPECT_EQ(w.shape.kv_heads, 8);
  EXPECT_EQ(w.seq_len(), 16 * 2048);
}

}  // namespace
}  // namespace ringsim::proc
