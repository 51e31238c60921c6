#pragma once
// Inference emulator: long-context prefill and decode with context
// parallelism, on N virtual ranks in one process, each running the real
// blockwise kernels on its shard. Which tokens a rank holds, whose block it
// works on at each step and what it sends come from models/core/infer_work.hpp
// (the contract shared with the closed forms and the SimGrid model); the
// emulator records what the kernels actually did, so tests can prove that
// contract counts the same pairs and elements, and checks the result against
// the float64 reference (the same tolerance rule as the training ring).
//
// Schemes (Yang et al. 2024, "Context Parallelism for Scalable Million-Token
// Inference", arXiv 2411.01783):
//   prefill pass-kv  queries stay; each rank's K/V shard (its cached tokens,
//                    then its new tokens) goes round the ring, N steps; each
//                    step's partial (O, LSE) is merged into the running one.
//   prefill pass-q   K/V stay; the queries go round the ring; a rank keeps the
//                    partial it computed for every foreign query shard, and an
//                    all-to-all after the ring returns each to its queries'
//                    owner, who merges them by LSE in step order.
//   decode           every rank holds all the query tokens and attends once to
//                    its shard of the cache (plus its round-robin share of the
//                    new tokens' K/V); ranks 1..N-1 send their partials to
//                    rank 0, which merges them in rank order.
// Positions are absolute (cache 0 .. cached-1, new tokens after), so the
// causal mask of every shard is the one of the whole sequence. Packed
// documents (InferWork::documents) lie over the same positions: attention is
// causal within each document and empty across; the kernels skip the tiles
// with no visible pair, and a partial with none (a step whose keys all lie in
// other documents) is not merged.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/accuracy.hpp"
#include "kernels/blockwise.hpp"
#include "models/core/infer_work.hpp"
#include "models/core/npy.hpp"

namespace ringsim::kernels {

// Token-major. q [fresh, heads, head_dim]: the new tokens' queries, positions
// cached .. cached+fresh-1. k, v [cached + fresh, kv_heads, head_dim]: the
// whole KV, cache then new tokens, so a row's index is its position.
struct InferInputs {
  std::vector<double> q, k, v;
};

struct InferStep {
  std::int64_t q_source = -1;   // rank whose queries were used; -1 when replicated (decode)
  std::int64_t kv_source = -1;  // rank whose K/V shard was used
  std::uint64_t entries = 0;  // unmasked (query, key) pairs over query heads, counted by the kernel
  std::uint64_t sent = 0;     // ring elements sent to the next rank after this step
  std::int64_t q_rows = 0, k_cols = 0;  // the score block this step formed
};

struct InferResult {
  std::vector<double> o, lse;                   // [fresh, heads, dim], [fresh, heads]
  std::vector<std::vector<InferStep>> steps;    // [rank][step]
  std::vector<std::uint64_t> return_sent;       // per rank: partial O + LSE sent after the ring
  std::int64_t max_q_rows = 0, max_k_cols = 0;  // largest score block one rank formed in a step
};

// A partial result the merge leaves out, for tests: a lost block must fail
// the check. rank/step name the partial (decode: step 0 of that rank); -1 = none.
struct InferFault {
  std::int64_t drop_rank = -1, drop_step = -1;
};

// Throws InputError (check_infer) for a sharding that cannot be made, and
// std::invalid_argument when the inputs' sizes do not match w.
template <typename T>
InferResult emulate_infer(const InferWork& w, const InferInputs& in, const BlockOpts& kernel = {},
                          const InferFault& fault = {});

// Compares every rank-step of `r` with models/core/infer_work.hpp: query and
// K/V sources, infer_step_entries, infer_ring_elements after every step but
// the last, and infer_return_elements. Returns the first difference, or "".
std::string check_infer_work(const InferWork& w, const InferResult& r);

struct InferVerifyReport {
  ToleranceModel tolerance;
  std::vector<ErrorStat> errors;  // O, LSE
  InferResult result;
  std::string work_mismatch;  // empty when every count equals models/core/infer_work.hpp
  bool passed() const;
};

// Judges a result already computed (tests hand in a corrupted one) against
// the float64 reference, with verify_run's tolerance rule, and its counts.
InferVerifyReport judge_infer(const InferWork& w, const InferInputs& in, InferResult result,
                              bool fp64, double tolerance_factor = 1.0);

// Runs emulate_infer in fp64 or fp32 and judges it.
InferVerifyReport verify_infer(const InferWork& w, const InferInputs& in, bool fp64,
                               const BlockOpts& kernel = {}, double tolerance_factor = 1.0);

// Random q, k, v of w's shape, from one generator seeded with `seed` (as random_inputs).
InferInputs random_infer_inputs(const InferWork& w, std::uint64_t seed, NpyDType storage);

}  // namespace ringsim::kernels
