#include "sim/interrupt.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <mutex>

namespace ringsim::sim {

namespace {

// Ctrl-C, `kill` (SIGTERM) and a closed terminal (SIGHUP) all ask the work to
// stop cleanly: no partial output, temporary files removed, journals whole.
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kCount = 3;

// Read by the handler: lock-free atomics and data written only while no
// handler of ours is installed.
std::atomic<int> g_guards{0}, g_forwards{0};
std::atomic<bool> g_interrupt{false};
std::atomic<std::uint64_t> g_signals{0};
std::atomic<int> g_last{0};
std::atomic<void (*)(int)> g_forward{nullptr};
struct sigaction g_previous[kCount];
bool g_installed[kCount] = {false, false, false};

// Holders come and go under this lock (never taken in the handler).
std::mutex g_mutex;
int g_holders = 0;

int slot(int sig) {
  for (int i = 0; i < kCount; ++i)
    if (kStopSignals[i] == sig) return i;
  return -1;
}

bool is_function(const struct sigaction& sa) {
  if (sa.sa_flags & SA_SIGINFO) return sa.sa_sigaction != nullptr;
  return sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN;
}

[[noreturn]] void end_as_signal(int sig) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  // Pending until the handler returns, then the default action ends us.
  ::raise(sig);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  ::_exit(128 + sig);  // not reached
}

extern "C" void on_stop_signal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const int i = slot(sig);
  if (auto* forward = g_forward.load(); forward && g_forwards.load() > 0) forward(sig);
  const bool second = g_interrupt.exchange(true);
  g_last.store(sig);
  g_signals.fetch_add(1);
  if (i >= 0 && is_function(g_previous[i])) {
    // The host's own handler (Python's): it is told every time and decides.
    if (g_previous[i].sa_flags & SA_SIGINFO)
      g_previous[i].sa_sigaction(sig, info, context);
    else
      g_previous[i].sa_handler(sig);
  } else if (g_guards.load() == 0 || second) {
    // Children only (no guard asked to stop cleanly), or a second signal.
    end_as_signal(sig);
  }
  errno = saved_errno;
}

void install(int i) {
  struct sigaction sa {};
  sa.sa_sigaction = on_stop_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  ::sigaction(kStopSignals[i], &sa, nullptr);
}

void acquire(std::atomic<int>& kind) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (&kind == &g_guards && g_guards.load() == 0 && g_holders == 0) g_interrupt.store(false);
  ++kind;
  if (g_holders++ > 0) return;
  for (int i = 0; i < kCount; ++i) {
    ::sigaction(kStopSignals[i], nullptr, &g_previous[i]);
    // A signal that was ignored (nohup) stays ignored.
    g_installed[i] =
        !(!(g_previous[i].sa_flags & SA_SIGINFO) && g_previous[i].sa_handler == SIG_IGN);
    if (g_installed[i]) install(i);
  }
}

void release(std::atomic<int>& kind) {
  std::lock_guard<std::mutex> lock(g_mutex);
  --kind;
  if (--g_holders > 0) return;
  for (int i = 0; i < kCount; ++i)
    if (g_installed[i]) ::sigaction(kStopSignals[i], &g_previous[i], nullptr);
}

}  // namespace

InterruptGuard::InterruptGuard() {
  acquire(g_guards);
}
InterruptGuard::~InterruptGuard() {
  release(g_guards);
}
ForwardScope::ForwardScope() {
  acquire(g_forwards);
}
ForwardScope::~ForwardScope() {
  release(g_forwards);
}

void set_forwarder(void (*forward)(int)) {
  g_forward.store(forward);
}

bool interrupt_requested() {
  return g_interrupt.load();
}
std::uint64_t stop_signal_count() {
  return g_signals.load();
}
int last_stop_signal() {
  return g_last.load();
}
void set_interrupt_requested(bool on) {
  g_interrupt.store(on);
}

void reinstall_interrupt_handler() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_holders == 0) return;
  for (int i = 0; i < kCount; ++i) {
    if (g_installed[i]) {
      install(i);
    } else {
      // Ignored when we started (nohup, a shell's background job): SimGrid's
      // engine put its own handler there (which exits 1 without a word on
      // SIGINT); the signal goes back to being ignored, as the caller asked.
      struct sigaction ign {};
      ign.sa_handler = SIG_IGN;
      sigemptyset(&ign.sa_mask);
      ::sigaction(kStopSignals[i], &ign, nullptr);
    }
  }
}

namespace {
// Written before main (no guard exists yet), read once by main.
std::atomic<int> g_early{0};
struct sigaction g_before_main[kCount];

extern "C" void note_early_signal(int sig) {
  g_early.store(sig);
}
}  // namespace

void note_early_stop_signals(int, char**, char**) {
  for (int i = 0; i < kCount; ++i) {
    ::sigaction(kStopSignals[i], nullptr, &g_before_main[i]);
    const auto& was = g_before_main[i];
    if (!(was.sa_flags & SA_SIGINFO) && was.sa_handler == SIG_IGN) continue;  // nohup: ignored
    struct sigaction sa {};
    sa.sa_handler = note_early_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(kStopSignals[i], &sa, nullptr);
  }
}

void adopt_early_stop_signals(std::optional<InterruptGuard>& guard) {
  sigset_t stops, old;
  sigemptyset(&stops);
  for (const int s : kStopSignals) sigaddset(&stops, s);
  ::pthread_sigmask(SIG_BLOCK, &stops, &old);
  for (int i = 0; i < kCount; ++i) ::sigaction(kStopSignals[i], &g_before_main[i], nullptr);
  guard.emplace();  // saves the dispositions just put back, as any first guard does
  if (g_early.load() != 0) g_interrupt.store(true);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace ringsim::sim
