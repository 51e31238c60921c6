#pragma once
// Attention kernel implementations and communication libraries as catalog
// data (models/data/kernels.json): what a user actually runs, each number with
// its source. The cost model that reads them is models/kernel/; the schema and
// the interpolation rules are in docs/models.md, "Kernel implementations".
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/core/calls.hpp"

namespace ringsim {

// Published throughput of one kernel on one device: useful TFLOP/s (4 x
// head_dim per visible pair forward, 2.5x backward) against sequence length
// of a square call (q = k = L, batch x L fixed by the benchmark).
struct KernelCurve {
  std::string device;
  std::string pass;  // fwd | bwd | fwdbwd
  CallMask mask = CallMask::Full;
  int head_dim = 0;
  std::vector<double> lengths, tflops;  // ascending lengths
  std::string source, reading;          // reading: how the values were taken from the source
};

// Query rows x key columns of the tile the kernel walks the score matrix in.
struct TileSize {
  std::int64_t q = 0, k = 0;
};
struct KernelTiles {
  std::string pass;  // fwd | bwd
  int head_dim = 0;  // 0: any head dim
  TileSize full, causal;
};

// Memory-bound work a ring implementation does around its kernel calls:
// `bytes` per unit of `per`, as `kernels` launches, `when` in the pass.
//   when: first (the first step that computes), after_first (the later ones),
//         step (every step that computes), every_step (every step, whatever
//         the mask: a scan that runs its loop either way), partial (a step whose calls cover
//         only part of the device's rows), send (a step that sends a block),
//         final (once after the pass), deferred (once per computing step,
//         but run after the loop, with the final ones)
//   per:  call_q_elems / call_q_rows (the rows the step's calls cover, x
//         head_dim or not), call_kv_elems (the keys they cover, one of K or
//         V, kv heads x head_dim), block_kv_elems (the keys the step's scan
//         walks, computed or skipped), block_kv_elems_per_query_chunk (the
//         same once per query chunk of a chunked scan), all_q_elems (the device's whole output),
//         all_qkv_elems (its Q, K and V), sent_kv_elems (K and V elements of
//         the block sent)
struct StepOp {
  std::string name, pass, when, per, source;  // pass: fwd | bwd | both
  double bytes = 0;
  int kernels = 1;
};

// A JAX blockwise attention that walks the score matrix as a scan over query
// chunks x key chunks (rates "chunk_scan": the seed's ringattention code):
// the chunk sizes, and per device kind (gpu | tpu) what its precision, score
// traffic and loop control cost (docs/models.md, "JAX blockwise scan").
struct ChunkScanTarget {
  std::string precision;                            // in words: "fp32 scores, TF32 matmuls"
  double matmul_peak_fraction = 1;                  // the matmuls' peak over the device's bf16 peak
  double score_bytes_fwd = 0, score_bytes_bwd = 0;  // HBM bytes per executed score entry
  double chunk_iteration_s = 0;  // one (query chunk, key chunk) iteration, skipped or not
  double query_iteration_s = 0;  // one iteration of the outer scan over query chunks
  double step_s = 0;             // one ring step: the scan over devices, ppermute's rendezvous
  int k_bytes = 0;               // bytes per K element on the ring (0: the dtype's)
  std::string source;            // where each number comes from
};
struct ChunkScanSpec {
  std::int64_t query_chunk = 0, key_chunk = 0;  // defaults (--query-chunk-size, --key-chunk-size)
  std::string chunks_source;
  std::map<std::string, ChunkScanTarget> targets;  // by device kind
};

struct KernelSpec {
  std::string name, display, source;
  std::vector<std::string> dtypes;  // empty: any
  std::string rates;                // curves | profile | roofline | chunk_scan
  std::string profile;              // rates = profile: the shipped profile's name ("" = --profile)
  std::string curves_from_kernel;   // use another kernel's curves
  std::map<std::string, std::string> curves_from_device;  // device -> device whose curves apply
  std::string curves_from_device_source;
  std::vector<KernelCurve> curves;
  // Every published curve's rate times this (1: as published); a user's
  // what-if (--set kernels.NAME.rate_scale=0.9), never set in the catalog.
  double rate_scale = 1;
  std::vector<KernelTiles> tiles;
  std::string tiles_source;
  int kernels_fwd = 1, kernels_bwd = 1;  // launches per attention call
  std::string kernels_source;
  double launch_s = 0;  // host time to launch one kernel
  std::string launch_source;
  std::string comm_library;  // a CommLibrary name
  int grad_bytes = 4;        // bytes per element of dK/dV on the ring
  std::string grad_bytes_source;
  std::vector<StepOp> ops;
  std::string merge;         // how partial outputs are merged, in words
  ChunkScanSpec chunk_scan;  // rates = chunk_scan
  // Where striped and zigzag reorder the sequence: "pipeline" (the data
  // loader, once per training step: token ids and positions) or "layer" (an
  // all-to-all of Q, K, V before each attention and of O back after it).
  std::string permutation = "pipeline", permutation_source;
  // The K/V the ring passes: "grouped" (one head per KV head, as GQA keeps
  // them) or "expanded" (repeated to every query head before the attention
  // call the ring wraps, as TorchTitan's models do before SDPA).
  std::string ring_kv = "grouped", ring_kv_source;
  // Where the scores live: "on_chip" (a fused kernel: attention dropout, if
  // any, is drawn inside it) or "hbm" (standard attention: the probabilities
  // materialised, their dropout one more memory-bound op).
  std::string scores = "on_chip", scores_source;
};

// SMs (CTAs) a communication library's transfers occupy while they run, per
// link kind (nvlink | network | pcie | xgmi | ici); a kind not listed: none.
struct CommLibrary {
  std::string name, display, source;
  std::map<std::string, int> ctas;
};

// Parse the "kernels" / "comm_libraries" arrays of a catalog file; errors
// name `origin` and the entry (InputError).
KernelSpec parse_kernel_spec(const nlohmann::json& entry, const std::string& origin,
                             std::size_t index);
CommLibrary parse_comm_library(const nlohmann::json& entry, const std::string& origin,
                               std::size_t index);

}  // namespace ringsim
