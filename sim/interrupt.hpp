#pragma once
// Stop signals (SIGINT, SIGTERM, SIGHUP) for the whole process, owned here
// alone. One handler serves two kinds of holders and is installed only while
// one of them is alive; when the last one goes, whatever was installed before
// the first one is put back (the default action, or an embedding
// interpreter's own handler: Python's, so no Ctrl-C after a call kills it).
//
// - InterruptGuard (a run, a sweep, a Python call): a stop signal asks the
//   work to stop cleanly (interrupt_requested()); a second one ends the
//   process as the signal would.
// - ForwardScope (proc::run while a child is alive): the signal is first
//   passed on to the children (set_forwarder), which lead their own process
//   groups and would not see a terminal's Ctrl-C; with no guard alive the
//   process then ends as the signal would.
//
// A handler that was installed before the first holder (a function, not the
// default action) is called on every stop signal after the above, and the
// process is never ended by us then: the host decides (Python raises
// KeyboardInterrupt). Holders nest and may live in several threads at once.
#include <cstdint>
#include <optional>

namespace ringsim::sim {

// The exit code of a command stopped by a stop signal (128 + SIGINT, as
// shells report it), whichever command and guard stopped it.
inline constexpr int kInterruptedExit = 130;

class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
};

class ForwardScope {
 public:
  ForwardScope();
  ~ForwardScope();
  ForwardScope(const ForwardScope&) = delete;
  ForwardScope& operator=(const ForwardScope&) = delete;
};

// The function that passes a signal on to the children; it runs inside the
// signal handler, so it may only make async-signal-safe calls (kill).
void set_forwarder(void (*forward)(int sig));

// Set by a stop signal while a holder is alive; cleared when the first guard
// of a quiet process starts.
bool interrupt_requested();
// How many stop signals have arrived in this process, and the last one (0:
// none): a caller compares counts to learn whether its own work was hit.
std::uint64_t stop_signal_count();
int last_stop_signal();
// SimGrid's engine installs its own SIGINT handler (print and exit(1)); call
// after creating the engine to put ours back while a holder is alive, and to
// leave a signal that was ignored when the holder came (nohup) ignored.
void reinstall_interrupt_handler();
// For tests: behave as if SIGINT had arrived (or clear it).
void set_interrupt_requested(bool on);

// A stop signal before main: loading SimGrid's libraries and running their
// static initializers takes tens of milliseconds, and a signal then killed the
// process without a word. A program points its .preinit_array at
// note_early_stop_signals (before any library's initializer; cli/main.cpp):
// a stop signal is then only noted, and an ignored one stays ignored. First
// thing in main, adopt_early_stop_signals puts the dispositions from before
// back, emplaces `guard` with the signals blocked, and turns a noted signal
// into its request to stop.
void note_early_stop_signals(int argc, char** argv, char** envp);
void adopt_early_stop_signals(std::optional<InterruptGuard>& guard);

}  // namespace ringsim::sim
