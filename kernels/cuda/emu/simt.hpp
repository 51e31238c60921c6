#pragma once
// A CPU stand-in for a CUDA thread block, so the kernels in kernels/cuda/*.cuh can
// be compiled by the host compiler and checked on machines without a GPU.
//
// Each CUDA thread of a block runs as a fiber (ucontext) on one OS thread; blocks
// run one after another. __syncthreads and warp collectives are barriers between
// fibers; a barrier that not all live threads reach is reported as divergence
// instead of hanging. Warp collectives (shuffles, ldmatrix, mma.sync) exchange
// registers through per-warp slots; their semantics are spelled out in
// device_ops.cuh from the PTX ISA's fragment tables, independently of the kernels.
// What this cannot show: timing, races on the real machine (fibers run in a fixed
// order and cp.async completes at once), and whether the PTX tables were read right.
#include <cstddef>
#include <cstdint>
#include <functional>

namespace ringsim::kernels::cuda::emu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

struct ThreadState {
  Dim3 thread_idx, block_idx;
};

// Per-warp exchange area: each lane writes its slot, the warp meets at a barrier,
// each lane reads what it needs. Two alternating sets make one barrier enough.
struct WarpSlots {
  std::uint64_t words[2][32][8];
};

const Dim3& thread_idx();
const Dim3& block_idx();
const Dim3& block_dim();
const Dim3& grid_dim();
unsigned lane_id();

void sync_block();
void sync_warp();
// The slot set this lane's warp uses for its next collective (flips on each call,
// so a collective is: write own slot, sync_warp(), read others' slots).
std::uint64_t (*next_slots())[8];

unsigned char* dynamic_smem();

// Runs body once per CUDA thread of every block. Throws std::logic_error on
// divergent barriers.
void launch(Dim3 grid, Dim3 block, std::size_t dynamic_smem_bytes,
            const std::function<void()>& body);

}  // namespace ringsim::kernels::cuda::emu
