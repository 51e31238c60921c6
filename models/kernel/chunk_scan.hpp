#pragma once
// The seed's own attention: JAX blockwise attention as a scan over query
// chunks x key chunks (Ring Attention, Liu et al., and its code `ringattention`:
// `_blockwise_attention_fwd/_bwd` under `shard_map`, K/V passed by `ppermute`).
// What it costs (docs/models.md, "JAX blockwise scan"):
//   - compute: every chunk tile that is not wholly masked is computed in full
//     (a `lax.cond` skips only wholly masked ones; a partly masked tile adds
//     its mask as a bias), at the matmul rate of the target's precision plus
//     the HBM traffic of the score tile where it is materialised (XLA on GPU;
//     a Pallas kernel on TPU keeps it on chip);
//   - loop control, whatever the mask: one iteration per (query chunk, key
//     chunk), one per query chunk and one per ring step (`loop_seconds`).
#include <cstdint>
#include <string>

#include "models/core/kernel_spec.hpp"
#include "models/core/profile.hpp"
#include "models/core/workload.hpp"

namespace ringsim {

// Chunk tiles of one call or one step's scan.
struct ChunkTiles {
  std::int64_t query_chunks = 0, key_chunks = 0;  // the scan's trip counts
  std::uint64_t executed_pairs = 0;               // pairs of the tiles computed, heads included
};

class ChunkScanModel final : public ComputeModel {
 public:
  // `q_chunk`, `k_chunk`: the chunk sizes asked (--query-chunk-size,
  // --key-chunk-size); `hw`: the device as deployed (peak, HBM).
  ChunkScanModel(std::string kernel, ChunkScanTarget target, std::int64_t q_chunk,
                 std::int64_t k_chunk, const Hardware& hw);

  double seconds(std::uint64_t entries, std::int64_t block, int head_dim, bool backward,
                 bool partial_mask) const override;
  double call_seconds(const KernelCall& c, int head_dim, bool backward) const override;
  std::uint64_t executed_pairs(const KernelCall& c, int head_dim, bool backward) const override;
  double nominal_flops(std::int64_t length, int head_dim, bool backward) const override;
  std::string name() const override;

  // The chunk grid of a call: a chunk larger than the call's rows (keys) is
  // the rows (keys) themselves; a last chunk may be short.
  ChunkTiles tiles(const KernelCall& c) const;
  // The scan's trip counts over `q_rows` query rows and `k_rows` keys.
  ChunkTiles grid(std::int64_t q_rows, std::int64_t k_rows) const;
  // Loop control of one ring step whose scan covers `q_rows` query rows and
  // `k_rows` keys (per head): every chunk pair iterates, skipped or not.
  double loop_seconds(std::int64_t q_rows, std::int64_t k_rows) const;
  // Seconds per executed score entry (one head): matmuls and score traffic.
  double entry_seconds(int head_dim, bool backward) const;
  double matmul_flops() const { return matmul_flops_; }
  std::int64_t query_chunk() const { return q_chunk_; }
  std::int64_t key_chunk() const { return k_chunk_; }
  const ChunkScanTarget& target() const { return t_; }

 private:
  std::string kernel_;
  ChunkScanTarget t_;
  std::int64_t q_chunk_, k_chunk_;
  double matmul_flops_ = 0, hbm_ = 0;
};

}  // namespace ringsim
