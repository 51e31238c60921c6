#pragma once
// Small hand-made workloads and hardware for the closed-form tests.
#include "models/core/workload.hpp"

namespace ringsim::testing {

inline ModelShape llama3_heads() {
  ModelShape s;
  s.name = "llama3-8b";
  s.heads = 32;
  s.kv_heads = 8;
  s.head_dim = 128;
  return s;
}

inline Workload make_workload(std::int64_t n, std::int64_t c, Layout l, bool causal,
                              Pass p = Pass::Fwd) {
  Workload w;
  w.devices = n;
  w.block = c;
  w.layout = l;
  w.causal = causal;
  w.pass = p;
  w.shape = llama3_heads();
  if (l == Layout::Hybrid) w.ulysses_degree = 2;
  return w;
}

// Flat ring, every link the same: --flops F --efficiency 1 --bandwidth B --latency L.
inline Hardware flat(double flops, double bw, double lat = 0) {
  Hardware hw;
  hw.flops = flops;
  hw.efficiency = 1.0;
  hw.platform = Platform::Flat;
  hw.bandwidth_override = true;
  hw.intra_bw = hw.inter_bw = bw;
  hw.intra_lat = hw.inter_lat = lat;
  return hw;
}

// `s` with a small multi-head latent attention (DeepSeek-V2/V3's kind): 4
// heads, K and V expanded to each (4 KV heads); queries and keys of 12 (8 + a
// RoPE part of 4), values of 8 (head_dim 10, their mean); a query latent of
// 8, a KV latent of 24.
inline ModelShape with_small_mla(ModelShape s) {
  s.heads = s.kv_heads = 4;
  s.head_dim = 10;
  s.q_lora_rank = 8;
  s.kv_lora_rank = 24;
  s.qk_rope_head_dim = 4;
  s.qk_head_dim = 12;
  s.v_head_dim = 8;
  return s;
}

}  // namespace ringsim::testing
