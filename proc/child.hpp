#pragma once
// Child processes, in one place: every SimGrid scenario runs in its own process
// (SimGrid allows one engine per process), and calibrate drives mpirun. Output
// is captured through pipes (poll, EINTR-safe), a deadline stops a child with
// SIGTERM then SIGKILL, each child leads its own process group (so a timeout
// takes mpirun's ranks down with it), and SIGINT/SIGTERM/SIGHUP reaching this
// process are passed on to the children still running; whether this process
// then stops cleanly or ends is its guard's business (sim/interrupt.hpp).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ringsim::proc {

struct Command {
  // argv[0] is a path, or a name looked up in PATH.
  std::vector<std::string> argv;
  // "KEY=VALUE" entries added to this process's environment (replacing KEY).
  std::vector<std::string> env;
  std::string cwd;           // working directory; "" = this one
  double timeout_s = 0;      // 0: no deadline
  int stop_signal = 15;      // sent at the deadline (SIGTERM; SIGINT asks ringsim to stop cleanly)
  double kill_grace_s = 10;  // SIGKILL follows the deadline's signal this much later
};

struct Result {
  int exit_code = -1;      // exit status; -1 when it did not exit normally
  int pid = -1;            // the child's process id, once it started
  int signal = 0;          // the signal that ended it, 0 if none
  bool timed_out = false;  // stopped at the deadline
  std::string out, err;    // everything it wrote
  std::string error;       // why it could not start ("" if it did)
  double wall_s = 0;       // start to exit
  double cpu_s = 0;        // user + system time of the child and its children
  double max_rss_bytes = 0;
  std::string command;  // shell_line(argv), for messages

  bool ok() const { return error.empty() && !timed_out && signal == 0 && exit_code == 0; }
  // One line: "exit 2: <first error line>", "timed out after 300 s", "killed
  // by signal 9", "cannot start X: ...". Empty when ok().
  std::string failure() const;
};

Result run(const Command& c);
// run() of argv with a deadline and nothing else set.
Result run(std::vector<std::string> argv, double timeout_s = 0);

// Runs every command, at most `jobs` at once; results in input order.
// `on_done` (optional) is called once per finished command, one call at a time
// (a progress bar's tick).
std::vector<Result> run_many(const std::vector<Command>& commands, int jobs,
                             const std::function<void()>& on_done = {});

// In a ringsim started by run(): end (SIGTERM) when the parent does, even if
// it is killed outright (SIGKILL, the OOM killer, an MPI rank torn down), so
// no point runs on as an orphan. Does nothing in a program started otherwise.
// Call first thing in main.
void stop_with_parent();

// Absolute path of the running program, "" if the system does not say.
std::string self_exe();

// The ringsim program for child runs: $RINGSIM_BIN if set (and then only it),
// else this program if it is ringsim, else `ringsim` next to this program,
// else on PATH. "" if none; `why` then says where it looked.
std::string ringsim_exe(std::string* why = nullptr);
// A program of this build next to this one (ringsim-mpi, ringsim-plot), "" if absent.
std::string sibling_exe(const std::string& name);

// "a 'b c' d": a command line a reader can paste into a shell.
std::string shell_line(const std::vector<std::string>& argv);
// The line of a child's stderr worth quoting: the first "error:" line (the
// one-line error of ringsim and of rank 0; mpirun adds banners after it),
// else the last line with text.
std::string error_line(const std::string& err);

}  // namespace ringsim::proc
