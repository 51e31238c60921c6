// ringsim: the command line. Everything lives in cli/*; main only forwards.
#include "cli/command.hpp"

int main(int argc, char** argv) {
  return ringsim::cli::run_cli(argc, argv);
}
