#pragma once
// Child processes: every simulated sweep point is its own `ringsim ... --json`
// process (SimGrid allows one engine per process), run a few at a time.
#include <string>
#include <vector>

namespace ringsim::exp {

struct ChildResult {
  int exit_code = -1;      // -1: could not start, or killed by a signal
  bool timed_out = false;  // killed after the deadline
  std::string out, err;    // everything it wrote
  double wall_s = 0;       // wall-clock seconds from start to exit
  std::string error;       // why it could not start ("" if it did)
};

// Runs argv[0] with argv (no shell), capturing stdout and stderr; kills it
// with SIGKILL after `timeout_s`.
ChildResult run_child(const std::vector<std::string>& argv, double timeout_s);

// Runs every command, at most `jobs` at once; results in input order.
std::vector<ChildResult> run_children(const std::vector<std::vector<std::string>>& argvs, int jobs,
                                      double timeout_s);

// "a 'b c' d": a command line a reader can paste into a shell.
std::string shell_line(const std::vector<std::string>& argv);

// Absolute path of the running program (/proc/self/exe), "" if unknown.
std::string self_path();

}  // namespace ringsim::exp
