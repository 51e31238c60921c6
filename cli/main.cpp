// ringsim: the command line. Everything lives in cli/*; main only forwards.
#include "cli/command.hpp"
#include "proc/child.hpp"

int main(int argc, char** argv) {
  // A point, a re-check or a GUI run whose parent is killed outright stops too.
  ringsim::proc::stop_with_parent();
  return ringsim::cli::run_cli(argc, argv);
}
