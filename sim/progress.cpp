#include "sim/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ringsim::sim {

std::string duration_text(double s) {
  // Whole seconds first, so 59.6 s reads "1m00s", never "0m60s".
  const double r = std::round(std::max(0.0, s));
  if (r < 60) return fmt::format("{:.0f}s", r);
  if (r < 3600) return fmt::format("{:.0f}m{:02.0f}s", std::floor(r / 60), std::fmod(r, 60));
  return fmt::format("{:.0f}h{:02.0f}m", std::floor(r / 3600), std::floor(std::fmod(r, 3600) / 60));
}

double eta_seconds(std::uint64_t done, std::uint64_t total, double elapsed_s) {
  if (done == 0 || done >= total) return 0;
  return elapsed_s * static_cast<double>(total - done) / static_cast<double>(done);
}

std::string progress_text(const std::string& label, std::uint64_t done, std::uint64_t total,
                          double elapsed_s) {
  const double frac =
      total ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total)) : 1.0;
  const int width = 30, fill = static_cast<int>(frac * width);
  return fmt::format("{} [{}{}] {:3.0f}%  elapsed {}  ETA {}", label,
                     std::string(static_cast<std::size_t>(fill), '#'),
                     std::string(static_cast<std::size_t>(width - fill), ' '), 100 * frac,
                     duration_text(elapsed_s),
                     duration_text(eta_seconds(std::min(done, total), total, elapsed_s)));
}

bool progress_wanted(bool flag) {
  return flag || isatty(STDERR_FILENO);
}

Progress::Progress(bool enabled, std::uint64_t total, std::string label, double delay_s)
    : enabled_(enabled && total > 0),
      total_(total),
      next_check_(std::max<std::uint64_t>(1, total / 1000)),
      label_(std::move(label)),
      delay_s_(delay_s),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() {
  finish();
}

void Progress::check() {
  // Reading the clock costs ~20 ns; checking every 0.1% keeps it negligible.
  next_check_ = done_ + std::max<std::uint64_t>(1, total_ / 1000);
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < delay_s_ || std::chrono::duration<double>(now - last_draw_).count() < 0.25) return;
  last_draw_ = now;
  std::fprintf(stderr, "\r%s   ", progress_text(label_, done_, total_, elapsed).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r%*s\r", 90, "");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace ringsim::sim
