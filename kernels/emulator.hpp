#pragma once
// Ring emulator: N virtual devices in one process, each running the real
// blockwise kernels on its own shard, passing K/V blocks (and, backward,
// dK/dV) exactly as the layout prescribes. Sharding and step order come from
// models/core/work.hpp (device_tokens, kv_source, num_steps), the contract shared
// with the analytic and SimGrid models; the emulator records the work the
// kernels actually did at every step, so tests can prove those models count
// the same pairs and elements.
//
// Layouts (models/core/workload.hpp):
//   ring, striped, zigzag  one device per ring position; N steps; after each
//                          step but the last a device sends its K/V block on.
//   ulysses                all-to-all inside the whole group: every device
//                          holds every token of heads/N query heads (kv_heads/N
//                          KV heads), one local attention, all-to-all back.
//   allgather              queries sharded as zigzag chunks (Llama 3 sec.
//                          3.3.2); K/V all-gathered, one local attention;
//                          backward reduce-scatters dK/dV.
//   hybrid                 Ulysses inside groups of U consecutive devices, then
//                          a zigzag ring over the R = N/U groups (block U*c).
// Backward passes K, V, dK, dV along the ring; after the last step dK/dV make
// one more hop home to the device that owns them.
#include <cstdint>
#include <vector>

#include "kernels/blockwise.hpp"
#include "models/core/workload.hpp"

namespace ringsim::kernels {

// The whole problem, token-major: q and d_o [S, heads, dim], k and v
// [S, kv_heads, dim], S = devices * block. d_o is needed for backward only.
struct AttnInputs {
  std::vector<double> q, k, v, d_o;
};

struct StepWork {
  std::int64_t kv_source =
      -1;  // device (hybrid: ring group) whose K/V block was used; -1 without a ring
  std::uint64_t entries =
      0;  // unmasked (query, key) pairs over local query heads, counted by the kernel
  std::uint64_t sent = 0;  // ring elements this device sent its neighbour after this step
  std::int64_t q_rows = 0, k_cols = 0;  // the score block this step formed (queries x keys)
};

struct PassWork {
  std::vector<std::vector<StepWork>> steps;    // [device][step]
  std::vector<std::uint64_t> collective_sent;  // per device: all-to-all, all-gather, reduce-scatter
  std::vector<std::uint64_t> home_sent;        // per device, backward: dK/dV of the hop home
};

struct EmulatorResult {
  std::vector<double> o, lse;                   // [S, heads, dim], [S, heads]
  std::vector<double> dq, dk, dv;               // backward only; shapes of q, k, v
  PassWork fwd, bwd;                            // bwd empty unless backward ran
  std::int64_t max_q_rows = 0, max_k_cols = 0;  // largest score block one device formed in a step
};

// Throws InputError (naming the flag) when the workload breaks a layout's
// constraints: zigzag/allgather need an even block, ulysses needs the devices
// to divide the KV heads, hybrid needs U to divide devices and KV heads.
void check_emulation(const Workload& w);

// Runs the forward pass (and the backward pass when `backward`) of w.layout on
// w.devices virtual devices, computing in T (float or double). The causal flag
// comes from w; the tile sizes from `kernel`.
template <typename T>
EmulatorResult emulate(const Workload& w, const AttnInputs& in, bool backward,
                       const BlockOpts& kernel = {});

}  // namespace ringsim::kernels
