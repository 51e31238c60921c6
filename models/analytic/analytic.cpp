#include "models/analytic/analytic.hpp"

#include <algorithm>
#include <map>

#include "models/analytic/memory.hpp"
#include "models/analytic/minblock.hpp"
#include "models/core/checked.hpp"
#include "models/core/profile.hpp"
#include "models/core/work.hpp"

namespace ringsim {

PassBytes pass_bytes(const Workload& w, bool backward) {
  const std::uint64_t b = dtype_bytes(w.dtype);
  const std::uint64_t c = w.block, d = w.shape.head_dim;
  const std::uint64_t H = w.shape.heads, kvh = w.shape.kv_heads;
  const auto kv = kv_block_elements(w);  // c * kvh * d
  PassBytes p;
  // Q, K, V of this device's c tokens, all heads (DeepSpeed-Ulysses sec. 3:
  // all-to-all on Q, K, V before attention and on the output after).
  const auto qkv = mul_checked(c * (H + 2 * kvh), d * b, "all-to-all bytes");
  const auto o = mul_checked(c * H, d * b, "all-to-all bytes");
  switch (w.layout) {
    case Layout::Ulysses:
      // Backward mirrors forward: dO in, dQ/dK/dV out.
      p.a2a_in = backward ? o : qkv;
      p.a2a_out = backward ? qkv : o;
      break;
    case Layout::Allgather:
      p.gather_block = mul_checked(2 * kv, b, "gather bytes");
      if (backward) p.scatter_block = mul_checked(2 * kv, 4, "reduce-scatter bytes");
      break;
    case Layout::Hybrid:
      p.a2a_in = backward ? o : qkv;
      p.a2a_out = backward ? qkv : o;
      [[fallthrough]];
    default:
      p.ring = mul_checked(2 * kv, b, "ring bytes");
      if (backward) {
        p.final_hop = mul_checked(2 * kv, 4, "ring bytes");
        p.ring += p.final_hop;
      }
  }
  return p;
}

namespace {

// Query block and full (unmasked) entries of one step as the kernel sees it.
struct StepShape {
  std::int64_t q_block;
  std::uint64_t full_entries;
};

StepShape step_shape(const Workload& w) {
  constexpr const char* kWhat = "--devices/--block: score entries of one step";
  const auto c = static_cast<std::uint64_t>(w.block);
  const auto S = static_cast<std::uint64_t>(w.seq_len());
  const auto H = static_cast<std::uint64_t>(w.shape.heads);
  switch (w.layout) {
    case Layout::Ulysses:
      return {w.seq_len(), mul_checked(mul_checked(S, S, kWhat), H / w.devices, kWhat)};
    case Layout::Allgather:
      return {w.block, mul_checked(mul_checked(c, S, kWhat), H, kWhat)};
    case Layout::Hybrid: {
      const auto u = static_cast<std::uint64_t>(w.ulysses());
      return {w.block * w.ulysses(), mul_checked(mul_checked(c * u, c * u, kWhat), H / u, kWhat)};
    }
    default:
      return {w.block, mul_checked(mul_checked(c, c, kWhat), H, kWhat)};
  }
}

}  // namespace

double step_seconds(const Workload& w, const ComputeModel& cm, std::int64_t device,
                    std::int64_t step, bool backward) {
  const auto e = step_entries(w, device, step);
  if (e == 0) return 0;
  const auto sh = step_shape(w);
  // Chunks cut by the diagonal run at the masked rate of a block their size
  // (zigzag's are half blocks: the kernel's work per entry grows as the
  // triangle shrinks), whole visible chunks (zigzag's other half blocks, the
  // ring's earlier blocks) at the full rate of the query block.
  const auto diag = step_diagonal_entries(w, device, step);
  const bool halves =
      w.layout == Layout::Zigzag || w.layout == Layout::Allgather || w.layout == Layout::Hybrid;
  auto chunk = halves ? std::max<std::int64_t>(1, sh.q_block / 2) : sh.q_block;
  // A profile has no points below its smallest block: a half block under it
  // takes the smallest block's rate (models/profiles/README.md).
  chunk = std::max(chunk, std::min(cm.min_block(), sh.q_block));
  return cm.seconds(e - diag, sh.q_block, w.shape.head_dim, backward, false) +
         cm.seconds(diag, chunk, w.shape.head_dim, backward, true);
}

double merge_step_seconds(const Workload& w, const ComputeModel& cm, std::int64_t device,
                          std::int64_t step, bool backward) {
  if (backward || step == 0 || step_entries(w, device, step) == 0) return 0;
  const auto sh = step_shape(w);
  // full_entries = q_block^2 x heads seen, so this is q_block x heads.
  const auto rows = sh.full_entries / static_cast<std::uint64_t>(sh.q_block);
  return cm.merge_seconds(rows, sh.q_block, w.shape.head_dim);
}

double alltoall_time(std::uint64_t bytes_per_device, std::int64_t group, double bw, double lat) {
  if (group <= 1) return 0;
  // Staged all-to-all: group-1 rounds, each device sends 1/group of its data
  // to one peer per round (DeepSpeed-Ulysses: M/P per link).
  const double chunk = static_cast<double>(bytes_per_device) / static_cast<double>(group);
  return static_cast<double>(group - 1) * (chunk / bw + lat);
}

double ring_collective_time(std::uint64_t block_bytes, std::int64_t group, double bw, double lat) {
  if (group <= 1) return 0;
  // Ring all-gather / reduce-scatter: group-1 steps of one block per link.
  return static_cast<double>(group - 1) * (static_cast<double>(block_bytes) / bw + lat);
}

double alltoall_bandwidth(const Hardware& hw, std::int64_t group) {
  // Inside one node every GPU injects at the NVLink rate; an all-to-all that
  // spans nodes is bound by the NIC.
  if (hw.platform == Platform::Nodes && !hw.bandwidth_override && group > hw.gpus_per_node)
    return std::min(hw.intra_bw, hw.inter_bw);
  return hw.ring_bandwidth(group);
}

double alltoall_latency(const Hardware& hw, std::int64_t group) {
  if (hw.platform == Platform::Nodes && !hw.bandwidth_override && group > hw.gpus_per_node)
    return std::max(hw.intra_lat, hw.inter_lat);
  return hw.ring_latency(group);
}

double other_layer_flops(const Workload& w, bool backward) {
  // Per device, c tokens: QKV projection 2*D*(H+2kvh)*d, output projection
  // 2*H*d*D, SwiGLU MLP 3 GEMMs 2*D*F each (per token). Backward = 2x forward
  // (weight and input gradients).
  const double c = static_cast<double>(w.block), D = w.shape.d_model, d = w.shape.head_dim;
  const double H = w.shape.heads, kvh = w.shape.kv_heads, F = w.shape.ffn;
  const double fwd = c * (2 * D * (H + 2 * kvh) * d + 2 * H * d * D + 3 * 2 * D * F);
  return backward ? 2 * fwd : fwd;
}

Summary analyze(const Workload& w, const Hardware& hw) {
  RooflineModel rm(hw.effective_flops());
  return analyze(w, hw, rm);
}

Summary analyze(const Workload& w, const Hardware& hw, const ComputeModel& cm) {
  Summary s;
  s.workload = w;
  s.hardware = hw.describe();
  s.compute_model = cm.name();
  s.overlap = hw.overlap;
  const double bw = hw.ring_bandwidth(w.devices), lat = hw.ring_latency(w.devices);
  const auto n = w.devices;
  const auto steps = num_steps(w);
  std::vector<bool> passes;
  if (w.pass != Pass::Bwd) passes.push_back(false);
  if (w.pass != Pass::Fwd) passes.push_back(true);

  double layer_time = 0, layer_compute_only = 0, layer_collective = 0, layer_ideal = 0;
  bool first = true;
  for (bool bwd : passes) {
    const auto bytes = pass_bytes(w, bwd);
    // step_entries takes few distinct values; cache their durations (the
    // merge also depends on whether the step is the first).
    std::map<std::pair<std::uint64_t, std::uint64_t>, double> cache[2];
    auto dev_step = [&](std::int64_t i, std::int64_t st) {
      const std::pair e{step_entries(w, i, st), step_diagonal_entries(w, i, st)};
      auto& c = cache[st > 0 ? 1 : 0];
      auto it = c.find(e);
      if (it != c.end()) return it->second;
      return c[e] = step_seconds(w, cm, i, st, bwd) + merge_step_seconds(w, cm, i, st, bwd);
    };
    double pass_time = 0, compute_only = 0, collective = 0, total_compute = 0;
    double max_step_compute = 0;
    bool hides = true;
    const double ring_comm = bytes.ring ? static_cast<double>(bytes.ring) / bw + lat : 0;
    for (std::int64_t st = 0; st < steps; ++st) {
      // At step st the devices of the first st ring positions work on a K/V
      // block from later in the sequence (kv_source wrapped around), the rest
      // on their own or an earlier one. shard_pairs depends only on that order
      // (work.cpp), so each group does equal work and one device stands for
      // it: O(steps), not O(devices x steps), which at 1M devices took hours.
      // tests/models/test_analytic_scale.cpp checks this against every device.
      const std::int64_t wrapped = st * (w.layout == Layout::Hybrid ? w.ulysses() : 1);
      double cmax = 0;
      if (wrapped > 0) {
        const double t = dev_step(0, st);
        cmax = t;
        total_compute += t * static_cast<double>(wrapped);
      }
      if (wrapped < n) {
        const double t = dev_step(n - 1, st);
        cmax = std::max(cmax, t);
        total_compute += t * static_cast<double>(n - wrapped);
      }
      // Double buffering: step st's transfer (of the block for step st+1)
      // overlaps its compute; the step ends when both are done. Without
      // overlap (--overlap none) the transfer follows the compute.
      const double comm = st + 1 < steps ? ring_comm : 0;
      if (st + 1 < steps && (cmax < comm || !hw.overlap)) hides = false;
      const double step = hw.overlap ? std::max(cmax, comm) : cmax + comm;
      if (first) s.steps.push_back({cmax, comm, step});
      pass_time += step;
      compute_only += cmax;
      max_step_compute = std::max(max_step_compute, cmax);
    }
    // A ring of one device has no hop home.
    if (bytes.final_hop && steps > 1) pass_time += static_cast<double>(bytes.final_hop) / bw + lat;
    if (bytes.a2a_in || bytes.a2a_out) {
      const auto g = w.ulysses();
      const double abw = alltoall_bandwidth(hw, g), alat = alltoall_latency(hw, g);
      collective +=
          alltoall_time(bytes.a2a_in, g, abw, alat) + alltoall_time(bytes.a2a_out, g, abw, alat);
    }
    if (bytes.gather_block) collective += ring_collective_time(bytes.gather_block, n, bw, lat);
    if (bytes.scatter_block) collective += ring_collective_time(bytes.scatter_block, n, bw, lat);
    pass_time += collective;
    if (first) {
      s.compute_s_per_step = max_step_compute;
      for (std::int64_t st = 1; st < steps && !bwd; ++st)
        s.merge_s_per_step =
            std::max(s.merge_s_per_step, merge_step_seconds(w, cm, n - 1, st, bwd));
      s.comm_s_per_step = bytes.ring ? ring_comm : collective;
      s.bytes_per_step =
          bytes.ring ? bytes.ring
                     : add_checked(bytes.a2a_in + bytes.a2a_out,
                                   mul_checked(bytes.gather_block,
                                               static_cast<std::uint64_t>(n - 1), "gather bytes"),
                                   "gather bytes");
      s.overlapped = bytes.ring ? hides : false;
    }
    layer_time += pass_time;
    layer_compute_only += compute_only;
    layer_collective += collective;
    layer_ideal += total_compute / static_cast<double>(n);
    first = false;
  }
  if (w.scope == Scope::Layer) {
    // Projections and MLP run at the same effective rate as the roofline
    // (catalog efficiency); a profile covers attention only.
    double other = 0;
    for (bool bwd : passes) other += other_layer_flops(w, bwd) / hw.effective_flops();
    s.other_s = other * w.layers;
    layer_time += other;
    layer_compute_only += other;
    layer_ideal += other;
  }
  s.time_s = layer_time * w.layers;
  s.compute_only_s = layer_compute_only * w.layers;
  s.collective_s = layer_collective * w.layers;
  s.ideal_time_s = layer_ideal * w.layers;
  s.exposed_comm_s = s.time_s - s.compute_only_s;
  s.efficiency = s.time_s > 0 ? s.ideal_time_s / s.time_s : 0;
  s.memory_bytes_per_device = attention_memory(w).total();
  // Without overlap no block hides the transfer: "n/a".
  s.min_block = hw.overlap ? min_block_for(w, hw, cm) : 0;
  return s;
}

}  // namespace ringsim
