// ringsim: the command line. Everything lives in cli/*; main only forwards.
#include <signal.h>

#include <atomic>
#include <optional>

#include "cli/command.hpp"
#include "cli/stop_scope.hpp"
#include "proc/child.hpp"
#include "sim/interrupt.hpp"

namespace {

// A stop signal before main: loading SimGrid's libraries and running their
// static initializers takes tens of milliseconds, and a signal then killed
// the process without a word. From .preinit_array (before any library's
// initializer) it is only noted; main hands it to the interrupt guard.
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
std::atomic<int> g_early_signal{0};
struct sigaction g_before[3];

extern "C" void note_early_signal(int sig) {
  g_early_signal.store(sig);
}

void note_early_signals(int, char**, char**) {
  for (int i = 0; i < 3; ++i) {
    ::sigaction(kStopSignals[i], nullptr, &g_before[i]);
    if (!(g_before[i].sa_flags & SA_SIGINFO) && g_before[i].sa_handler == SIG_IGN)
      continue;  // ignored (nohup): stays ignored
    struct sigaction sa {};
    sa.sa_handler = note_early_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(kStopSignals[i], &sa, nullptr);
  }
}

[[gnu::section(".preinit_array"), gnu::used]] void (*const g_preinit)(int, char**,
                                                                      char**) = note_early_signals;

// The dispositions as they were before us go back (the guard saves and
// restores them), the guard takes over with the signals blocked, and a signal
// noted before main becomes the guard's request to stop.
void take_over(std::optional<ringsim::sim::InterruptGuard>& guard) {
  sigset_t stops, old;
  sigemptyset(&stops);
  for (const int s : kStopSignals) sigaddset(&stops, s);
  ::pthread_sigmask(SIG_BLOCK, &stops, &old);
  for (int i = 0; i < 3; ++i) ::sigaction(kStopSignals[i], &g_before[i], nullptr);
  guard.emplace();
  if (g_early_signal.load() != 0) ringsim::sim::set_interrupt_requested(true);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  // A point, a re-check or a GUI run whose parent is killed outright stops too.
  ringsim::proc::stop_with_parent();
  // From the start, not only from a command's own stop scope: a stop signal
  // while the flags are parsed is kept for the command's first check, or
  // reported when the command returns; a second signal still ends at once.
  std::optional<ringsim::sim::InterruptGuard> from_the_start;
  take_over(from_the_start);
  const int code = ringsim::cli::run_cli(argc, argv);
  if (code != ringsim::sim::kInterruptedExit && ringsim::sim::interrupt_requested())
    return ringsim::cli::interrupted_exit();
  return code;
}
