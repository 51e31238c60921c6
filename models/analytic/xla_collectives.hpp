#pragma once
// XLA's collectives on a TPU's ICI torus, as the closed forms and the planner
// charge them when Hardware::xla_collectives is set (docs/models.md, "XLA
// collectives on the TPU torus"). Costs follow How to Scale Your Model
// (Austin et al., Google DeepMind 2025), Part 3 "Sharded Matrices":
//
//   collective-permute (ppermute to the ring neighbour): one link, one
//     direction: hop latency + bytes / W, W = one link's bandwidth per direction.
//   all-gather / reduce-scatter of one block per device over a group laid out
//     on the torus as dims n_i: max(latency x hops, (N-1) block / (W x links)),
//     links = 2 per axis with wrap-around (a bidirectional ring), 1 without or
//     on an axis of 2; hops = n_i / 2 per axis with wrap-around, n_i - 1 without.
//   all-to-all of b bytes per device (b / N to every member): axes run at once,
//     axis i's busiest link carries b x S(n_i) / (2 n_i) bytes per direction with
//     wrap-around (S(n) = sum of ring distances from one member, n^2 / 4 for even
//     n: a quarter of an all-gather on a bidirectional ring, as the book says),
//     b x floor(n_i/2) ceil(n_i/2) / n_i without (the cut in the middle).
//
// How XLA schedules them against the attention (the TPU programs' own order):
// the ring's collective-permute is asynchronous and overlaps the next chunk's
// compute; the all-gather, reduce-scatter and all-to-all feed or consume the
// attention call itself, so they sit on its critical path.
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/workload.hpp"

namespace ringsim {

// The torus a group of `group` consecutive devices spans and its links.
struct XlaIci {
  double link_bw = 0;  // bytes/s, one link, one direction
  double hop_lat = 0;  // seconds per link hop
  std::vector<int> dims;
  bool wraparound = true;
};
XlaIci xla_ici(const Hardware& hw, std::int64_t group);
// Whether the planner times CP collectives as XLA's: a torus of ICI links with
// a described link bandwidth, and no --bandwidth/--latency override.
bool xla_collectives_apply(const Hardware& hw);

double xla_permute_seconds(std::uint64_t bytes, const XlaIci& ici, int hops = 1);
double xla_all_gather_seconds(std::uint64_t block_bytes, const XlaIci& ici);  // = reduce-scatter
double xla_all_to_all_seconds(std::uint64_t bytes_per_device, const XlaIci& ici);

// One line on how a collective is timed and scheduled (the plan's explain).
std::string xla_schedule_text();

}  // namespace ringsim
