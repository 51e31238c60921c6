#pragma once
// Shared by the inference tests: a tiny model and a slow, flat cluster on
// which every phase of a step can be worked out by hand.
#include <memory>

#include "models/core/profile.hpp"
#include "models/infer/infer.hpp"
#include "models/kernel/implementation.hpp"
#include "tests/plan/helpers.hpp"

namespace ringsim::infer_testing {

// plan_testing's tiny shape with one layer: D 64, 4 query / 2 KV heads of
// dim 16, MLP 128, vocab 1000.
inline ModelShape tiny() {
  auto s = plan_testing::tiny_shape();
  s.layers = 1;
  return s;
}
// 1 MFLOP/s devices (attention and GEMMs), 1 GB/s HBM, a flat ring of
// 100 kB/s links without latency: milliseconds per phase.
inline Hardware slow_flat(double bandwidth = 1e5, double latency = 0) {
  Hardware hw;
  hw.gpu_name = "test";
  hw.flops = 1e6;
  hw.efficiency = 1;
  hw.gemm_efficiency = 1;
  hw.hbm_bandwidth = 1e9;
  hw.hbm_bytes = 1e12;
  hw.platform = Platform::Flat;
  hw.gpus_per_node = 1;
  hw.intra_bw = hw.inter_bw = bandwidth;
  hw.intra_lat = hw.inter_lat = latency;
  return hw;
}

struct Roofline {
  RooflineModel rates{1e6};
  Implementation im = bare_implementation(rates);
};

inline InferRequest tiny_request(std::int64_t cp, std::int64_t context, std::int64_t cached,
                                 Layout layout = Layout::Ring) {
  InferRequest r;
  r.shape = tiny();
  r.context = context;
  r.cached = cached;
  r.gpus = cp;
  r.tp = 1;
  r.cp = cp;
  r.layout = layout;
  return r;
}

}  // namespace ringsim::infer_testing
