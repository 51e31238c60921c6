#pragma once
// One dense matrix multiply, C[m x n] = A[m x k] B[k x n], timed from its
// shape on one device (docs/models.md, "GEMMs by shape"). Every GEMM the
// planner and `infer` charge goes through gemm_time.
//
//   compute: the library covers C with thread-block tiles (tm x tn) from the
//     device's tile list; the tiles run in waves of one tile per SM, and every
//     wave costs as much as a full one (NVIDIA Deep Learning Performance docs,
//     Matrix Multiplication Background User's Guide: tile and wave
//     quantization). A tile's rate is the device's best-shape GEMM rate
//     (peak x gemm_efficiency, the maximum achievable matmul of a brute-force
//     shape search) over its SMs, so a shape whose tiles fill whole waves runs
//     at that best rate. The library picks the tile that finishes first.
//   memory: A and B read once and C written once at the achievable HBM
//     bandwidth; small-m GEMMs (decode, a handful of tokens per weight) are
//     bound by reading the weights.
//   fill: a tile also costs a fixed amount whatever its K (the main loop's
//     pipeline fill and the epilogue that writes C), so a GEMM of inner
//     dimension k below the best shape's runs at k/(k+fill) over
//     best_k/(best_k+fill) of the best-shape rate, never above it (XLA's
//     measured GEMM table, catalog gemm_fill); time = max(compute, memory).
// Without SMs or tiles (a TPU), compute is 2 m n k / (peak x efficiency).
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/core/workload.hpp"

namespace ringsim {

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  double flops() const { return 2.0 * static_cast<double>(m) * n * k; }
};

// What one device brings to a GEMM of one precision.
struct GemmRates {
  double peak = 0;        // FLOP/s of that precision at the device's power limit
  double efficiency = 1;  // fraction of peak at the best shape
  double hbm = 0;         // achievable HBM bytes/s
  int sms = 0;
  std::vector<std::pair<int, int>> tiles;
  double in_bytes = 2, out_bytes = 2;  // bytes per element of A/B and of C
  GemmFill fill;                       // a tile's fixed cost in K at this precision
};

// The device's bf16 rates (hw.flops, gemm_efficiency) or its FP8 rates
// (`fp8_peak`, `fp8_efficiency`: inputs 1 B, output bf16).
GemmRates bf16_gemm_rates(const Hardware& hw);
GemmRates fp8_gemm_rates(const Hardware& hw, double fp8_peak, double fp8_efficiency);

struct GemmTime {
  double seconds = 0, compute_s = 0, memory_s = 0;
  std::int64_t tiles = 0, waves = 0;
  int tile_m = 0, tile_n = 0;
  bool memory_bound() const { return memory_s > compute_s; }
};

GemmTime gemm_time(const GemmShape& g, const GemmRates& r);

// A grouped GEMM (one launch, as CUTLASS's grouped GEMM and the fused MoE
// kernels run a MoE layer's experts): `groups` problems of rows[i] x n x k,
// each with its own B (an expert's weights), sharing the SMs' waves: the
// tiles of every problem are counted together before the waves are, so a
// few rows per expert do not cost a wave each. Problems of 0 rows are
// skipped (their weights are not read). gemm_time is the one-group case.
GemmTime grouped_gemm_time(const std::int64_t* rows, std::size_t groups, std::int64_t n,
                           std::int64_t k, const GemmRates& r);

// The two GEMMs of a linear layer's backward for forward shape (m, n, k):
// the input gradient dX = dY W^T (m x k, inner n) and the weight gradient
// dW = X^T dY (k x n, inner m).
std::pair<GemmShape, GemmShape> backward_gemms(const GemmShape& fwd);

// Linear layers given by their forward shapes: the forward GEMMs' time, or
// the backward's (each one's input and weight gradients).
double linears_seconds(const std::vector<GemmShape>& fwd, const GemmRates& r, bool backward);

}  // namespace ringsim
