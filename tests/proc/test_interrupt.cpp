// Stop signals, owned by sim/interrupt.hpp: a guard turns the first signal
// into a request to stop and a second into the end; the handler is there only
// while a guard or a child lives and the previous disposition is put back
// after, whichever thread goes last; a host's own handler (Python's) is called
// on every signal; a child alive when the signal comes gets it too. Real
// signals, raised at this process (death tests where the process must end).
#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <thread>
#include <vector>

#include "proc/child.hpp"
#include "sim/interrupt.hpp"

namespace {

using ringsim::sim::InterruptGuard;

void (*current(int sig))(int) {
  struct sigaction sa {};
  ::sigaction(sig, nullptr, &sa);
  return sa.sa_handler;
}

std::atomic<int> g_host_calls{0};
extern "C" void host_handler(int) {
  ++g_host_calls;
}

TEST(Interrupt, GuardTurnsASignalIntoARequestAndPutsTheDefaultBack) {
  ASSERT_EQ(current(SIGTERM), SIG_DFL);
  {
    InterruptGuard guard;
    EXPECT_FALSE(ringsim::sim::interrupt_requested());
    const auto before = ringsim::sim::stop_signal_count();
    ::raise(SIGTERM);
    EXPECT_TRUE(ringsim::sim::interrupt_requested());
    EXPECT_EQ(ringsim::sim::stop_signal_count(), before + 1);
    EXPECT_EQ(ringsim::sim::last_stop_signal(), SIGTERM);
  }
  EXPECT_EQ(current(SIGTERM), SIG_DFL);
  InterruptGuard again;  // a new guard of a quiet process starts clean
  EXPECT_FALSE(ringsim::sim::interrupt_requested());
}

TEST(Interrupt, SecondSignalEndsTheProcess) {
  EXPECT_EXIT(
      {
        InterruptGuard guard;
        ::raise(SIGINT);
        ::raise(SIGINT);
        std::exit(0);  // not reached
      },
      ::testing::KilledBySignal(SIGINT), "");
}

TEST(Interrupt, HostHandlerIsCalledEveryTimeAndBackWhenTheLastThreadLeaves) {
  ::signal(SIGHUP, host_handler);
  g_host_calls = 0;
  std::atomic<int> inside{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      InterruptGuard guard;
      ++inside;
      while (!go) std::this_thread::yield();
    });
  while (inside < 4) std::this_thread::yield();
  EXPECT_NE(current(SIGHUP), host_handler);  // ours, while guards live
  ::raise(SIGHUP);
  ::raise(SIGHUP);  // a host's handler decides: the process goes on
  EXPECT_EQ(g_host_calls, 2);
  EXPECT_TRUE(ringsim::sim::interrupt_requested());
  go = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(current(SIGHUP), host_handler);
  ::signal(SIGHUP, SIG_DFL);
}

TEST(Interrupt, IgnoredSignalStaysIgnored) {
  ::signal(SIGHUP, SIG_IGN);
  {
    InterruptGuard guard;
    EXPECT_EQ(current(SIGHUP), SIG_IGN);
  }
  EXPECT_EQ(current(SIGHUP), SIG_IGN);
  ::signal(SIGHUP, SIG_DFL);
}

// A child alive when the signal comes gets it (it leads its own process
// group, so a terminal's Ctrl-C would not reach it); the guarded process
// goes on and reads the child's answer.
TEST(Interrupt, ChildAliveWhenTheSignalComesGetsIt) {
  InterruptGuard guard;
  ringsim::proc::Result r;
  std::thread job([&] {
    r = ringsim::proc::run({"sh", "-c", "trap 'exit 7' INT; echo ready; sleep 30 & wait"}, 60);
  });
  // Give the child time to start and set its trap, then Ctrl-C this process.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ::raise(SIGINT);
  job.join();
  EXPECT_EQ(r.exit_code, 7) << r.failure();
  EXPECT_TRUE(ringsim::sim::interrupt_requested());
}

TEST(Interrupt, WithoutAGuardAChildsParentEndsAsTheSignalWould) {
  EXPECT_EXIT(
      {
        std::thread job([] { ringsim::proc::run({"sleep", "30"}, 60); });
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        ::raise(SIGTERM);
        job.join();
        std::exit(0);  // not reached
      },
      ::testing::KilledBySignal(SIGTERM), "");
}

}  // namespace
