#include "models/core/cancel.hpp"

#include <atomic>

namespace ringsim {

namespace {
// Read by worker threads while the command line may set it: atomic.
std::atomic<CancelCheck> g_check{nullptr};
std::atomic<ProgressReport> g_report{nullptr};
}  // namespace

void set_cancel_check(CancelCheck check) {
  g_check.store(check);
}

void throw_if_cancelled() {
  const auto check = g_check.load();
  if (check != nullptr && check()) throw Cancelled{};
}

void set_progress_report(ProgressReport report) {
  g_report.store(report);
}

void report_progress(std::uint64_t done, std::uint64_t total) {
  const auto report = g_report.load();
  if (report != nullptr) report(done, total);
}

}  // namespace ringsim
