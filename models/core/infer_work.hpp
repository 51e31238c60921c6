#pragma once
// Long-context inference with context parallelism: which tokens each of N CP
// ranks holds, whose block it works on at each step, and the exact work and
// traffic of every rank-step. The contract between the inference emulator
// (kernels/inference.hpp), the closed forms (models/infer/) and the SimGrid
// model (sim/infer_sim.hpp), as models/core/work.hpp is for training.
//
// Positions: the KV cache already holds tokens 0 .. cached-1 (an earlier
// turn, a shared prefix); the request brings `fresh` tokens at positions
// cached .. cached+fresh-1.
//   prefill  the fresh tokens are the prompt: each rank holds fresh/N of them
//            (queries, keys and values) and cached/N cached tokens (keys and
//            values), both sharded by the layout (ring, striped or zigzag),
//            the load-balanced sharding of Yang et al. 2024, "Context
//            Parallelism for Scalable Million-Token Inference" (arXiv
//            2411.01783), sec. 3.
//              pass-kv  queries stay; each rank's K/V (cached + fresh) travels
//                       round the ring, N steps, as in training.
//              pass-q   K/V stay; queries travel; rank i at step s computes a
//                       partial output (O, LSE) for the queries of rank
//                       (i - s) mod N; after the ring an all-to-all returns
//                       every partial to its queries' owner, who merges them
//                       by LSE (Yang et al. sec. 3.3).
//   decode   the fresh tokens are `fresh` query tokens (decode or speculative
//            verification) held by every rank; their K/V are appended to the
//            cache round-robin (token cached+j on rank j mod N); each rank
//            attends to its cache shard, one step, and sends its partial
//            (O, LSE) to rank 0, which merges them by LSE.
// Causal: a fresh token sees every cached token and the fresh tokens at or
// before it.
// Packed documents (`documents`, models/core/documents.hpp) lie over the
// absolute positions, cache then new tokens, and narrow that to the keys of
// the token's own document: causal within each document, nothing across. The
// sharding stays the layout's over the cache and over the new tokens (the
// training ring's --pack sequence); a step whose keys all lie in other
// documents has no pairs, and the emulator skips its work and its merge.
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/workload.hpp"

namespace ringsim {

enum class InferMode { Prefill, Decode };
enum class InferVariant { PassKv, PassQ };
const std::vector<std::string>& infer_mode_names();     // prefill, decode
const std::vector<std::string>& infer_variant_names();  // pass-kv, pass-q
std::string to_string(InferMode m);
std::string to_string(InferVariant v);
InferMode parse_infer_mode(const std::string& flag, const std::string& s);
InferVariant parse_infer_variant(const std::string& flag, const std::string& s);

struct InferWork {
  std::int64_t ranks = 1;          // CP ranks N
  std::int64_t cached = 0;         // tokens already in the KV cache
  std::int64_t fresh = 1;          // prefill: prompt tokens; decode: query tokens per sequence
  Layout layout = Layout::Zigzag;  // ring, striped or zigzag
  InferMode mode = InferMode::Prefill;
  InferVariant variant = InferVariant::PassKv;
  int heads = 1, kv_heads = 1, head_dim = 1;  // on one rank (after tensor parallelism)
  bool causal = true;
  // Document lengths over positions 0 .. context()-1, in order, summing to
  // context(); empty: one document. Needs causal.
  std::vector<std::int64_t> documents = {};

  std::int64_t context() const { return cached + fresh; }
};

// Throws InputError naming the flag when the sharding cannot be made: layout
// not ring/striped/zigzag, cached or fresh (prefill) not divisible by N (2N
// for zigzag), heads not divisible by kv_heads, a count below its minimum,
// documents without a causal mask or not summing to the context.
// `context_flag`/`cached_flag` name the flags in the message.
void check_infer(const InferWork& w, const std::string& context_flag = "--context",
                 const std::string& cached_flag = "--cached");
// The documents part of check_infer alone (callers that check the sharding
// their own way, naming their own flags).
void check_infer_documents(const InferWork& w);

// Ascending absolute positions rank i holds: of the cached tokens (K/V), of
// the fresh tokens' queries (prefill: its shard; decode: all of them), of the
// fresh tokens' K/V (prefill: its shard; decode: round-robin).
std::vector<std::int64_t> infer_cached_tokens(const InferWork& w, std::int64_t rank);
std::vector<std::int64_t> infer_query_tokens(const InferWork& w, std::int64_t rank);
std::vector<std::int64_t> infer_fresh_kv_tokens(const InferWork& w, std::int64_t rank);
// How many keys rank i holds: the sizes of infer_cached_tokens and
// infer_fresh_kv_tokens together, counted without listing them (a closed form
// asking every rank of every candidate split would list the whole context each time).
std::int64_t infer_kv_count(const InferWork& w, std::int64_t rank);

// Steps: N for prefill, 1 for decode.
std::int64_t infer_steps(const InferWork& w);
// Prefill: whose queries (pass-q) and whose K/V (pass-kv) rank i works on at
// step s; the other is its own. Decode: its own, -1 for queries (replicated).
std::int64_t infer_query_source(const InferWork& w, std::int64_t rank, std::int64_t step);
std::int64_t infer_kv_source(const InferWork& w, std::int64_t rank, std::int64_t step);

// Visible (query, key) pairs rank i computes at step s, over its query heads.
std::uint64_t infer_step_entries(const InferWork& w, std::int64_t rank, std::int64_t step);
// Of those, the pairs against cached keys (without documents every one is
// visible: a full block).
std::uint64_t infer_step_cached_entries(const InferWork& w, std::int64_t rank, std::int64_t step);
// All ranks and steps: heads x (each fresh query's visible keys), summed.
std::uint64_t infer_total_entries(const InferWork& w);

// Elements (scalars) one rank sends:
//   ring step (after every prefill step but the last): pass-kv K and V of
//     its cached + fresh tokens; pass-q the queries of one fresh shard;
//   return (after the ring): pass-q the partial O and LSE of the N-1 foreign
//     query shards, (head_dim + 1) per (query, head); decode: rank i > 0 its
//     partial for every query token to rank 0; 0 otherwise.
std::uint64_t infer_ring_elements(const InferWork& w);
std::uint64_t infer_return_elements(const InferWork& w, std::int64_t rank);

// The attention calls one rank-step makes (for the kernel model): a full call
// of its queries against the cached keys, and the fresh-against-fresh calls
// (the training layout's calls, models/core/calls.hpp); with documents, the
// varlen kernel's calls over the step's queries and keys (document_calls).
struct KernelCall;
std::vector<KernelCall> infer_step_calls(const InferWork& w, std::int64_t rank, std::int64_t step);

}  // namespace ringsim
