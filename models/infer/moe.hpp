#pragma once
// A mixture-of-experts MLP in inference (docs/inference.md, "Mixture of
// experts"), on one GPU of a TP group that holds every token of the layer
// (TP replicates the hidden states after attention's all-reduce):
//   * experts sliced over TP (--ep 1, vLLM's and SGLang's default): every GPU
//     runs every routed expert at width expert_ffn / tp;
//   * expert parallelism inside the TP group (--ep E, E dividing tp): each GPU
//     holds E_total / E whole experts (or slices of expert_ffn x E / tp), and
//     runs the copies routed to them. No dispatch moves tokens (each GPU has
//     them all); the partial outputs sum in the layer's TP all-reduce, as the
//     sliced MLP's do, so EP changes the expert GEMMs and their balance only.
// Routing is drawn with a seed: each token takes k distinct experts with
// equal chances (up to kDistinctRoutingTokens tokens; beyond, the routed
// copies are dealt to the experts as a multinomial, where every expert gets
// many rows and a token's repeats no longer matter). The slowest GPU's
// experts set the layer's time: the experts it holds that got rows run their
// MLP as two grouped GEMMs through the GEMM-by-shape model (gemm.hpp
// grouped_gemm_time: their tiles share the waves), so a decode step of a few
// tokens reads the weights of the experts it touches.
#include <cstdint>

#include "models/kernel/gemm.hpp"

namespace ringsim {

struct InferRequest;

inline constexpr std::int64_t kDistinctRoutingTokens = 4096;

struct InferMoe {
  double seconds = 0;          // router + shared experts + the slowest GPU's routed experts
  double routed_s = 0;         // of seconds: the slowest GPU's routed experts
  double experts_touched = 0;  // experts (of all) that got at least one row
  double imbalance = 1;        // the slowest GPU's routed rows over the mean
  // EP across CP ranks: the dispatch and combine all-to-alls (prefill) or the
  // EP group's all-reduce of the partial outputs (decode), one MoE layer, and
  // one all-to-all's bytes per GPU (0 for the all-reduce). 0 inside the TP group.
  double alltoall_s = 0;
  double alltoall_bytes = 0;
};

// The CP ranks one EP group spans (1: EP inside the TP group), and the GPUs
// that share one expert's slices (1: whole experts).
std::int64_t ep_span(const InferRequest& r);
std::int64_t expert_tp(const InferRequest& r);

// One MoE layer's MLP for `tokens` tokens of one CP rank; `rates`: the MLP's
// GEMM rates (FP8 with --precision fp8), `bf16`: the router's; `hw`: the
// cluster (EP across CP ranks); `decode`: the tokens are the same on every
// CP rank.
InferMoe infer_moe_mlp(const InferRequest& r, const Hardware& hw, std::int64_t tokens,
                       const GemmRates& rates, const GemmRates& bf16, bool decode);

// Expected distinct experts touched by `tokens` tokens of k distinct experts
// each, drawn uniformly: E (1 - (1 - k/E)^tokens).
double expected_experts_touched(int experts, int k, std::int64_t tokens);

}  // namespace ringsim
