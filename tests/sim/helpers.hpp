#pragma once
// Workloads, hardware and a one-simulation-per-process runner for the SimGrid
// model's tests. ctest runs every discovered test in its own process, which
// SimGrid needs (one engine per process); run by hand, use --gtest_filter.
#include <gtest/gtest.h>

#include <memory>

#include "models/core/catalog.hpp"
#include "models/core/profile.hpp"
#include "models/core/workload.hpp"
#include "sim/simulate.hpp"

namespace ringsim::testing {

inline Workload llama3(std::int64_t n, std::int64_t c, Layout l, bool causal, Pass p = Pass::Fwd) {
  Workload w;
  w.devices = n;
  w.block = c;
  w.layout = l;
  w.causal = causal;
  w.pass = p;
  w.shape = find_model("--model", "llama3-8b");
  if (l == Layout::Hybrid) w.ulysses_degree = 2;
  return w;
}

// --flops F --efficiency 1 --bandwidth B --latency L: a flat ring of equal links.
inline Hardware flat_hw(double flops, double bw, double lat) {
  Hardware hw;
  hw.flops = flops;
  hw.efficiency = 1.0;
  hw.platform = Platform::Flat;
  hw.bandwidth_override = true;
  hw.intra_bw = hw.inter_bw = bw;
  hw.intra_lat = hw.inter_lat = lat;
  return hw;
}

// A catalog device on its default cluster shape (nodes of 8 for H100).
inline Hardware catalog_hw(const std::string& gpu, Platform platform) {
  const auto cat = Catalog::embedded();
  const auto& d = cat.device(gpu);
  const auto& a = cat.interconnect(d.default_intra);
  const auto& b = cat.interconnect(d.default_inter);
  Hardware hw;
  hw.gpu_name = d.name;
  hw.flops = d.peak(DType::BF16);
  hw.efficiency = d.attention_efficiency;
  hw.platform = platform;
  hw.gpus_per_node = d.default_gpus_per_node;
  hw.intra_name = a.name;
  hw.inter_name = b.name;
  hw.intra_bw = a.bandwidth;
  hw.intra_lat = a.latency;
  hw.inter_bw = b.bandwidth;
  hw.inter_lat = b.latency;
  return hw;
}

struct SimRun {
  sim::SimOptions options;
  std::unique_ptr<ComputeModel> compute;
  // A test may set an implementation (kernel costs); else `compute` bare.
  std::shared_ptr<const Implementation> implementation;
  sim::SimResult result;
};

inline sim::SimOptions sim_options(const Workload& w, const Hardware& hw) {
  sim::SimOptions o;
  o.workload = w;
  o.hardware = hw;
  o.topology = sim::topology_options(hw, w);  // with --tp: the ring of TP groups
  return o;
}

// Simulates, or returns false (the caller skips) if this process already ran
// a simulation.
inline bool simulate_once(SimRun& run) {
  if (!sim::simulation_available()) return false;
  if (!run.compute)  // a test may set a ProfileModel instead
    run.compute = std::make_unique<RooflineModel>(run.options.hardware.effective_flops());
  if (!run.implementation)
    run.implementation = std::make_shared<Implementation>(bare_implementation(*run.compute));
  run.options.compute = run.implementation.get();
  run.result = sim::simulate(run.options);
  return true;
}

#define RINGSIM_SIMULATE(run)                                                       \
  do {                                                                              \
    if (!::ringsim::testing::simulate_once(run))                                    \
      GTEST_SKIP() << "SimGrid allows one engine per process: run this test alone " \
                      "(ctest does; by hand, use --gtest_filter)";                  \
  } while (0)

}  // namespace ringsim::testing
