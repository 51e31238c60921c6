#pragma once
// Child processes of `ringsim calibrate`: the MPI launcher, `ringsim run` (one
// SimGrid engine per process) and `ringsim profile`, each with its output
// captured and a deadline. experiments/child.hpp runs sweep points the same
// way; this one also searches PATH (mpirun), adds environment entries
// (OpenMPI's run-as-root switches) and stops a child with SIGTERM before
// SIGKILL, so mpirun can take its ranks down.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ringsim::cli {

struct Child {
  int code = -1;  // exit status; -1 when it could not start or was killed
  std::string out, err;
  std::string command;  // for messages
};

// Runs argv (looked up in PATH) with extra environment entries, capturing
// stdout and stderr. Past `timeout_s` the child gets SIGTERM, then SIGKILL.
Child run_child(const std::vector<std::string>& argv, const std::vector<std::string>& env_extra,
                double timeout_s);

// The line of a child's stderr worth quoting: the first "error:" line, else the
// last line with text.
std::string error_line(const std::string& err);

// The child's stdout as JSON; InputError naming `what` if it failed or printed none.
nlohmann::json parse_child_json(const Child& c, const std::string& what);

}  // namespace ringsim::cli
