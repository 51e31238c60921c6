#include "proc/child.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "sim/interrupt.hpp"

extern char** environ;

namespace ringsim::proc {

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kParentPidVar = "RINGSIM_PARENT_PID";

// Children alive right now, for the signal handler: a fixed table of atomics,
// since a handler may only touch lock-free state.
constexpr std::size_t kMaxLive = 256;
std::array<std::atomic<pid_t>, kMaxLive> g_live{};

// Passes a stop signal on to every child alive (its whole process group);
// called by the one stop-signal handler (sim/interrupt.hpp), so only kill().
void forward_to_children(int sig) {
  for (auto& slot : g_live) {
    const pid_t p = slot.load();
    if (p > 0) ::kill(-p, sig);
  }
}

std::size_t track(pid_t pid) {
  for (std::size_t i = 0; i < kMaxLive; ++i) {
    pid_t expected = 0;
    if (g_live[i].compare_exchange_strong(expected, pid)) return i;
  }
  return kMaxLive;  // table full: the child simply is not forwarded to
}

void untrack(std::size_t slot) {
  if (slot < kMaxLive) g_live[slot].store(0);
}

struct Pipe {
  int fd[2] = {-1, -1};
  bool open() { return ::pipe2(fd, O_CLOEXEC) == 0; }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
  ~Pipe() {
    close_end(0);
    close_end(1);
  }
};

// This environment with `extra` entries added, replacing those with the same key.
std::vector<std::string> merged_env(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const auto key = kv.substr(0, kv.find('=') + 1);
    const bool replaced = std::any_of(extra.begin(), extra.end(),
                                      [&](const std::string& x) { return x.rfind(key, 0) == 0; });
    if (!replaced) env.push_back(kv);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

double seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
}

}  // namespace

void stop_with_parent() {
  const char* v = std::getenv(kParentPidVar);
  if (!v) return;
  const long parent = std::strtol(v, nullptr, 10);
  // Not passed on: a grandchild (mpirun's ranks) has another parent.
  ::unsetenv(kParentPidVar);
  // SIGTERM, not SIGKILL: the child stops as on a `kill` (no partial files).
  if (parent > 0 && ::getppid() == parent) ::prctl(PR_SET_PDEATHSIG, SIGTERM);
}

std::string Result::failure() const {
  if (!error.empty()) return error;
  if (timed_out) return "timed out";
  if (signal != 0) return "killed by signal " + std::to_string(signal);
  if (exit_code != 0) {
    const auto line = error_line(err);
    return "exit " + std::to_string(exit_code) + ": " + (line.empty() ? "(no message)" : line);
  }
  return {};
}

Result run(const Command& c) {
  Result r;
  r.command = shell_line(c.argv);
  if (c.argv.empty()) {
    r.error = "empty command";
    return r;
  }
  static std::once_flag registered;
  std::call_once(registered, [] { sim::set_forwarder(forward_to_children); });
  // While this child lives, SIGINT/SIGTERM/SIGHUP reach it too; what this
  // process then does is its own guard's (or the default) business.
  sim::ForwardScope forwarding;
  Pipe out, err;
  if (!out.open() || !err.open()) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out.fd[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, err.fd[1], STDERR_FILENO);
  if (!c.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, c.cwd.c_str());
  // Its own process group: a terminal's Ctrl-C reaches this process only,
  // which passes it on once (a child that counts SIGINTs sees one), and a
  // deadline stops the child's own children too.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);
  // A ringsim child ends with this process even if it is killed outright
  // (stop_with_parent); other programs ignore the variable.
  auto extra = c.env;
  extra.push_back(fmt::format("{}={}", kParentPidVar, static_cast<long>(::getpid())));
  const auto env = merged_env(extra);
  std::vector<char*> args, envp;
  for (const auto& a : c.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  // Signals that would forward to this child must wait until it is tracked;
  // the child starts with the mask this thread had before (exec itself puts
  // caught signals back to their default action).
  sigset_t block, old;
  sigemptyset(&block);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  posix_spawnattr_setsigmask(&attr, &old);
  pid_t pid = -1;
  const auto start = Clock::now();
  const auto signals_before = sim::stop_signal_count();
  const int rc = ::posix_spawnp(&pid, args[0], &fa, &attr, args.data(), envp.data());
  const std::size_t slot = rc == 0 ? track(pid) : kMaxLive;
  // A stop signal another thread took while this child was not yet tracked
  // is passed on now, so no child misses the Ctrl-C that stopped its siblings.
  if (rc == 0 && sim::stop_signal_count() != signals_before) ::kill(-pid, sim::last_stop_signal());
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  out.close_end(1);
  err.close_end(1);
  if (rc != 0) {
    r.error = "cannot start " + c.argv[0] + ": " + std::strerror(rc);
    return r;
  }
  r.pid = pid;

  const bool deadline_set = c.timeout_s > 0;
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(c.timeout_s));
  const auto kill_at = deadline + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(c.kill_grace_s));
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  bool killed = false;
  // Once the child has exited, what it left running (a background process
  // holding the pipes) gets a moment to finish writing, then is stopped: a
  // child's own processes never outlive it.
  std::optional<Clock::time_point> exited;
  char buf[65536];
  while (open_fds > 0) {
    const auto now = Clock::now();
    if (deadline_set && !exited) {
      if (!r.timed_out && now >= deadline) {
        r.timed_out = true;
        ::kill(-pid, c.stop_signal);
      }
      if (r.timed_out && !killed && now >= kill_at) {
        ::kill(-pid, SIGKILL);
        killed = true;
      }
    }
    if (!exited) {
      siginfo_t info{};
      // WNOWAIT: not reaped yet, so its process group id cannot be reused.
      if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid)
        exited = now;
    }
    if (exited && now - *exited > std::chrono::milliseconds(500)) break;
    const int n = ::poll(fds, 2, 100);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  if (exited) ::kill(-pid, SIGKILL);  // whatever of its group is left
  int status = 0;
  rusage ru{};
  while (::wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  untrack(slot);
  r.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  r.cpu_s = seconds(ru.ru_utime) + seconds(ru.ru_stime);
  r.max_rss_bytes = 1024.0 * static_cast<double>(ru.ru_maxrss);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  if (r.timed_out) r.error = fmt::format("timed out after {:g} s", c.timeout_s);
  return r;
}

Result run(std::vector<std::string> argv, double timeout_s) {
  Command c;
  c.argv = std::move(argv);
  c.timeout_s = timeout_s;
  return run(c);
}

std::vector<Result> run_many(const std::vector<Command>& commands, int jobs,
                             const std::function<void()>& on_done) {
  std::vector<Result> results(commands.size());
  std::atomic<std::size_t> next{0};
  std::mutex done_mutex;
  // A stop signal during the batch (passed on to the children running) also
  // stops the ones not started yet: Ctrl-C ends the batch, not one child.
  const auto signals_before = sim::stop_signal_count();
  auto worker = [&] {
    for (std::size_t i = next++; i < commands.size(); i = next++) {
      if (sim::stop_signal_count() != signals_before) {
        results[i].error = "not started: stopped by a signal";
        results[i].command = shell_line(commands[i].argv);
        continue;
      }
      results[i] = run(commands[i]);
      if (on_done) {
        const std::lock_guard<std::mutex> lock(done_mutex);
        on_done();
      }
    }
  };
  const int n = std::max(1, std::min<int>(jobs, static_cast<int>(commands.size())));
  std::vector<std::thread> threads;
  for (int t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  return results;
}

std::string self_exe() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

namespace {
bool executable(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && executable(d + "/" + name)) return d + "/" + name;
  return {};
}
}  // namespace

std::string sibling_exe(const std::string& name) {
  const auto self = self_exe();
  if (self.empty()) return {};
  const auto p = (std::filesystem::path(self).parent_path() / name).string();
  return executable(p) ? p : std::string();
}

std::string ringsim_exe(std::string* why) {
  if (const char* env = std::getenv("RINGSIM_BIN"); env && *env) {
    // An explicit choice is final: falling back would run another ringsim.
    if (executable(env)) return env;
    if (why) *why = std::string("$RINGSIM_BIN=") + env + " is not an executable file";
    return {};
  }
  const auto self = self_exe();
  if (!self.empty() && std::filesystem::path(self).filename() == "ringsim") return self;
  if (auto s = sibling_exe("ringsim"); !s.empty()) return s;
  if (auto p = on_path("ringsim"); !p.empty()) return p;
  if (why) *why = "no ringsim next to " + (self.empty() ? "this program" : self) + " or on PATH";
  return {};
}

std::string shell_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& a : argv) {
    if (!line.empty()) line += ' ';
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789-_./=:,+@%") == std::string::npos;
    if (plain) {
      line += a;
    } else {
      line += '\'';
      for (char ch : a) line += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
      line += '\'';
    }
  }
  return line;
}

std::string error_line(const std::string& err) {
  std::istringstream in(err);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find("error:") != std::string::npos) return line;
    if (line.find_first_not_of("- \t\r") != std::string::npos) last = line;
  }
  return last;
}

}  // namespace ringsim::proc
