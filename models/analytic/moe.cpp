#include "models/analytic/moe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "models/analytic/analytic.hpp"
#include "models/analytic/collectives.hpp"

namespace ringsim {

std::string not_moe_message(const char* flag, const ModelShape& s) {
  return fmt::format("{}: applies to a mixture-of-experts model (--model {}); {} has no experts",
                     flag, "mixtral-8x7b, qwen3-30b-a3b, ...", s.name);
}

std::vector<std::int64_t> multinomial_counts(std::int64_t n, std::int64_t bins,
                                             std::uint64_t seed) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(std::max<std::int64_t>(0, bins)), 0);
  if (bins <= 0 || n <= 0) return out;
  std::mt19937_64 gen(seed);
  std::int64_t left = n;
  for (std::int64_t i = 0; i + 1 < bins; ++i) {
    const double p = 1.0 / static_cast<double>(bins - i);
    const std::int64_t x = std::binomial_distribution<std::int64_t>(left, p)(gen);
    out[static_cast<std::size_t>(i)] = x;
    left -= x;
  }
  out.back() = left;
  return out;
}

double routing_imbalance(std::int64_t tokens, int k, std::int64_t ep, double capacity_factor,
                         std::uint64_t seed) {
  if (ep <= 1 || tokens <= 0 || k <= 0) return 1;
  // The routed copies of the group's tokens, dealt to ranks as a multinomial
  // with equal chances.
  const auto n = static_cast<std::int64_t>(ep * tokens * k);
  const auto counts = multinomial_counts(n, ep, seed);
  const auto most = *std::max_element(counts.begin(), counts.end());
  const double u = static_cast<double>(most) * static_cast<double>(ep) / static_cast<double>(n);
  return capacity_factor > 0 ? std::min(u, capacity_factor) : u;
}

double ep_alltoall_bytes(const ModelShape& s, std::int64_t tokens, std::int64_t tp,
                         int element_bytes) {
  return static_cast<double>(tokens) / static_cast<double>(tp) * s.experts_per_token * s.d_model *
         element_bytes;
}

double rows_per_expert(const ModelShape& s, std::int64_t tokens, std::int64_t ep,
                       double imbalance) {
  return imbalance * static_cast<double>(ep * tokens) * s.experts_per_token / s.experts;
}

double permute_bytes(const ModelShape& s, std::int64_t tokens, std::int64_t tp, std::int64_t ep,
                     int element_bytes) {
  const double t = static_cast<double>(tokens) / static_cast<double>(tp);
  const double k = s.experts_per_token;
  const bool sorts = s.experts / std::max<std::int64_t>(1, ep) > 1 && ep > 1;
  const double elements = (t + t * k) + (sorts ? 4 * t * k : 0) + (t * k + t);
  return static_cast<double>(element_bytes) * s.d_model * elements;
}

void add_mlp_gemms(std::vector<GemmShape>& out, const ModelShape& s, std::int64_t rows,
                   std::int64_t width, bool fused_gate_up, bool up, bool down) {
  const std::int64_t D = s.d_model;
  if (up && !mlp_gated(s)) {
    out.push_back({rows, width, D});
  } else if (up && fused_gate_up) {
    out.push_back({rows, 2 * width, D});
  } else if (up) {
    out.push_back({rows, width, D});
    out.push_back({rows, width, D});
  }
  if (down) out.push_back({rows, D, width});
}

namespace {

// C(n - a, k) / C(n, k): none of k distinct draws from n items falls among a.
double none_of(double n, double a, int k) {
  double p = 1;
  for (int i = 0; i < k; ++i) p *= std::max(0.0, (n - a - i) / (n - i));
  return p;
}

// P(j of the g groups a domain holds are among the t of G groups a token
// picks): hypergeometric.
double groups_hit(int G, int g, int t, int j) {
  auto choose = [](int n, int r) {
    if (r < 0 || r > n) return 0.0;
    double c = 1;
    for (int i = 0; i < r; ++i) c = c * (n - i) / (i + 1);
    return c;
  };
  return choose(g, j) * choose(G - g, t - j) / choose(G, t);
}

// P(a domain holding E / domains experts gets one of a token's k experts).
double domain_hit(const ModelShape& s, std::int64_t domains) {
  const double E = s.experts, e = E / static_cast<double>(domains);
  const int k = s.experts_per_token, G = s.expert_groups, t = s.groups_per_token;
  if (G <= 0 || s.experts % domains != 0) return 1 - none_of(E, e, k);
  // Group-limited routing: the k experts drawn from the T experts of the t
  // groups the token picks.
  const double eg = E / G, T = t * eg;
  if (domains >= G && domains % G == 0)  // a domain inside one group
    return static_cast<double>(t) / G * (1 - none_of(T, e, k));
  if (G % domains != 0) return 1 - none_of(E, e, k);
  const int g = static_cast<int>(G / domains);  // whole groups per domain
  double p = 0;
  for (int j = 1; j <= std::min(g, t); ++j)
    p += groups_hit(G, g, t, j) * (1 - none_of(T, j * eg, k));
  return p;
}

}  // namespace

double flex_remote_share(const ModelShape& s, std::int64_t domains) {
  if (domains <= 1) return 0;
  // Each of the other domains receives a token once when it holds one of
  // the token's k experts (DeepSeek-V2/V3's group-limited routing caps
  // those domains: domain_hit).
  return static_cast<double>(domains - 1) * domain_hit(s, domains) / s.experts_per_token;
}

double ep_alltoall_seconds(const ModelShape& s, double bytes, std::int64_t ep, const Hardware& eg,
                           bool flex) {
  if (ep <= 1 || bytes <= 0) return 0;
  const double bw = alltoall_bandwidth(eg, ep), lat = alltoall_latency(eg, ep);
  const bool nodes = eg.platform == Platform::Nodes && !eg.bandwidth_override;
  const std::int64_t n = nodes ? std::min<std::int64_t>(ep, eg.nvlink_group()) : ep;
  if (n >= ep) return alltoall_time(static_cast<std::uint64_t>(bytes), ep, bw, lat);
  // The group spans NVLink domains of n ranks. NCCL posts every peer's send
  // at once, so NVLink carries the share for the domain's other ranks while
  // the NIC carries only what leaves it; the slower of the two sets the time.
  const double G = static_cast<double>(ep), local = bytes * static_cast<double>(n - 1) / G;
  const double remote =
      flex ? bytes * flex_remote_share(s, ep / n) : bytes * static_cast<double>(ep - n) / G;
  const double nic = eg.inter_bw / eg.gpus_per_nic();
  return std::max(local / eg.intra_bw, remote / nic) + static_cast<double>(ep - 1) * lat;
}

void add_mla_gemms(std::vector<GemmShape>& out, const ModelShape& s, std::int64_t rows,
                   std::int64_t tp, bool qkv, bool out_proj) {
  const std::int64_t D = s.d_model, H = s.heads / tp, ql = s.q_lora_rank, kl = s.kv_lora_rank;
  const std::int64_t rope = s.qk_rope_head_dim, qk = s.qk_head_dim, v = s.v_head_dim;
  if (qkv) {
    // The down projections are not split over TP (each rank needs the whole
    // latent); the up projections split by heads.
    if (ql > 0) {
      out.push_back({rows, ql, D});
      out.push_back({rows, H * qk, ql});
    } else {
      out.push_back({rows, H * qk, D});
    }
    out.push_back({rows, kl + rope, D});
    out.push_back({rows, H * (qk - rope + v), kl});
  }
  if (out_proj) out.push_back({rows, D, H * v});
}

void add_attention_gemms(std::vector<GemmShape>& out, const ModelShape& s, std::int64_t rows,
                         std::int64_t tp, bool fused_qkv, bool qkv, bool out_proj) {
  if (is_mla(s)) {
    add_mla_gemms(out, s, rows, tp, qkv, out_proj);
    return;
  }
  const std::int64_t D = s.d_model, d = s.head_dim, q = s.heads * d / tp, kv = s.kv_heads * d / tp;
  if (qkv && fused_qkv) {
    out.push_back({rows, q + 2 * kv, D});
  } else if (qkv) {
    out.push_back({rows, q, D});
    out.push_back({rows, kv, D});
    out.push_back({rows, kv, D});
  }
  if (out_proj) out.push_back({rows, D, q});
}

namespace {

// One expert's MLP on m rows, forward or backward.
double expert_seconds(const ModelShape& s, std::int64_t m, std::int64_t f, bool fused,
                      const GemmRates& rates, bool backward) {
  if (m <= 0) return 0;
  std::vector<GemmShape> fwd;
  add_mlp_gemms(fwd, s, m, f, fused);
  return linears_seconds(fwd, rates, backward);
}

}  // namespace

double sequence_parallel_share(const ModelShape& s) {
  return 1 - 0.5 * static_cast<double>(moe_layers(s)) / s.layers;
}

MoeLayerTime moe_one_layer_time(const ModelShape& s, const MoeParallel& p, const Hardware& base,
                                std::int64_t tokens, std::int64_t tp, const GemmRates& rates,
                                bool fused_gate_up) {
  MoeLayerTime t;
  if (!is_moe(s)) return t;
  const std::int64_t ep = std::max<std::int64_t>(1, p.ep), etp = std::max<std::int64_t>(1, p.etp);
  const std::int64_t f = s.expert_ffn / etp;
  // A GPU's MoE input: its sequence-parallel share gathered over its ETP
  // group (the TP group's tokens at etp = tp, its own at etp = 1).
  const std::int64_t moe_tokens = tokens * etp / tp;
  t.imbalance =
      routing_imbalance(moe_tokens, s.experts_per_token, ep, p.capacity_factor, p.routing_seed);
  const auto m = static_cast<std::int64_t>(rows_per_expert(s, moe_tokens, ep, t.imbalance) + 0.5);
  const auto local = s.experts / ep;
  const std::vector<GemmShape> router{{tokens, s.experts, s.d_model}};
  // Shared experts: every token, one GEMM of their summed width.
  const std::int64_t shared = static_cast<std::int64_t>(s.shared_experts) * f;
  for (const bool bwd : {false, true}) {
    double x = static_cast<double>(local) * expert_seconds(s, m, f, fused_gate_up, rates, bwd) +
               expert_seconds(s, shared > 0 ? moe_tokens : 0, shared, fused_gate_up, rates, bwd);
    x += linears_seconds(router, rates, bwd);
    (bwd ? t.experts_b : t.experts_f) = x;
  }
  const double hbm = base.hbm_achievable();
  t.permute_f = t.permute_b = hbm > 0 ? permute_bytes(s, tokens, tp, ep, p.element_bytes) / hbm : 0;
  t.experts_f += t.permute_f;
  t.experts_b += t.permute_b;
  t.a2a_bytes = ep > 1 ? ep_alltoall_bytes(s, tokens, tp, p.element_bytes) : 0;
  // EP ranks sit etp apart (expert TP innermost): ep ranks at stride etp.
  const double one = ep_alltoall_seconds(s, t.a2a_bytes, ep, group_hardware(base, etp), p.flex);
  t.a2a_f = 2 * one;  // dispatch + combine
  t.a2a_b = 2 * one;  // their gradients, the other way
  // Expert TP (Megatron-Core's MoEAlltoAllTokenDispatcher with a TP group of
  // etp ranks: gather_from_sequence_parallel_region after the dispatch,
  // reduce_scatter_to_sequence_parallel_region before the combine): the
  // routed rows of the ETP group, the slowest rank's, gathered and scattered
  // whole (nccl-tests' size: the gathered buffer, bf16), inside the group as
  // placed (expert TP innermost).
  if (etp > 1) {
    const double rows = t.imbalance * static_cast<double>(moe_tokens) * s.experts_per_token;
    const double bytes = rows * s.d_model * p.element_bytes;
    const auto g = placed_group(base, etp);
    const double both = collective_time(Collective::AllGather, bytes, g, base).seconds +
                        collective_time(Collective::ReduceScatter, bytes, g, base).seconds;
    t.etp_f = t.etp_b = both;
    t.a2a_f += both;
    t.a2a_b += both;
  }
  return t;
}

LayerMoe layer_moe(const Workload& w, const Hardware& hw) {
  LayerMoe out;
  if (!is_moe(w.shape) || w.scope != Scope::Layer) return out;
  const std::int64_t tp = w.expert_tp > 0 ? w.expert_tp : std::max(1, w.tp);
  MoeParallel p;
  p.ep = std::max<std::int64_t>(1, w.ep);
  p.etp = tp;
  p.routing_seed = w.routing_seed;
  p.element_bytes = dtype_bytes(w.dtype);
  // The device's rates at the run's dtype (hw.flops is its peak), the
  // operands at its width.
  auto rates = bf16_gemm_rates(hw);
  rates.in_bytes = rates.out_bytes = p.element_bytes;
  // Gate and up as one GEMM (Megatron-Core's grouped GEMM experts).
  const auto t = moe_one_layer_time(w.shape, p, hw, w.block * w.batch, tp, rates,
                                    /*fused_gate_up=*/true);
  out.compute_s = {t.experts_f, t.experts_b};
  out.comm_s = {t.a2a_f, t.a2a_b};
  out.imbalance = t.imbalance;
  out.a2a_bytes = t.a2a_bytes;
  out.etp = tp;
  return out;
}

}  // namespace ringsim
