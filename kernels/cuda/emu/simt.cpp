#include "kernels/cuda/emu/simt.hpp"

#include <ucontext.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ringsim::kernels::cuda::emu {
namespace {

enum class State { kReady, kWaitBlock, kWaitWarp, kDone };

struct Fiber {
  ucontext_t ctx{};
  std::unique_ptr<char[]> stack;
  State state = State::kReady;
  unsigned parity = 0;
  ThreadState ts;
};

constexpr std::size_t kStackBytes = 512 * 1024;  // kernels keep register arrays on it

struct Block {
  Dim3 grid, block;
  std::vector<Fiber> fibers;
  std::vector<WarpSlots> warps;
  std::vector<unsigned char> smem;
  const std::function<void()>* body = nullptr;
  ucontext_t scheduler{};
  Fiber* current = nullptr;
};

Block* g_block = nullptr;

void fiber_entry() {
  (*g_block->body)();
  g_block->current->state = State::kDone;
  // uc_link returns to the scheduler.
}

// getcontext returns twice (like setjmp), so it lives outside launch()'s loops.
void init_fiber(Fiber& f, Block& b, unsigned t, const Dim3& block_idx) {
  f.state = State::kReady;
  f.parity = 0;
  f.ts.thread_idx = {t, 0, 0};
  f.ts.block_idx = block_idx;
  getcontext(&f.ctx);
  f.ctx.uc_stack.ss_sp = f.stack.get();
  f.ctx.uc_stack.ss_size = kStackBytes;
  f.ctx.uc_link = &b.scheduler;
  makecontext(&f.ctx, fiber_entry, 0);
}

void yield_with(State s) {
  Fiber* f = g_block->current;
  f->state = s;
  swapcontext(&f->ctx, &g_block->scheduler);
}

}  // namespace

const Dim3& thread_idx() {
  return g_block->current->ts.thread_idx;
}
const Dim3& block_idx() {
  return g_block->current->ts.block_idx;
}
const Dim3& block_dim() {
  return g_block->block;
}
const Dim3& grid_dim() {
  return g_block->grid;
}
unsigned lane_id() {
  return thread_idx().x % 32;
}
unsigned char* dynamic_smem() {
  return g_block->smem.data();
}

void sync_block() {
  yield_with(State::kWaitBlock);
}
void sync_warp() {
  yield_with(State::kWaitWarp);
}

std::uint64_t (*next_slots())[8] {
  Fiber* f = g_block->current;
  const unsigned warp = f->ts.thread_idx.x / 32;
  auto* set = g_block->warps[warp].words[f->parity];
  f->parity ^= 1;
  return set;
}

void launch(Dim3 grid, Dim3 block, std::size_t dynamic_smem_bytes,
            const std::function<void()>& body) {
  if (block.y != 1 || block.z != 1 || block.x % 32 != 0)
    throw std::logic_error("emu: blocks must be 1-D and whole warps");
  Block b;
  b.grid = grid;
  b.block = block;
  b.body = &body;
  const unsigned n = block.x, nwarps = n / 32;
  b.fibers.resize(n);
  b.warps.resize(nwarps);
  for (auto& f : b.fibers) f.stack = std::make_unique<char[]>(kStackBytes);
  Block* saved = g_block;
  g_block = &b;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        // Fresh shared memory per block, filled with a pattern so that reading
        // something no thread wrote shows up as garbage rather than zeros.
        b.smem.assign(dynamic_smem_bytes, 0xA5);
        for (unsigned t = 0; t < n; ++t) init_fiber(b.fibers[t], b, t, {bx, by, bz});
        for (;;) {
          bool any_live = false;
          for (auto& f : b.fibers) {
            if (f.state != State::kReady) continue;
            b.current = &f;
            swapcontext(&b.scheduler, &f.ctx);
          }
          // Release every warp whose live lanes all wait at a warp barrier.
          bool released = false;
          unsigned waiting_block = 0, live = 0;
          for (unsigned w = 0; w < nwarps; ++w) {
            unsigned wait_warp = 0, lanes_live = 0;
            for (unsigned l = 0; l < 32; ++l) {
              const State s = b.fibers[w * 32 + l].state;
              if (s == State::kDone) continue;
              ++lanes_live;
              if (s == State::kWaitWarp) ++wait_warp;
              if (s == State::kWaitBlock) ++waiting_block;
            }
            live += lanes_live;
            if (lanes_live == 32 && wait_warp == 32) {
              for (unsigned l = 0; l < 32; ++l)
                if (b.fibers[w * 32 + l].state == State::kWaitWarp)
                  b.fibers[w * 32 + l].state = State::kReady;
              released = true;
            } else if (wait_warp > 0) {
              // Some lanes wait at a warp collective that the others are not at:
              // on hardware that is undefined behaviour or a hang.
              g_block = saved;
              throw std::logic_error("emu: divergent warp collective in warp " + std::to_string(w));
            }
          }
          any_live = live > 0;
          if (!any_live) break;
          if (released) continue;
          if (waiting_block == live) {
            for (auto& f : b.fibers)
              if (f.state == State::kWaitBlock) f.state = State::kReady;
            continue;
          }
          g_block = saved;
          throw std::logic_error("emu: threads of a block wait at different barriers");
        }
      }
  g_block = saved;
}

}  // namespace ringsim::kernels::cuda::emu
