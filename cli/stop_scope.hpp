#pragma once
// Ctrl-C (SIGINT), SIGTERM or SIGHUP during a command whose long loops check
// for a stop (verify, profile, experiment, plan --recheck): the loops end at
// their next unit of work and the command exits 130, leaving no output half
// written (every writer commits by rename). run holds one too (its closed
// forms check at every ring step; its simulator reads the guard itself);
// infer and sweep own their guards (cli/cmd_infer.cpp, cli/cmd_sweep.cpp). Between
// units of work the commands call throw_if_cancelled (models/core/cancel.hpp);
// run_cli turns its Cancelled into exit 130.
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <utility>

#include "models/core/cancel.hpp"
#include "sim/interrupt.hpp"
#include "sim/progress.hpp"

namespace ringsim::cli {

// The one line every stopped command prints, and its exit code (130).
inline int interrupted_exit() {
  std::cerr << "ringsim: interrupted; no output was left half-written\n";
  return sim::kInterruptedExit;
}

class StopScope {
 public:
  StopScope() { set_cancel_check(&sim::interrupt_requested); }
  ~StopScope() { set_cancel_check(nullptr); }
  StopScope(const StopScope&) = delete;
  StopScope& operator=(const StopScope&) = delete;

 private:
  sim::InterruptGuard guard_;  // a second signal still ends the process at once
};

// Draws what the closed forms report (report_progress) as a bar on stderr,
// after 2 s and only where progress is wanted: a packed-documents run near
// its size guard takes seconds. A new total or a count going back means the
// next closed form began (run asks them more than once): a new bar.
class ProgressScope {
 public:
  ProgressScope(bool enabled, std::string label) {
    if (!enabled) return;
    state().label = std::move(label);
    set_progress_report(&draw);
  }
  ~ProgressScope() {
    set_progress_report(nullptr);
    state().bar.reset();
  }
  ProgressScope(const ProgressScope&) = delete;
  ProgressScope& operator=(const ProgressScope&) = delete;

 private:
  struct State {
    std::string label;
    std::optional<sim::Progress> bar;
    std::uint64_t total = 0, done = 0;
  };
  static State& state() {
    static State s;
    return s;
  }
  static void draw(std::uint64_t done, std::uint64_t total) {
    auto& s = state();
    if (!s.bar || total != s.total || done < s.done) {
      s.bar.emplace(true, total, s.label);
      s.total = total;
      s.done = 0;
    }
    s.bar->tick(done - s.done);
    s.done = done;
  }
};

}  // namespace ringsim::cli
