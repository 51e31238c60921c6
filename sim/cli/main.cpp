// ringsim: the command line. Everything lives in sim/cli/*; main only forwards.
#include "sim/cli/command.hpp"

int main(int argc, char** argv) {
  return ringsim::cli::run_cli(argc, argv);
}
