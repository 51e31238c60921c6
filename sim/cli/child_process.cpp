#include "sim/cli/child_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <sstream>
#include <thread>

#include "models/errors.hpp"

extern char** environ;

namespace ringsim::cli {

namespace {

std::string slurp_fd(int fd) {
  std::string s;
  char buf[65536];
  ::lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) s.append(buf, static_cast<size_t>(n));
  return s;
}

}  // namespace

// The line of a child's stderr worth quoting: the first "error:" line (rank 0's
// one-line error; mpirun adds banners after it), else the last line with text.
std::string error_line(const std::string& err) {
  std::istringstream in(err);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find("error:") != std::string::npos) return line;
    if (line.find_first_not_of("- \t") != std::string::npos) last = line;
  }
  return last;
}

// Runs argv (looked up in PATH) with extra environment entries, capturing
// stdout and stderr in unlinked temporary files (no pipe can fill and block).
// Past `timeout_s` the child gets SIGTERM, then SIGKILL.
Child run_child(const std::vector<std::string>& argv, const std::vector<std::string>& env_extra,
                double timeout_s) {
  Child c;
  for (const auto& a : argv) c.command += (c.command.empty() ? "" : " ") + a;
  char out_name[] = "/tmp/ringsim-calibrate-XXXXXX";
  char err_name[] = "/tmp/ringsim-calibrate-XXXXXX";
  const int fo = ::mkstemp(out_name), fe = ::mkstemp(err_name);
  if (fo < 0 || fe < 0) throw InputError("calibrate: cannot create temporary files in /tmp");
  ::unlink(out_name);
  ::unlink(err_name);

  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const auto key = kv.substr(0, kv.find('=') + 1);
    bool replaced = false;
    for (const auto& x : env_extra) replaced = replaced || x.rfind(key, 0) == 0;
    if (!replaced) env.push_back(kv);
  }
  env.insert(env.end(), env_extra.begin(), env_extra.end());
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fo, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, fe, STDERR_FILENO);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, cargv[0], &fa, nullptr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    c.err = std::strerror(rc);
  } else {
    int status = 0;
    const auto t0 = std::chrono::steady_clock::now();
    bool killed = false;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      const double waited =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (waited > timeout_s && !killed) {
        ::kill(pid, SIGTERM);
        killed = true;
      } else if (killed && waited > timeout_s + 10) {
        ::kill(pid, SIGKILL);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    c.code = killed ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    c.out = slurp_fd(fo);
    c.err = slurp_fd(fe);
    if (killed) c.err += fmt::format("\n(stopped after the {:g} s timeout)", timeout_s);
  }
  ::close(fo);
  ::close(fe);
  return c;
}

nlohmann::json parse_child_json(const Child& c, const std::string& what) {
  if (c.code != 0)
    throw InputError(fmt::format("calibrate: {} failed (exit {}): {} [{}]", what, c.code,
                                 error_line(c.err), c.command));
  try {
    return nlohmann::json::parse(c.out);
  } catch (const nlohmann::json::exception&) {
    throw InputError(fmt::format("calibrate: {} printed no JSON [{}]", what, c.command));
  }
}

}  // namespace ringsim::cli
