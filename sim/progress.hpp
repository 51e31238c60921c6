#pragma once
// Progress on stderr for long simulations (Ctrl-C as a request to stop is
// sim/interrupt.hpp). The bar reads the wall clock only to decide when to
// redraw, never to change a result.
#include <chrono>
#include <cstdint>
#include <string>

#include "sim/interrupt.hpp"  // Ctrl-C: InterruptGuard, interrupt_requested

namespace ringsim::sim {

// A bar with percentage and ETA, redrawn at most a few times a second and only
// once the run has taken `delay_s` (short runs print nothing).
class Progress {
 public:
  Progress(bool enabled, std::uint64_t total, std::string label, double delay_s = 2.0);
  ~Progress();
  void tick(std::uint64_t n = 1) {
    done_ += n;
    if (enabled_ && done_ >= next_check_) check();
  }
  void finish();  // clears the bar

 private:
  bool enabled_;
  std::uint64_t total_, done_ = 0, next_check_ = 0;
  std::string label_;
  double delay_s_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
  void check();
};

// Whether progress should be shown: --progress, or stderr is a terminal
// (piped or redirected stderr gets no bar unless asked for).
bool progress_wanted(bool flag);

// Seconds left if the rest goes at the rate so far: elapsed x (total - done) / done
// (0 before anything is done or when all is).
double eta_seconds(std::uint64_t done, std::uint64_t total, double elapsed_s);
// One line of progress, the bar's text without the carriage return:
// "LABEL [#######        ] 25%  elapsed 10s  ETA 30s" (the bar 30 wide).
std::string progress_text(const std::string& label, std::uint64_t done, std::uint64_t total,
                          double elapsed_s);
// "45s", "3m05s", "2h10m".
std::string duration_text(double s);

}  // namespace ringsim::sim
