#include "models/kernel/chunk_scan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/core/calls.hpp"

namespace ringsim {

namespace {
std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return b > 0 ? (a + b - 1) / b : 0;
}
}  // namespace

ChunkScanModel::ChunkScanModel(std::string kernel, ChunkScanTarget target, std::int64_t q_chunk,
                               std::int64_t k_chunk, const Hardware& hw)
    : kernel_(std::move(kernel)), t_(std::move(target)), q_chunk_(q_chunk), k_chunk_(k_chunk) {
  // The einsums run at the best-shape matmul rate of their precision (TF32 on
  // an A100 is half its bf16 peak); the score tile streams at achievable HBM.
  matmul_flops_ = hw.gemm_flops() * t_.matmul_peak_fraction;
  hbm_ = hw.hbm_achievable();
}

std::string ChunkScanModel::name() const {
  return fmt::format("{} (chunks {} x {}, {})", kernel_, q_chunk_, k_chunk_, t_.precision);
}

double ChunkScanModel::entry_seconds(int head_dim, bool backward) const {
  const double fpe = flops_per_entry(head_dim, backward);
  const double bytes = backward ? t_.score_bytes_bwd : t_.score_bytes_fwd;
  return (matmul_flops_ > 0 ? fpe / matmul_flops_ : 0) + (hbm_ > 0 ? bytes / hbm_ : 0);
}

ChunkTiles ChunkScanModel::tiles(const KernelCall& c) const {
  ChunkTiles t;
  if (c.q <= 0 || c.k <= 0 || c.heads == 0) return t;
  const auto qc = std::min(q_chunk_, c.q), kc = std::min(k_chunk_, c.k);
  t.query_chunks = ceil_div(c.q, qc);
  t.key_chunks = ceil_div(c.k, kc);
  // A tile is computed in full unless wholly masked: the same count as a
  // flash kernel's tiles (call_tile_pairs), with the chunk as the tile.
  t.executed_pairs = call_tile_pairs(c, qc, kc);
  return t;
}

std::uint64_t ChunkScanModel::executed_pairs(const KernelCall& c, int, bool) const {
  return tiles(c).executed_pairs;
}

double ChunkScanModel::call_seconds(const KernelCall& c, int head_dim, bool backward) const {
  return static_cast<double>(tiles(c).executed_pairs) * entry_seconds(head_dim, backward);
}

ChunkTiles ChunkScanModel::grid(std::int64_t q_rows, std::int64_t k_rows) const {
  ChunkTiles t;
  if (q_rows <= 0 || k_rows <= 0) return t;
  t.query_chunks = ceil_div(q_rows, std::min(q_chunk_, q_rows));
  t.key_chunks = ceil_div(k_rows, std::min(k_chunk_, k_rows));
  return t;
}

double ChunkScanModel::loop_seconds(std::int64_t q_rows, std::int64_t k_rows) const {
  const auto g = grid(q_rows, k_rows);
  const double nq = static_cast<double>(g.query_chunks), nk = static_cast<double>(g.key_chunks);
  return t_.step_s + nq * t_.query_iteration_s + nq * nk * t_.chunk_iteration_s;
}

double ChunkScanModel::seconds(std::uint64_t entries, std::int64_t, int head_dim, bool backward,
                               bool) const {
  return static_cast<double>(entries) * entry_seconds(head_dim, backward);
}

double ChunkScanModel::nominal_flops(std::int64_t, int head_dim, bool backward) const {
  const double s = entry_seconds(head_dim, backward);
  return s > 0 ? flops_per_entry(head_dim, backward) / s : 0;
}

}  // namespace ringsim
