#pragma once
// Progress on stderr for long simulations, and Ctrl-C as a request to stop.
// Neither touches the simulation's results: the bar reads the wall clock only
// to decide when to redraw, and an interrupt makes the run stop and report
// itself interrupted instead of writing anything.
#include <chrono>
#include <cstdint>
#include <string>

namespace ringsim::sim {

// While alive, SIGINT, SIGTERM and SIGHUP set a flag instead of killing the
// process; a second one kills it (the default action is restored after the first).
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
};
bool interrupt_requested();
// SimGrid's engine installs its own SIGINT handler (print and exit(1)); call
// after creating the engine to put ours back while a guard is alive.
void reinstall_interrupt_handler();
// For tests: behave as if SIGINT had arrived (or clear it).
void set_interrupt_requested(bool on);

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

// Whether progress should be shown: --progress, or stderr is a terminal.
bool progress_wanted(bool flag);

}  // namespace ringsim::sim
