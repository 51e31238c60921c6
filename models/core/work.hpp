#pragma once
// Exact work and traffic of each device at each step, per layout and mask.
// These counts are the contract between the analytic model, the SimGrid model
// and the kernels' ring emulator: all three must agree to the pair.
//
// Unit of work: "score entries" = (query, key) pairs that survive the mask,
// summed over the device's local query heads. FLOPs = 4 * head_dim * entries
// forward (QK^T 2d + PV 2d per pair, Ring Attention sec. 3); backward is 2.5x
// forward (FlashAttention-2: five block GEMMs in backward vs two in forward).
#include <cstdint>
#include <vector>

#include "models/core/tokens.hpp"
#include "models/core/workload.hpp"

namespace ringsim {

// Which tokens device `i` holds: device_tokens (models/core/tokens.hpp).

// Causal-masked (or full) pairs between the queries device i holds and the keys
// device j holds, for ring / striped / zigzag sharding of n devices x c tokens.
std::uint64_t shard_pairs(Layout layout, std::int64_t n, std::int64_t c, bool causal,
                          std::int64_t i, std::int64_t j);

// Number of compute steps: n for ring/striped/zigzag, ring degree for hybrid,
// 1 for ulysses and allgather (one local attention after the exchange).
std::int64_t num_steps(const Workload& w);

// Which device's K/V block (ring/striped/zigzag) or ring group (hybrid) device
// `device` works on at `step`: (own index - step) mod ring size. -1 otherwise.
std::int64_t kv_source(const Workload& w, std::int64_t device, std::int64_t step);

// Score entries device `device` computes at `step` (forward).
std::uint64_t step_entries(const Workload& w, std::int64_t device, std::int64_t step);

// Of those, the entries in chunks cut by the causal diagonal (the kernel masks
// inside them: profiles time them as "causal_diagonal"); the rest are chunks
// every pair of which is visible, which run at the full-block rate. Ring: the
// own block; zigzag: its chunks against themselves; striped: every step (each
// is a staircase); 0 without a causal mask.
std::uint64_t step_diagonal_entries(const Workload& w, std::int64_t device, std::int64_t step);

// Total over all devices and steps; equals heads * (S(S+1)/2 or S^2).
std::uint64_t total_entries(const Workload& w);

// Elements (scalars) one device sends to its ring neighbour per step:
// forward K and V of its block, backward K, V, dK, dV. 0 for ulysses/allgather.
std::uint64_t ring_elements_per_step(const Workload& w, bool backward);

// Elements of one K (or V) block for one device: block * local kv heads * head_dim
// (hybrid: group block U*c with kv_heads/U heads, which is the same count).
std::uint64_t kv_block_elements(const Workload& w);

}  // namespace ringsim
