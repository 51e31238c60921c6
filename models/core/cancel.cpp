#include "models/core/cancel.hpp"

#include <atomic>

namespace ringsim {

namespace {
// Read by worker threads while the command line may set it: atomic.
std::atomic<CancelCheck> g_check{nullptr};
}  // namespace

void set_cancel_check(CancelCheck check) {
  g_check.store(check);
}

void throw_if_cancelled() {
  const auto check = g_check.load();
  if (check != nullptr && check()) throw Cancelled{};
}

}  // namespace ringsim
