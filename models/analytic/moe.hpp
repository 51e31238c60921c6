#pragma once
// Mixture of experts in training, one MoE layer on one GPU: the cost
// functions `ringsim plan` (models/plan/moe.hpp, over a model's layers) and
// `ringsim run --scope layer` (both engines) share (docs/models.md and
// docs/plan.md, "Mixture of experts"): how many tokens each expert-parallel
// rank computes, what the token dispatch and combine all-to-alls move, and
// the expert GEMMs' time.
//
// A MoE layer on one GPU, per micro-step, with T tokens per CP rank (the
// rank's own CP shard: a token's attention and its experts run on the same
// rank, so nothing moves between them but the dispatch), top-k routing over
// E experts, expert parallelism EP and tensor parallelism t:
//   * dispatch and combine: each an all-to-all of T/t x k x D x 2 bytes per
//     GPU over the EP group (bf16 hidden states, sequence-parallel shares),
//     (EP-1)/EP of it leaving the GPU; forward dispatch + combine, backward
//     the same two again; exposed (Megatron-Core's default schedule).
//   * expert GEMMs: E/EP local experts, each on u x EP x T x k / E rows (u,
//     the slowest rank's load over the mean), gate/up and down of width
//     expert_ffn / t; shared experts on all T tokens; the router's D x E.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/workload.hpp"
#include "models/kernel/gemm.hpp"

namespace ringsim {

// The refusal of a flag that only a mixture-of-experts model takes, given
// with dense model `s` (plan's and infer's --ep, --routing-seed, ...).
std::string not_moe_message(const char* flag, const ModelShape& s);

// The slowest EP rank's routed rows over the mean, for `tokens` tokens per
// rank and top-k over the group: routing drawn as the balanced router's
// ideal (every routed copy lands on each rank with probability 1/EP: a
// multinomial, sampled rank by rank as binomials with `seed`), then capped
// at the capacity factor when one is set (the tokens over it are dropped).
// 1 when EP is 1 (one rank holds every expert).
double routing_imbalance(std::int64_t tokens, int k, std::int64_t ep, double capacity_factor,
                         std::uint64_t seed);

// `n` routed copies dealt to `bins` bins with equal chances: a multinomial,
// drawn bin by bin as Binomial(left, 1 / (bins left)) with `seed`. Each
// bin's count; they sum to n.
std::vector<std::int64_t> multinomial_counts(std::int64_t n, std::int64_t bins, std::uint64_t seed);

// An MLP's GEMMs on `rows` tokens at hidden width `width` (a dense layer's,
// step_time.cpp, or one expert's): the up side (gate and up, fused into one
// GEMM or not, or a plain MLP's one up projection) and the down projection,
// each when asked for.
void add_mlp_gemms(std::vector<GemmShape>& out, const ModelShape& s, std::int64_t rows,
                   std::int64_t width, bool fused_gate_up, bool up = true, bool down = true);

// Multi-head latent attention's projections (ModelShape::is_mla) on `rows`
// tokens of one TP rank: Q's down and up (or Q straight), the KV latent with
// the RoPE key, K and V up from it (`qkv`), and the output (`out_proj`), as
// Megatron-Core's MLA splits them: down projections whole on every rank,
// up and output projections by heads.
void add_mla_gemms(std::vector<GemmShape>& out, const ModelShape& s, std::int64_t rows,
                   std::int64_t tp, bool qkv, bool out_proj);

// A layer's attention projections on `rows` tokens of one TP rank (heads /
// tp): Q/K/V as one fused GEMM or three (`qkv`), then the output projection
// (`out_proj`); MLA's own (add_mla_gemms). The planner's linears and
// `run --scope layer` both build theirs here.
void add_attention_gemms(std::vector<GemmShape>& out, const ModelShape& s, std::int64_t rows,
                         std::int64_t tp, bool fused_qkv, bool qkv = true, bool out_proj = true);

// Bytes one GPU sends in one dispatch (or combine) all-to-all.
double ep_alltoall_bytes(const ModelShape& s, std::int64_t tokens, std::int64_t tp,
                         int element_bytes = 2);

// One dispatch (or combine) of `bytes` per GPU over an EP group of `ep`
// ranks on `eg` (the cluster seen at the group's stride, group_hardware).
// Inside one NVLink domain: the staged all-to-all (analytic.hpp). Across
// domains of n ranks: NVLink carries the (n-1)/ep share for the domain's
// other ranks while the NIC carries the rest, concurrently (NCCL posts every
// peer's send at once), plus ep-1 hop latencies. `flex` (DeepEP, HybridEP;
// DeepSeek-V3 report sec. 3.2.2): a token crosses to each remote domain
// holding one of its experts once and fans out there over NVLink, so the
// NIC carries flex_remote_share of the bytes.
double ep_alltoall_seconds(const ModelShape& s, double bytes, std::int64_t ep, const Hardware& eg,
                           bool flex);

// What a flex dispatch sends off its domain, over the routed copies' bytes,
// with the E experts spread evenly over `domains` NVLink domains and a
// token's k experts drawn without replacement: (domains - 1) x P(a domain
// holds one of them) / k. Under group-limited routing (ModelShape
// expert_groups, groups_per_token: DeepSeek-V3 sends a token to at most 4
// of its 8 groups' nodes) the k experts come from the t groups the token
// picks, so fewer domains are reached; a domain is then a whole number of
// groups or a part of one (else the unlimited draw stands).
double flex_remote_share(const ModelShape& s, std::int64_t domains);

// Routed rows per local expert on the slowest rank.
double rows_per_expert(const ModelShape& s, std::int64_t tokens, std::int64_t ep, double imbalance);

// Bytes one GPU's token permutations move in a MoE layer's forward (the
// backward moves as many), bf16 at HBM: Megatron-Core's all-to-all token
// dispatcher (moe/token_dispatcher.py) permutes the T/t tokens into their
// top-k expert order before the dispatch (read T, write T x k), sorts the
// received chunks by local expert when a rank holds more than one (read and
// write T x k), and after the combine sorts them back (again) and
// unpermutes (read T x k, write T, the weighted sum of a token's k copies).
double permute_bytes(const ModelShape& s, std::int64_t tokens, std::int64_t tp, std::int64_t ep,
                     int element_bytes = 2);

// One MoE layer's times on one GPU (plan's moe_layer_time: the mean over
// every layer, so a model with dense first layers carries its MoE share).
struct MoeLayerTime {
  double permute_f = 0, permute_b = 0;  // the token permutations (permute_bytes at HBM)
  double experts_f = 0, experts_b = 0;  // router, routed and shared expert GEMMs
  double a2a_f = 0, a2a_b = 0;          // dispatch + combine, forward and backward
  // Of a2a_f / a2a_b: with expert TP above 1, the dispatcher's all-gather of
  // the routed tokens over the ETP group after the dispatch and its
  // reduce-scatter before the combine (their gradients the other way).
  double etp_f = 0, etp_b = 0;
  double imbalance = 1;  // the slowest rank's load over the mean
  double a2a_bytes = 0;  // one all-to-all's bytes per GPU
};

// The share of a layer's sequence-parallel collectives (tp_pass_seconds:
// all-gather and reduce-scatter before and after attention and the MLP) that
// a model's layers run: a MoE layer takes the sequence-parallel shard into
// its router and dispatch as it is (Megatron-Core's MoE layer), so its MLP
// half does not run. 1 for a dense model.
double sequence_parallel_share(const ModelShape& s);

// How a MoE layer is parallelised and routed: expert parallelism `ep`,
// expert tensor parallelism `etp` (ranks at stride etp: expert TP
// innermost), the capacity factor (0: dropless), the routing draw's seed,
// and a flex dispatch (DeepEP: a token crosses to a remote domain once).
struct MoeParallel {
  std::int64_t ep = 1, etp = 1;
  // Bytes of one element of the tokens moved and permuted: the activations'
  // dtype (--dtype; bf16 2).
  int element_bytes = 2;
  double capacity_factor = 0;
  std::uint64_t routing_seed = 1;
  bool flex = false;
};

// One MoE layer's time per micro-step on one GPU of a TP group of `tp`
// holding `tokens` tokens (0s for a dense model), on the cluster's hardware
// `base` (not a TP group's: where the EP group sits depends on etp).
// `fused_gate_up`: gate and up as one GEMM (Megatron).
MoeLayerTime moe_one_layer_time(const ModelShape& s, const MoeParallel& p, const Hardware& base,
                                std::int64_t tokens, std::int64_t tp, const GemmRates& rates,
                                bool fused_gate_up);

// `ringsim run --scope layer` on a MoE model: one MoE layer on one GPU, per
// pass (0 forward, 1 backward), as the planner charges it
// (moe_one_layer_time): `compute_s` the expert side's compute (router,
// routed experts at the slowest EP rank, shared experts, the token
// permutations) and `comm_s` the dispatch and combine all-to-alls (with the
// experts' TP group, its gather and scatter of the routed tokens), exposed.
// EP spans w.ep CP ranks (TP groups), the experts split over each group's
// GPUs (expert TP = TP, Megatron-Core's default), no capacity factor
// (dropless), routing drawn with w.routing_seed. `w` may be a TP rank's
// workload (tp_rank_workload keeps expert_tp); `hw` sets `comm_s` where the
// EP group sits, so give the cluster's hardware, not a TP group's (the
// compute reads only its rates). All 0 for a dense model or --scope attention.
struct LayerMoe {
  std::array<double, 2> compute_s{}, comm_s{};
  double imbalance = 1;  // the slowest EP rank's routed rows over the mean
  double a2a_bytes = 0;  // one dispatch's (or combine's) bytes per GPU
  std::int64_t etp = 1;  // the experts' TP degree
};
LayerMoe layer_moe(const Workload& w, const Hardware& hw);

}  // namespace ringsim
