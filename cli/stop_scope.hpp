#pragma once
// Ctrl-C (SIGINT), SIGTERM or SIGHUP during a command whose long loops check
// for a stop (verify, profile, experiment, plan --recheck): the loops end at
// their next unit of work and the command exits 130, leaving no output half
// written (every writer commits by rename). run holds one too (its closed
// forms check at every ring step; its simulator reads the guard itself);
// infer and sweep own their guards (cli/cmd_infer.cpp, cli/cmd_sweep.cpp). Between
// units of work the commands call throw_if_cancelled (models/core/cancel.hpp);
// run_cli turns its Cancelled into exit 130.
#include <iostream>

#include "models/core/cancel.hpp"
#include "sim/interrupt.hpp"

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

}  // namespace ringsim::cli
