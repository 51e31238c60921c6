// ringsim: the command line. Everything lives in cli/*; main only forwards.
#include <optional>

#include "cli/command.hpp"
#include "cli/stop_scope.hpp"
#include "proc/child.hpp"
#include "sim/interrupt.hpp"

namespace {
// Before any library's initializer: a stop signal while SimGrid's libraries
// load is noted, not fatal (sim/interrupt.hpp). Only an executable's
// .preinit_array runs that early, so the entry lives here.
[[gnu::section(".preinit_array"),
  gnu::used]] void (*const g_preinit)(int, char**, char**) = ringsim::sim::note_early_stop_signals;
}  // namespace

int main(int argc, char** argv) {
  // A point, a re-check or a GUI run whose parent is killed outright stops too.
  ringsim::proc::stop_with_parent();
  // From the start, not only from a command's own stop scope: a stop signal
  // while the flags are parsed is kept for the command's first check, or
  // reported when the command returns; a second signal still ends at once.
  std::optional<ringsim::sim::InterruptGuard> from_the_start;
  ringsim::sim::adopt_early_stop_signals(from_the_start);
  const int code = ringsim::cli::run_cli(argc, argv);
  if (code != ringsim::sim::kInterruptedExit && ringsim::sim::interrupt_requested())
    return ringsim::cli::interrupted_exit();
  return code;
}
