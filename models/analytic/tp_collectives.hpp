#pragma once
// Tensor parallelism's collectives per transformer layer (Megatron-LM): the
// one cost function `ringsim run --tp`, both engines and the planner charge.
//
// Per layer and pass a TP group moves the layer's activation, tokens x d_model
// elements, four times: without sequence parallelism two all-reduces (after
// the attention output projection and after the MLP down projection; Shoeybi
// et al. 2019, arXiv 1909.08053, sec. 3, the g operators), with it two
// all-gathers and two reduce-scatters (Korthikanti et al. 2022, arXiv
// 2205.05198, sec. 4.2.2). Backward has the same count again. A ring
// all-reduce is a reduce-scatter plus an all-gather, so both forms move the
// same bytes in the same rounds (the paper's point: sequence parallelism costs
// no extra communication). None of it overlaps compute (Megatron's default).
#include <cstdint>

#include "models/core/workload.hpp"

namespace ringsim {

// The link a TP ring runs on: the achievable bus bandwidth of a collective
// over `tp` consecutive GPUs (models/analytic/collectives.hpp: the node's
// NVLink at its measured collective efficiency) and the latency of one ring
// step on it.
struct TpLink {
  double bandwidth = 0, latency = 0;
};
TpLink tp_link(const Hardware& hw, std::int64_t tp);
// Library calls per layer pass: 4 with sequence parallelism (2 all-gathers,
// 2 reduce-scatters), 2 all-reduces without; each pays NCCL's base latency
// once (kCollectiveBaseLatency).
int tp_calls_per_pass(std::int64_t tp, bool sequence_parallel);

// Ring reduce-scatters or all-gathers one layer's pass has: 4 (2 all-reduces
// of 2 each, or 2 all-gathers + 2 reduce-scatters); 0 without TP.
int tp_ring_collectives_per_pass(std::int64_t tp);
// The bytes each GPU sends per ring round: the activation tokens x d_model x
// bytes_per_element, split in tp shares.
std::uint64_t tp_share_bytes(std::int64_t tokens, int d_model, int bytes_per_element,
                             std::int64_t tp);

// TP collective seconds of one layer's pass (forward, or backward: the same)
// for a TP group of `tp` GPUs holding `tokens` tokens: 4 ring collectives of
// (tp - 1) rounds, each share / B + L on the TP link, plus the calls' base
// latency.
double tp_pass_seconds(std::int64_t tokens, int d_model, int bytes_per_element, std::int64_t tp,
                       const Hardware& hw, bool sequence_parallel = true);
// The ring collectives one layer's pass of workload `w` has: 0 unless
// --scope layer with --tp above 1; 2 on a mixture-of-experts layer (the
// attention's all-gather and reduce-scatter: the MoE layer takes the
// sequence-parallel shard into its router, and the gather and scatter of its
// routed tokens are the dispatch's, models/analytic/moe.hpp); else 4.
int tp_ring_collectives_per_pass(const Workload& w);
// The same seconds for a workload: tokens = block x batch (one CP rank's),
// the workload's dtype, its collectives (tp_ring_collectives_per_pass(w));
// 0 unless --scope layer (attention alone has no TP collective).
double tp_pass_seconds(const Workload& w, const Hardware& hw);

}  // namespace ringsim
