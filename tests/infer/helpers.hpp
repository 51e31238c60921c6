#pragma once
// Shared by the inference tests: a tiny model and a slow, flat cluster on
// which every phase of a step can be worked out by hand.
#include <memory>

#include "models/core/profile.hpp"
#include "models/infer/infer.hpp"
#include "models/kernel/implementation.hpp"

namespace ringsim::infer_testing {

// 1 layer, D 64, 4 query heads / 2 KV heads of dim 16, MLP 128, vocab 1000.
inline ModelShape tiny() {
  ModelShape s;
  s.name = "tiny";
  s.layers = 1;
  s.d_model = 64;
  s.heads = 4;
  s.kv_heads = 2;
  s.head_dim = 16;
  s.ffn = 128;
  s.vocab = 1000;
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
