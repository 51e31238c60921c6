#include "models/analytic/analytic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "models/analytic/memory.hpp"
#include "models/analytic/minblock.hpp"
#include "models/analytic/moe.hpp"
#include "models/analytic/tp_collectives.hpp"
#include "models/analytic/xla_collectives.hpp"
#include "models/core/calls.hpp"
#include "models/core/cancel.hpp"
#include "models/core/checked.hpp"
#include "models/core/documents.hpp"
#include "models/core/profile.hpp"
#include "models/core/work.hpp"
#include "models/kernel/chunk_scan.hpp"
#include "models/kernel/gemm.hpp"
#include "models/kernel/implementation.hpp"

namespace ringsim {

PassBytes pass_bytes(const Workload& w, bool backward, int grad_bytes, int k_bytes,
                     bool permute_per_layer) {
  const std::uint64_t b = dtype_bytes(w.dtype);
  // K and V of one element: both in the dtype, or K as the implementation sends it.
  const std::uint64_t kv_pair = b + (k_bytes > 0 ? static_cast<std::uint64_t>(k_bytes) : b);
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
      p.gather_block = mul_checked(kv, kv_pair, "gather bytes");
      if (backward)
        p.scatter_block =
            mul_checked(2 * kv, static_cast<std::uint64_t>(grad_bytes), "reduce-scatter bytes");
      break;
    case Layout::Hybrid:
      p.a2a_in = backward ? o : qkv;
      p.a2a_out = backward ? qkv : o;
      [[fallthrough]];
    case Layout::Striped:
    case Layout::Zigzag:
      if (permute_per_layer && w.devices > 1) {
        p.a2a_in = backward ? o : qkv;
        p.a2a_out = backward ? qkv : o;
      }
      [[fallthrough]];
    default:
      p.ring = mul_checked(kv, kv_pair, "ring bytes");
      if (backward) {
        p.final_hop = mul_checked(2 * kv, static_cast<std::uint64_t>(grad_bytes), "ring bytes");
        p.ring += p.final_hop;
      }
  }
  return p;
}

namespace {
// The workload with the K/V as the implementation passes them (grouped or
// expanded): the one rule every command's bytes come from (KernelSpec ring_kv).
Workload as_passed(const Workload& w, const Implementation& im) {
  auto x = w;
  x.shape.kv_heads = im.ring_kv_heads(w);
  return x;
}
}  // namespace

PassBytes pass_bytes(const Workload& w, bool backward, const Implementation& im) {
  return pass_bytes(as_passed(w, im), backward, im.grad_bytes(), im.k_bytes(),
                    im.permutes_per_layer());
}

PassBytes pass_bytes(const Workload& w, bool backward, const Implementation& im,
                     const Hardware& hw) {
  auto b = pass_bytes(w, backward, im);
  // XLA: JAX transposes the all-gather of the dtype's K/V into a
  // reduce-scatter of their cotangents in the same dtype (jax.lax.all_gather's
  // transpose is psum_scatter), whatever the kernel accumulates in.
  if (hw.xla_collectives && b.scatter_block)
    b.scatter_block = mul_checked(2 * kv_block_elements(as_passed(w, im)), dtype_bytes(w.dtype),
                                  "reduce-scatter bytes");
  return b;
}

std::int64_t alltoall_group(const Workload& w) {
  return w.layout == Layout::Ulysses || w.layout == Layout::Hybrid ? w.ulysses() : w.devices;
}

namespace {
Implementation bare(const ComputeModel& cm) {
  return bare_implementation(cm);
}
}  // namespace

double step_seconds(const Workload& w, const ComputeModel& cm, std::int64_t device,
                    std::int64_t step, bool backward) {
  return bare(cm).step(w, device, step, backward, false).attention_s;
}

double merge_step_seconds(const Workload& w, const ComputeModel& cm, std::int64_t device,
                          std::int64_t step, bool backward) {
  if (backward) return 0;  // a bare model's only merge is a profile's forward one
  return bare(cm).step(w, device, step, backward, false).merge_s;
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
  // Inside one node every GPU injects at the NVLink rate; an all-to-all that is bound by the NIC.
  // spans NVLink domains is bound by the NIC, shared by the GPUs behind it.
  if (hw.platform == Platform::Nodes && !hw.bandwidth_override && group > hw.nvlink_group())
    return std::min(hw.intra_bw, hw.inter_bw / hw.gpus_per_nic());
  return hw.ring_bandwidth(group);
}

double alltoall_latency(const Hardware& hw, std::int64_t group) {
  if (hw.platform == Platform::Nodes && !hw.bandwidth_override && group > hw.nvlink_group())
    return std::max(hw.intra_lat, hw.inter_lat);
  return hw.ring_latency(group);
}

double pass_collective_seconds(const Workload& w, const Hardware& hw, const PassBytes& b) {
  double t = 0;
  if (hw.xla_collectives) {
    if (b.a2a_in || b.a2a_out) {
      const auto x = xla_ici(hw, alltoall_group(w));
      t += xla_all_to_all_seconds(b.a2a_in, x) + xla_all_to_all_seconds(b.a2a_out, x);
    }
    const auto x = xla_ici(hw, w.devices);
    return t + xla_all_gather_seconds(b.gather_block, x) +
           xla_all_gather_seconds(b.scatter_block, x);
  }
  if (b.a2a_in || b.a2a_out) {
    const auto g = alltoall_group(w);
    const double abw = alltoall_bandwidth(hw, g), alat = alltoall_latency(hw, g);
    t += alltoall_time(b.a2a_in, g, abw, alat) + alltoall_time(b.a2a_out, g, abw, alat);
  }
  const double bw = hw.ring_bandwidth(w.devices), lat = hw.ring_latency(w.devices);
  if (b.gather_block) t += ring_collective_time(b.gather_block, w.devices, bw, lat);
  if (b.scatter_block) t += ring_collective_time(b.scatter_block, w.devices, bw, lat);
  return t;
}

std::uint64_t attention_params(const ModelShape& s) {
  const std::uint64_t D = s.d_model, d = s.head_dim, H = s.heads, kvh = s.kv_heads;
  if (!is_mla(s)) return D * d * (H + 2 * kvh) + H * d * D;  // Wq, Wk, Wv, Wo
  // MLA: Q down (D x q_lora) with its norm and up (q_lora x H qk), or Q
  // straight from D; the KV latent and RoPE key (D x (kv_lora + rope)) with
  // the latent's norm; K (no RoPE part) and V up from the latent; Wo.
  const std::uint64_t ql = s.q_lora_rank, kl = s.kv_lora_rank, rope = s.qk_rope_head_dim;
  const std::uint64_t qk = s.qk_head_dim, v = s.v_head_dim;
  const std::uint64_t q = ql > 0 ? D * ql + ql + ql * H * qk : D * H * qk;
  return q + D * (kl + rope) + kl + kl * H * (qk - rope + v) + H * v * D;
}

std::uint64_t all_layer_params(const ModelShape& s) {
  const std::uint64_t D = s.d_model, L = s.layers;
  // The MLP's D x F matrices (3 gated: W1, W3, W2; 2 plain: up, down), two
  // norm gains.
  const std::uint64_t mlp = static_cast<std::uint64_t>(mlp_matrices(s));
  const std::uint64_t common = L * (attention_params(s) + 2 * D);
  if (!is_moe(s)) return common + L * mlp * D * static_cast<std::uint64_t>(s.ffn);
  // A MoE layer: every expert's matrices (routed and shared) and the router;
  // the dense layers their own MLP.
  const std::uint64_t width = static_cast<std::uint64_t>(s.experts + s.shared_experts) *
                              static_cast<std::uint64_t>(s.expert_ffn);
  const std::uint64_t moe = mlp * D * width + D * static_cast<std::uint64_t>(s.experts);
  const std::uint64_t dense = mlp * D * static_cast<std::uint64_t>(s.dense_ffn);
  return common + static_cast<std::uint64_t>(moe_layers(s)) * moe +
         static_cast<std::uint64_t>(s.dense_layers) * dense;
}

std::uint64_t layer_params(const ModelShape& s) {
  return all_layer_params(s) / static_cast<std::uint64_t>(s.layers);
}

double attention_projection_flops(const ModelShape& s, double heads) {
  const double D = s.d_model;
  if (is_mla(s)) {
    // Multi-head latent attention (models/analytic/moe.hpp add_mla_gemms):
    // the down projections whole on every TP rank, the up and output
    // projections split by heads.
    const double ql = s.q_lora_rank, kl = s.kv_lora_rank, rope = s.qk_rope_head_dim;
    const double qk = s.qk_head_dim, v = s.v_head_dim;
    const double q = ql > 0 ? D * ql + ql * heads * qk : D * heads * qk;
    return 2 * (q + D * (kl + rope) + kl * heads * (qk - rope + v) + heads * v * D);
  }
  const double kvh = s.kv_heads * heads / s.heads, d = s.head_dim;
  return 2 * D * (heads + 2 * kvh) * d + 2 * heads * d * D;
}

double other_layer_flops(const Workload& w, bool backward) {
  // Per device, c tokens: the attention projections (QKV 2*D*(H+2kvh)*d and
  // output 2*H*d*D; MLA's own), the MLP's GEMMs 2*D*F each (3 gated, 2
  // plain). Backward = 2x forward (weight and input gradients).
  const double c = static_cast<double>(w.block), D = w.shape.d_model, F = w.shape.ffn;
  // A MoE model's MLP is its experts, charged apart (layer_moe).
  const double mlp = is_moe(w.shape) ? 0 : mlp_matrices(w.shape);
  const double fwd = c * (attention_projection_flops(w.shape, w.shape.heads) + mlp * 2 * D * F);
  return backward ? 2 * fwd : fwd;
}

double other_layer_seconds(const Workload& w, const Hardware& hw, bool backward) {
  // The shape already holds one device's heads and MLP width (TP applied):
  // tp 1 here. Q/K/V and gate/up fused, as Megatron-Core runs them.
  const auto& s = w.shape;
  std::vector<GemmShape> fwd;
  add_attention_gemms(fwd, s, w.block, 1, true);
  if (!is_moe(s)) add_mlp_gemms(fwd, s, w.block, s.ffn, true);
  return linears_seconds(fwd, bf16_gemm_rates(hw), backward);
}

namespace {
// Seconds of one pass over `bytes_per_token` of this device's tokens at the
// achievable HBM rate (the backward moves twice the forward's bytes); none
// on a platform given without an HBM rate (the engines' hand-built cases).
double hbm_pass_seconds(const Workload& w, const Hardware& hw, double bytes_per_token,
                        bool backward) {
  if (!(hw.hbm_achievable() > 0)) return 0;
  const double fwd = static_cast<double>(w.block) * bytes_per_token / hw.hbm_achievable();
  return backward ? 2 * fwd : fwd;
}
}  // namespace

double residual_stream_seconds(const Workload& w, const Hardware& hw, bool backward) {
  return hbm_pass_seconds(
      w, hw, residual_stream_bytes_per_token(w.shape) / std::max(1, w.residual_shard), backward);
}

double layer_pointwise_seconds(const Workload& w, const Hardware& hw, bool backward) {
  const double rest = pointwise_bytes_per_token(w.shape) - residual_stream_bytes_per_token(w.shape);
  return hbm_pass_seconds(w, hw, rest, backward) + residual_stream_seconds(w, hw, backward);
}

double efficiency_vs_one_device(double single_s, double gpus, double time_s) {
  if (!(time_s > 0)) return 0;
  const double e = single_s / (gpus * time_s);
  return e > 1 && e - 1 <= 1e-9 ? 1.0 : e;
}

void settle_efficiency(Summary& s) {
  if (s.time_s < s.ideal_time_s && s.ideal_time_s - s.time_s <= 1e-9 * s.ideal_time_s)
    s.ideal_time_s = s.time_s;
  s.efficiency = s.time_s > 0 ? s.ideal_time_s / s.time_s : 0;
}

Summary analyze(const Workload& w, const Hardware& hw) {
  RooflineModel rm(hw.effective_flops());
  return analyze(w, hw, rm);
}

Summary analyze(const Workload& w, const Hardware& hw, const ComputeModel& cm) {
  return analyze(w, hw, bare(cm));
}

namespace {

// At step st the devices of the first `wrapped` ring positions work on a K/V
// block from later in the sequence (kv_source wrapped around), the rest on
// their own or an earlier one. The calls depend only on that order
// (models/core/calls.cpp), so each group does equal work and one device
// stands for it: O(steps), not O(devices x steps), which at 1M devices took
// hours. tests/models/test_analytic_scale.cpp checks this against every device.
struct Group {
  std::int64_t device, count;
};
std::vector<Group> step_groups(const Workload& w, std::int64_t st) {
  const auto n = w.devices;
  if (!w.documents.empty()) {
    // Packed documents: each device's calls depend on where they fall.
    std::vector<Group> each;
    for (std::int64_t d = 0; d < n; ++d) each.push_back({d, 1});
    return each;
  }
  const std::int64_t wrapped = std::min(n, st * (w.layout == Layout::Hybrid ? w.ulysses() : 1));
  std::vector<Group> g;
  if (wrapped > 0) g.push_back({0, wrapped});
  if (wrapped < n) g.push_back({n - 1, n - wrapped});
  return g;
}

bool step_sends(const Workload& w, const PassBytes& b, std::int64_t st) {
  return b.ring > 0 && st + 1 < num_steps(w);
}

// Per-flow bandwidth of the ring's slowest hop; hybrid's ring of groups sends
// `ulysses` flows across each group boundary at once (they share NICs).
double ring_bw(const Workload& w, const Hardware& hw) {
  // XLA on a TPU: the ring's collective-permute crosses one ICI link.
  if (hw.xla_collectives) return hw.ici_link_bw;
  return hw.ring_bandwidth(w.devices, w.layout == Layout::Hybrid ? w.ulysses() : 1);
}

// The transfer of one ring step: the slowest hop's bandwidth and latency.
double ring_comm_seconds(const Workload& w, const Hardware& hw, const PassBytes& b) {
  return ring_step_seconds(w, hw, b.ring);
}

}  // namespace

double ring_step_seconds(const Workload& w, const Hardware& hw, std::uint64_t bytes) {
  if (!bytes) return 0;
  return static_cast<double>(bytes) / ring_bw(w, hw) + hw.ring_latency(w.devices);
}

namespace {

Interference ring_interference(const Workload& w, const Hardware& hw, const Implementation& im) {
  return im.interference(hw.ring_link_kind(w.devices), ring_bw(w, hw));
}

}  // namespace

StepSlot step_slot(const Workload& w, const Hardware& hw, const Implementation& im, bool backward,
                   std::int64_t st) {
  const auto bytes = pass_bytes(w, backward, im, hw);
  StepSlot slot;
  slot.sends = step_sends(w, bytes, st);
  slot.comm_s = slot.sends ? ring_comm_seconds(w, hw, bytes) : 0;
  const auto f = ring_interference(w, hw, im);
  for (const auto& g : step_groups(w, st)) {
    auto c = im.step(w, g.device, st, backward, slot.sends);
    slot.free_s = std::max(slot.free_s, c.total());
    const double window = hw.overlap ? slot.comm_s : 0;
    slot.slowed_s = std::max(slot.slowed_s, overlap_phases(c, f, window));
    c.launch_s = 0;
    slot.work_slowed_s = std::max(slot.work_slowed_s, overlap_phases(c, f, window));
  }
  return slot;
}

namespace {
std::optional<PermutationInfo> permutation_info(const Workload& w, const Hardware& hw,
                                                const Implementation& im) {
  if (w.layout != Layout::Striped && w.layout != Layout::Zigzag) return std::nullopt;
  PermutationInfo p;
  p.where = im.permutation();
  if (!im.permutes_per_layer()) {
    p.bytes = mul_checked(static_cast<std::uint64_t>(w.block), 8, "permutation bytes");
    return p;
  }
  p.charged = true;
  for (const bool bwd : {false, true}) {
    if ((bwd && w.pass == Pass::Fwd) || (!bwd && w.pass == Pass::Bwd)) continue;
    auto b = pass_bytes(w, bwd, im, hw);
    p.bytes = add_checked(p.bytes, add_checked(b.a2a_in, b.a2a_out, "permutation bytes"),
                          "permutation bytes");
    b.gather_block = b.scatter_block = 0;  // only the all-to-alls
    p.seconds += pass_collective_seconds(w, hw, b);
  }
  return p;
}

Summary analyze_cp(const Workload& w, const Hardware& hw, const Implementation& im,
                   bool with_min_block = true);
}  // namespace

std::string hardware_text(const Hardware& hw, const Implementation& im) {
  // The device whose rates run: a measured profile's own device (its peak
  // in the catalog is another device's), else the catalog's.
  std::string device;
  if (const auto* pm = dynamic_cast<const ProfileModel*>(&im.rates()))
    device = fmt::format("{} (measured profile)", pm->profile().device_name);
  else
    device = fmt::format("{} ({})", hw.gpu_name, hw.peak_text());
  auto link = [](const std::string& name, double bw) {
    return fmt::format("{} ({:.1f} GB/s/dir)", name.empty() ? "link" : name, bw / 1e9);
  };
  if (hw.bandwidth_override)
    return fmt::format("{}, ring links {:.1f} GB/s/dir", device, hw.intra_bw / 1e9);
  if (hw.platform == Platform::Nodes)
    return fmt::format("{}, {} per node on {}, nodes on {}", device, hw.gpus_per_node,
                       link(hw.intra_name, hw.intra_bw), link(hw.inter_name, hw.inter_bw));
  const bool mesh = !hw.torus_wraparound &&
                    (hw.platform == Platform::Torus2D || hw.platform == Platform::Torus3D);
  return fmt::format("{}, {} platform{} on {}", device, to_string(hw.platform),
                     mesh ? " without wrap-around (a mesh)" : "",
                     link(hw.platform == Platform::FatTree ? hw.inter_name : hw.intra_name,
                          hw.platform == Platform::FatTree ? hw.inter_bw : hw.intra_bw));
}

std::string collective_name(const Workload& w) {
  switch (w.layout) {
    case Layout::Ulysses:
    case Layout::Hybrid:
      return "Ulysses all-to-alls";
    case Layout::Allgather:
      return w.pass == Pass::Fwd ? "K/V all-gather" : "K/V all-gather and dK/dV reduce-scatter";
    default:
      return "collectives";
  }
}

void decide(Summary& s) {
  auto& in = s.verdict_inputs;
  in.time_s = s.time_s;
  in.compute_only_s = s.compute_only_s;
  in.ideal_s = s.ideal_time_s;
  s.verdict = make_verdict(in);
  s.exposed_comm_s = s.verdict.exposed_comm_s;
  s.overlapped = s.verdict.hidden;
}

namespace {

// A MoE layer's dispatch and combine, every pass and layer (0 without EP).
double ep_seconds(const Workload& w, const LayerMoe& moe) {
  double x = 0;
  if (w.pass != Pass::Bwd) x += moe.comm_s[0];
  if (w.pass != Pass::Fwd) x += moe.comm_s[1];
  return x * w.layers;
}

// The dispatch and combine, exposed (Megatron-Core's default schedule
// overlaps neither with compute): in the time, as the TP collectives are.
void add_ep_alltoalls(Summary& s, const Workload& w, const Hardware& hw) {
  const auto moe = layer_moe(w, hw);
  s.ep_comm_s = ep_seconds(w, moe);
  s.ep_alltoall_bytes = moe.a2a_bytes;
  if (s.ep_comm_s <= 0) return;
  s.time_s += s.ep_comm_s;
  s.exposed_comm_s += s.ep_comm_s;
  s.verdict_inputs.ep_s = s.ep_comm_s;
  s.verdict_inputs.device_time_s += s.ep_comm_s;
  s.verdict_inputs.time_s = s.time_s;
}

}  // namespace

double analyze_time(const Workload& w, const Hardware& hw, const Implementation& im) {
  const double ep = ep_seconds(w, layer_moe(w, hw));
  if (w.tp <= 1) return analyze_cp(w, hw, im, false).time_s + ep;
  const double passes = w.pass == Pass::FwdBwd ? 2 : 1;
  return analyze_cp(tp_rank_workload(w), group_hardware(hw, w.tp), im, false).time_s +
         passes * tp_pass_seconds(w, hw) * w.layers + ep;
}

Summary analyze(const Workload& w, const Hardware& hw, const Implementation& im) {
  if (w.tp <= 1) {
    auto s = analyze_cp(w, hw, im);
    add_ep_alltoalls(s, w, hw);
    settle_efficiency(s);
    s.efficiency_vs_single_device =
        efficiency_vs_one_device(s.single_device_time_s, static_cast<double>(w.devices), s.time_s);
    decide(s);
    return s;
  }
  // Tensor parallelism: every GPU of a TP group runs its share of the heads
  // and MLP on the CP ring of groups (tp_rank_workload, group_hardware), then
  // the group's collectives, exposed (docs/models.md, "Tensor parallelism").
  const auto rank = tp_rank_workload(w);
  const auto g = group_hardware(hw, w.tp);
  auto s = analyze_cp(rank, g, im);
  s.workload = w;
  const double passes = w.pass == Pass::FwdBwd ? 2 : 1;
  s.tp_comm_s = passes * tp_pass_seconds(w, hw) * w.layers;
  s.time_s += s.tp_comm_s;
  s.exposed_comm_s += s.tp_comm_s;
  s.verdict_inputs.tp_s = s.tp_comm_s;
  s.verdict_inputs.device_time_s += s.tp_comm_s;
  s.verdict_inputs.block = w.block;
  add_ep_alltoalls(s, w, hw);
  settle_efficiency(s);
  decide(s);
  // FLOPs and the one-device baseline count every GPU of a group: tp x one GPU's.
  const double t = w.tp;
  s.useful_flops *= t;
  s.executed_flops *= t;
  s.single_device_time_s *= t;
  if (w.scope == Scope::Layer && !w.sequence_parallel) {
    // Every GPU of a group without sequence parallelism ran the residual
    // stream's ops whole; one device running the layer runs them once.
    double once = 0;
    for (bool bwd : passes_of(w)) once += residual_stream_seconds(rank, g, bwd);
    s.single_device_time_s -= (t - 1) * once * static_cast<double>(w.devices * w.layers);
  }
  s.efficiency_vs_single_device = efficiency_vs_one_device(
      s.single_device_time_s, static_cast<double>(w.devices) * t, s.time_s);
  return s;
}

namespace {

std::optional<ChunkScanInfo> chunk_scan_info(const Workload& w, const Implementation& im) {
  const auto* cs = im.chunk_scan();
  if (!cs) return std::nullopt;
  ChunkScanInfo i;
  i.query_chunk = cs->query_chunk();
  i.key_chunk = cs->key_chunk();
  i.precision = cs->target().precision;
  i.matmul_flops = cs->matmul_flops();
  i.chunk_iteration_s = cs->target().chunk_iteration_s;
  i.query_iteration_s = cs->target().query_iteration_s;
  i.step_s = cs->target().step_s;
  // Every step scans the same grid (device 0, step 0 stands for all).
  i.loop_s_per_step = im.step(w, 0, 0, false, false).loop_s;
  const auto [nq, nk] = im.scan_grid(w);
  i.chunk_iterations_per_step = nq * nk;
  i.k_bytes = im.k_bytes() > 0 ? im.k_bytes() : static_cast<int>(dtype_bytes(w.dtype));
  i.grad_bytes = im.grad_bytes();
  return i;
}

Summary analyze_cp(const Workload& w, const Hardware& hw, const Implementation& im,
                   bool with_min_block) {
  check_documents_size(w);                       // refused before anything is built
  const DocumentCallsScope documents_pinned(w);  // w is const here: its documents hold still
  // A closed form's own fixed work with documents (its tokens, the calls'
  // kernel timing) costs about as much as 4,096 device-steps' searches here:
  // counted, so that a thousand small closed forms weigh what they cost.
  if (!w.documents.empty()) add_document_work(4096);
  Summary s;
  s.workload = w;
  s.hardware = hardware_text(hw, im);
  s.compute_model = im.name();
  s.kernel = im.kernel();
  s.merge_style = im.merge_style();
  s.chunk_scan = chunk_scan_info(w, im);
  s.permutation = permutation_info(w, hw, im);
  s.overlap = hw.overlap;
  const double bw = ring_bw(w, hw), lat = hw.ring_latency(w.devices);
  const auto n = w.devices;
  const auto steps = num_steps(w);
  const int d = w.shape.head_dim;
  const auto passes = passes_of(w);  // each as backward or not
  const auto f = ring_interference(w, hw, im);
  s.interference_compute = f.compute;
  s.interference_memory = f.memory;
  s.comm_ctas = f.ctas;
  s.comm_link_kind = f.link_kind;

  // Devices run their own step sequences, held back only by the blocks they
  // wait for (sim/simulate.cpp); a layer takes as long as its slowest
  // device's own sum of steps. A device's history is linear in its index
  // (it computes the unwrapped call for its first steps and the wrapped one
  // after: step_groups), so the first and last devices bound every other;
  // single-step layouts add the middle one (allgather's calls vary with it).
  std::vector<std::int64_t> reps{0};
  if (n > 1) reps.push_back(n - 1);
  if (steps == 1 && n > 2) reps.push_back(n / 2);
  if (!w.documents.empty()) {  // packed documents: no device stands for another
    reps.clear();
    for (std::int64_t d = 0; d < n; ++d) reps.push_back(d);
  }
  std::vector<double> dev_time(reps.size(), 0.0), dev_free(reps.size(), 0.0);
  std::vector<double> dev_over(reps.size(), 0.0);  // merges, accumulations, launches
  // Where each representative's time beyond its compute went (the verdict's
  // sources, one layer): waits per (pass, step), interference, hop, collectives.
  // Waits are kept as (step, seconds) in step order: with packed documents
  // every device is a representative, and a tree per device cost 500 MB and
  // a third of the time at 2048 devices.
  struct Spent {
    std::array<std::vector<std::pair<std::int64_t, double>>, 2> waits;
    double interference = 0, hop = 0, collectives = 0;
  };
  std::vector<Spent> spent(reps.size());
  auto& vin = s.verdict_inputs;
  vin.lightest_s = -1;
  double layer_collective = 0, layer_ideal = 0;
  double layer_useful = 0, layer_executed = 0, layer_reduce = 0, layer_single = 0;
  bool first = true;
  const auto units = static_cast<std::uint64_t>(steps) * passes.size();
  std::uint64_t units_done = 0;
  for (bool bwd : passes) {
    const auto bytes = pass_bytes(w, bwd, im, hw);
    const double ring_comm = ring_comm_seconds(w, hw, bytes);
    // Step costs take few distinct values: cache them by the device's calls.
    using Key = std::tuple<
        std::vector<std::tuple<std::int64_t, std::int64_t, int, std::int64_t, std::uint64_t>>, bool,
        bool>;
    std::map<Key, StepCost> cache;
    auto cost_of = [&](std::int64_t dev, std::int64_t st, bool sends) {
      Key k{{}, st > 0, sends};
      for (const auto& c : step_calls(w, dev, st))
        std::get<0>(k).emplace_back(c.q, c.k, static_cast<int>(c.mask), c.shift, c.heads);
      auto it = cache.find(k);
      if (it != cache.end()) return it->second;
      return cache[k] = im.step(w, dev, st, bwd, sends);
    };
    double collective = 0, useful = 0, executed = 0;
    double max_step_compute = 0, max_merge = 0, max_launch = 0;
    const double fpe = flops_per_entry(d, bwd);
    // The ideal's rate: the kernel's unmasked rate at the whole sequence, or
    // any step's own rate where that is higher (a curve can peak below the
    // full length, and calls are timed at their own lengths), so no
    // device's compute can beat the ideal (tests/cli/test_efficiency_property.cpp).
    double ideal_rate = im.rates().nominal_flops(w.seq_len(), d, bwd);
    for (std::int64_t st = 0; st < steps; ++st) {
      throw_if_cancelled();        // a long closed form (packed documents) ends at a signal
      if (!w.documents.empty()) {  // every device, every step
        report_progress(++units_done, units);
        add_document_work(reps.size());
      }
      const bool sends = step_sends(w, bytes, st);
      const double comm = sends ? ring_comm : 0;
      double cfree = 0, cslow = 0;
      for (const auto& g : step_groups(w, st)) {
        const auto c = cost_of(g.device, st, sends);
        cfree = std::max(cfree, c.total());
        cslow = std::max(cslow, overlap_phases(c, f, hw.overlap ? comm : 0));
        useful += static_cast<double>(c.useful_pairs) * static_cast<double>(g.count);
        if (c.attention_s > 0)
          ideal_rate =
              std::max(ideal_rate, static_cast<double>(c.useful_pairs) * fpe / c.attention_s);
        executed += static_cast<double>(c.executed_pairs) * static_cast<double>(g.count);
        max_merge = std::max(max_merge, c.merge_s);
        max_launch = std::max(max_launch, c.launch_s);
      }
      if (first)
        s.steps.push_back({cfree, comm, hw.overlap ? std::max(cslow, comm) : cfree + comm});
      max_step_compute = std::max(max_step_compute, cfree);
      if (cfree > vin.heaviest_s) {
        vin.heaviest_s = cfree;
        vin.heaviest_pass = bwd ? 1 : 0;
        vin.heaviest_step = st;
      }
      if (cfree > 0 && (vin.lightest_s < 0 || cfree < vin.lightest_s)) {
        vin.lightest_s = cfree;
        vin.lightest_pass = bwd ? 1 : 0;
        vin.lightest_step = st;
      }
      for (std::size_t r = 0; r < reps.size(); ++r) {
        const auto c = cost_of(reps[r], st, sends);
        // Double buffering: step st's transfer (of the block for step
        // st+1) overlaps its compute, which runs slower meanwhile; the
        // step ends when both are done. --overlap none: the transfer
        // follows the compute, with nothing to slow.
        const double busy = hw.overlap ? overlap_phases(c, f, comm) : c.total();
        const double t = hw.overlap ? std::max(busy, comm) : c.total() + comm;
        dev_time[r] += t;
        dev_free[r] += c.total();
        dev_over[r] += c.launch_s + c.merge_s;
        // Never below 0: the slowed phases can round a hair under the free ones.
        spent[r].interference += std::max(0.0, busy - c.total());
        if (t > busy) spent[r].waits[bwd ? 1 : 0].emplace_back(st, t - busy);
      }
    }
    // A ring of one device has no hop home.
    const double hop =
        bytes.final_hop && steps > 1 ? static_cast<double>(bytes.final_hop) / bw + lat : 0;
    collective += pass_collective_seconds(w, hw, bytes);
    // The pass's closing work (final casts, deferred corrections), per device.
    double reduce = 0;
    for (std::size_t r = 0; r < reps.size(); ++r) {
      const double red = im.reduce(w, reps[r], bwd);
      reduce = std::max(reduce, red);
      dev_time[r] += hop + red + collective;
      dev_free[r] += red;
      spent[r].hop += hop;
      spent[r].collectives += collective;
    }
    if (first) {
      s.compute_s_per_step = max_step_compute;
      s.comm_s_per_step = bytes.ring ? ring_comm : collective;
      s.bytes_per_step =
          bytes.ring ? bytes.ring
                     : add_checked(bytes.a2a_in + bytes.a2a_out,
                                   mul_checked(bytes.gather_block,
                                               static_cast<std::uint64_t>(n - 1), "gather bytes"),
                                   "gather bytes");
    }
    (bwd ? s.accumulate_s_per_step : s.merge_s_per_step) = max_merge;
    s.launch_s_per_step = std::max(s.launch_s_per_step, max_launch);
    // Ideal: the same useful work at that rate, over N.
    layer_ideal += useful * fpe / ideal_rate / static_cast<double>(n);
    layer_useful += useful * fpe;
    layer_executed += executed * fpe;
    layer_reduce += reduce;
    layer_single += im.single_device(w, bwd);
    layer_collective += collective;
    first = false;
  }
  // The device that sets the time (the first of equals).
  const auto crit = static_cast<std::size_t>(std::max_element(dev_time.begin(), dev_time.end()) -
                                             dev_time.begin());
  double crit_free = dev_free[crit];
  double layer_time = dev_time[crit];
  const auto busiest = static_cast<std::size_t>(std::max_element(dev_free.begin(), dev_free.end()) -
                                                dev_free.begin());
  double layer_compute_only = dev_free[busiest];
  // The devices' mean compute: a device's history is linear in its index, so
  // the first and last average to the mean (the middle one joins them for
  // single-step layouts).
  double layer_mean_compute = 0;
  for (const double x : dev_free) layer_mean_compute += x / static_cast<double>(dev_free.size());
  if (w.scope == Scope::Layer) {
    // Projections and MLP, GEMM by GEMM at the device's matmul rate (catalog
    // gemm_efficiency, tiles, fill: the planner's model); the attention
    // kernel's rate covers attention only.
    // A MoE model's experts at their GEMM shapes (layer_moe: the rates
    // alone, which a TP group's hardware keeps).
    const auto moe = layer_moe(w, hw);
    double other = 0, pointwise = 0;
    for (bool bwd : passes) {
      other += other_layer_seconds(w, hw, bwd) + moe.compute_s[bwd ? 1 : 0];
      pointwise += layer_pointwise_seconds(w, hw, bwd);
    }
    other += pointwise;
    s.other_s = other * w.layers;
    s.pointwise_s = pointwise * w.layers;
    for (bool bwd : passes) s.moe_compute_s += moe.compute_s[bwd ? 1 : 0] * w.layers;
    s.moe_imbalance = moe.imbalance;
    layer_time += other;
    layer_compute_only += other;
    layer_mean_compute += other;
    crit_free += other;
    layer_ideal += other;
    layer_single += other * static_cast<double>(n);
  }
  s.time_s = layer_time * w.layers;
  s.compute_only_s = layer_compute_only * w.layers;
  s.collective_s = layer_collective * w.layers;
  s.ideal_time_s = layer_ideal * w.layers;
  s.reduce_s = layer_reduce * w.layers;
  s.useful_flops = layer_useful * w.layers;
  s.executed_flops = layer_executed * w.layers;
  s.exposed_comm_s = s.time_s - s.compute_only_s;
  settle_efficiency(s);
  s.single_device_time_s = layer_single * w.layers;
  s.efficiency_vs_single_device =
      efficiency_vs_one_device(s.single_device_time_s, static_cast<double>(n), s.time_s);
  s.memory_bytes_per_device = attention_memory(w).total();
  // Without overlap no block hides the transfer: "n/a". Per pass, and the
  // largest of them for the run (min_block_for's rule). Packed documents:
  // n/a too, as the summary says: a step's work is where the documents fall,
  // not a function of the block (the search would re-block a packing made
  // for this block, and the verdict would advise a block from it).
  s.min_block = 0;
  const bool block_search = hw.overlap && with_min_block && w.documents.empty();
  for (bool bwd : passes) {
    const auto m = block_search ? min_block_for_pass(w, hw, im, bwd) : 0;
    vin.min_block[bwd ? 1 : 0] = m;
    if (s.min_block >= 0) s.min_block = m < 0 ? m : std::max(s.min_block, m);
  }
  // The verdict's inputs (analyze() adds --tp's collectives, then decides).
  const double L = w.layers;
  vin.time_s = s.time_s;
  vin.compute_only_s = s.compute_only_s;
  vin.device_time_s = layer_time * L;
  vin.device_free_s = crit_free * L;
  for (int p = 0; p < 2; ++p)
    for (const auto& [st, x] : spent[crit].waits[static_cast<std::size_t>(p)])
      vin.step_wait_s[static_cast<std::size_t>(p)][st] += x * L;
  vin.interference_s = spent[crit].interference * L;
  vin.final_hop_s = spent[crit].hop * L;
  vin.collectives_s = spent[crit].collectives * L;
  vin.diagonal_step0 =
      w.causal && steps > 1 && (w.layout == Layout::Ring || w.layout == Layout::Hybrid);
  vin.collective_name = collective_name(w);
  vin.mean_compute_s = layer_mean_compute * L;
  vin.overheads_s = dev_over[busiest] * L;
  vin.contiguous_causal = vin.diagonal_step0;
  // The verdict's words on documents walk every device's tokens; analyze_time
  // (with_min_block off) returns the time alone and never reads them.
  if (with_min_block && !w.documents.empty())
    vin.documents_why = documents_imbalance(w, vin.heaviest_step);
  vin.block = w.block;
  vin.overlap = hw.overlap;
  if (vin.lightest_s < 0) vin.lightest_s = 0;
  return s;
}

}  // namespace

}  // namespace ringsim
