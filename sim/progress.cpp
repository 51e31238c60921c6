#include "sim/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>

namespace ringsim::sim {

namespace {
volatile std::sig_atomic_t g_interrupt = 0;
bool g_guard_alive = false;
// Ctrl-C, `kill` (SIGTERM) and a closed terminal (SIGHUP) all ask the run to
// stop cleanly: no partial output, temporary files removed.
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
void (*g_previous[3])(int) = {SIG_DFL, SIG_DFL, SIG_DFL};

extern "C" void on_stop_signal(int sig) {
  g_interrupt = 1;
  std::signal(sig, SIG_DFL);  // a second one ends the process at once
}

std::string duration(double s) {
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600) return fmt::format("{:.0f}m{:02.0f}s", std::floor(s / 60), std::fmod(s, 60));
  return fmt::format("{:.0f}h{:02.0f}m", std::floor(s / 3600), std::fmod(s / 60, 60));
}
}  // namespace

InterruptGuard::InterruptGuard() {
  g_interrupt = 0;
  for (int i = 0; i < 3; ++i) g_previous[i] = std::signal(kStopSignals[i], on_stop_signal);
  g_guard_alive = true;
}

InterruptGuard::~InterruptGuard() {
  g_guard_alive = false;
  for (int i = 0; i < 3; ++i)
    std::signal(kStopSignals[i], g_previous[i] == SIG_ERR ? SIG_DFL : g_previous[i]);
}

void reinstall_interrupt_handler() {
  if (!g_guard_alive || g_interrupt) return;
  for (int sig : kStopSignals) std::signal(sig, on_stop_signal);
}

bool interrupt_requested() {
  return g_interrupt != 0;
}
void set_interrupt_requested(bool on) {
  g_interrupt = on ? 1 : 0;
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
  const double frac = std::min(1.0, static_cast<double>(done_) / static_cast<double>(total_));
  const int width = 30, fill = static_cast<int>(frac * width);
  const double eta = frac > 0 ? elapsed * (1 - frac) / frac : 0;
  std::fprintf(stderr, "\r%s [%s%s] %3.0f%%  elapsed %s  ETA %s   ", label_.c_str(),
               std::string(static_cast<std::size_t>(fill), '#').c_str(),
               std::string(static_cast<std::size_t>(width - fill), ' ').c_str(), 100 * frac,
               duration(elapsed).c_str(), duration(eta).c_str());
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
