#pragma once
// Blockwise (memory-efficient) attention on the CPU with Eigen, on one or more threads.
// Forward: online softmax over key chunks with a running maximum and running
// sum (Milakov & Gimelshein 2018; FlashAttention, Dao et al. 2022), returning
// O and the log-sum-exp per query. Backward: FlashAttention-2 (Dao 2023,
// Algorithm 2) recomputes P = exp(S - LSE) per tile, so no score matrix is
// stored. T = float computes in fp32; T = double in fp64.
//
// Causal masking uses absolute token positions (key k is visible to query q
// iff pos(k) <= pos(q)), so striped and zigzag shards, whose positions are not
// contiguous, mask correctly. A tile whose keys all come after its queries is
// skipped; a tile whose keys all come at or before its queries runs unmasked;
// only the tiles in between (the diagonal) are masked element by element.
//
// Packed documents (BlockOpts::doc_starts) narrow each query's visible keys to
// [start of its document, itself]: a tile is skipped when its keys all come
// after its queries or all before its first query's document; it runs
// unmasked when every key lies between its last query's document start and its
// first query; any tile a document boundary cuts is masked (and computed whole,
// as varlen kernels do: they skip whole tiles only).
#include <cstdint>
#include <vector>

#include "kernels/tensor.hpp"

namespace ringsim::kernels {

// Recorded in profiles; bumped whenever a change to these kernels can move their timings.
inline constexpr const char* kBlockwiseKernelVersion = "ringsim-cpu-blockwise-2";

struct BlockOpts {
  // Tile sizes: a score tile is q_chunk x k_chunk. Defaults measured with
  // bench_kernels (docs/kernels.md): large enough for Eigen's GEMM to run near
  // its peak, small enough for the tile to stay in L2.
  std::int64_t q_chunk = 256;
  std::int64_t k_chunk = 256;
  bool causal = false;
  // Threads one call uses (the calling thread included). The forward splits
  // (head, query chunk) pairs, handed out dynamically (each writes its own
  // rows), the backward (KV head, key chunk) pairs, dealt round-robin; each
  // backward thread adds its dQ into a private copy, summed in thread order at
  // the end, so results are bit-identical run to run for a given thread count
  // (dQ's fp32 summation order differs between thread counts).
  int threads = 1;
  // Start positions of the packed documents, ascending, the first 0 (models/
  // core/documents.hpp); needs `causal`. Empty: one document.
  std::vector<std::int64_t> doc_starts = {};
};

// Query head h uses KV head h / (q.heads / k.heads). Positions empty = 0..n-1.
template <typename T>
struct FwdResult {
  HeadTensor<T> o;            // [heads][seq_q][dim]
  std::vector<T> lse;         // [heads][seq_q]; -inf where every key is masked
  std::uint64_t entries = 0;  // unmasked (query, key) pairs computed, summed over heads
};

template <typename T>
FwdResult<T> blockwise_forward(const HeadTensor<T>& q, const HeadTensor<T>& k,
                               const HeadTensor<T>& v, const std::vector<std::int64_t>& q_pos,
                               const std::vector<std::int64_t>& k_pos, const BlockOpts& opts);

// The same, reusing out's storage (a ring step calls this once per step).
template <typename T>
void blockwise_forward_into(const HeadTensor<T>& q, const HeadTensor<T>& k, const HeadTensor<T>& v,
                            const std::vector<std::int64_t>& q_pos,
                            const std::vector<std::int64_t>& k_pos, const BlockOpts& opts,
                            FwdResult<T>& out);

// D = rowsum(dO * O) per (head, query): the softmax-Jacobian term of the
// backward pass, computed once per query and reused by every key block.
template <typename T>
std::vector<T> softmax_delta(const HeadTensor<T>& o, const HeadTensor<T>& d_o);

// Adds this (q, k/v) pair of blocks' contribution to dq, dk and dv, given the
// queries' final LSE and D (over all keys, not just these). Returns the
// unmasked pairs it recomputed. dq has q's shape, dk and dv k's.
template <typename T>
std::uint64_t blockwise_backward_accumulate(const HeadTensor<T>& q, const HeadTensor<T>& k,
                                            const HeadTensor<T>& v, const HeadTensor<T>& d_o,
                                            const std::vector<T>& lse, const std::vector<T>& delta,
                                            const std::vector<std::int64_t>& q_pos,
                                            const std::vector<std::int64_t>& k_pos,
                                            const BlockOpts& opts, HeadTensor<T>& dq,
                                            HeadTensor<T>& dk, HeadTensor<T>& dv);

template <typename T>
struct Grads {
  HeadTensor<T> dq, dk, dv;
  std::uint64_t entries = 0;
};

// Single-device backward: gradients of sum(dO * O) with respect to q, k, v.
template <typename T>
Grads<T> blockwise_backward(const HeadTensor<T>& q, const HeadTensor<T>& k, const HeadTensor<T>& v,
                            const HeadTensor<T>& o, const std::vector<T>& lse,
                            const HeadTensor<T>& d_o, const std::vector<std::int64_t>& q_pos,
                            const std::vector<std::int64_t>& k_pos, const BlockOpts& opts);

}  // namespace ringsim::kernels
