// The `ringsim` program's operator new and delete: small blocks are kept on
// per-thread free lists, one per 16-byte size class, and handed out again
// without asking malloc.
//
// Why: a simulation allocates and frees several SimGrid objects per device
// step (the transfer's s4u and kernel activities, the network action, its
// solver variable, the compute's sleep), thousands of each in flight at once.
// glibc's per-thread cache keeps only seven blocks of a size, so most of them
// went through malloc's bins: about a tenth of the CPU at 1,024 devices, and
// `GLIBC_TUNABLES=glibc.malloc.tcache_count=65535` made the same runs 15-18%
// cheaper (docs/sim.md, "Speed"). This does the same inside the program.
// Blocks go back to a list, never to malloc: memory stays at the peak each
// size reached, as it would under that setting.
//
// Sanitizer builds keep the library's operators (they track every block).
#ifndef RINGSIM_SANITIZER_BUILD

#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

// Every block has a 16-byte header holding its size class (0: a large block
// from malloc, freed to it), so any delete, sized or not, finds its list;
// 16 bytes keep the payload as aligned as malloc's.
constexpr std::size_t kHeader = 16, kGranule = 16, kClasses = 33;  // up to 512 bytes

struct FreeBlock {
  FreeBlock* next;
};
thread_local FreeBlock* t_free[kClasses] = {};

void* allocate(std::size_t n) noexcept {
  const std::size_t c = n == 0 ? 1 : (n + kGranule - 1) / kGranule;
  if (c < kClasses) {
    if (FreeBlock* b = t_free[c]) {
      t_free[c] = b->next;
      return b;
    }
  }
  const std::size_t bytes = kHeader + (c < kClasses ? c * kGranule : n);
  auto* raw = static_cast<unsigned char*>(std::malloc(bytes));
  if (!raw) return nullptr;
  *reinterpret_cast<std::size_t*>(raw) = c < kClasses ? c : 0;
  return raw + kHeader;
}

void release(void* p) noexcept {
  if (!p) return;
  auto* raw = static_cast<unsigned char*>(p) - kHeader;
  const std::size_t c = *reinterpret_cast<std::size_t*>(raw);
  if (c == 0) {
    std::free(raw);
    return;
  }
  auto* b = static_cast<FreeBlock*>(p);
  b->next = t_free[c];
  t_free[c] = b;
}

void* allocate_or_throw(std::size_t n) {
  for (;;) {
    if (void* p = allocate(n)) return p;
    std::new_handler h = std::get_new_handler();
    if (!h) throw std::bad_alloc();
    h();
  }
}

}  // namespace

void* operator new(std::size_t n) {
  return allocate_or_throw(n);
}
void* operator new[](std::size_t n) {
  return allocate_or_throw(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return allocate(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return allocate(n);
}
void operator delete(void* p) noexcept {
  release(p);
}
void operator delete[](void* p) noexcept {
  release(p);
}
void operator delete(void* p, std::size_t) noexcept {
  release(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  release(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  release(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  release(p);
}

#endif  // RINGSIM_SANITIZER_BUILD
