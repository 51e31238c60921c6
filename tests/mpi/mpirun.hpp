#pragma once
// Runs ringsim-mpi under mpiexec and captures its exit code, stdout and stderr.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "proc/child.hpp"

namespace ringsim::mpi::test {

struct MpiRun {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A fresh scratch folder per test.
inline std::filesystem::path scratch_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() /
           ("ringsim-test-mpi-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

// Words of a command line (the tests' arguments hold no spaces of their own).
inline std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The environment every MPI launch here gets: OpenMPI refuses to start as root
// (CI containers) without the first two; containers without ptrace rights
// break its single-copy (CMA) transfers ("Read -1, expected ..., errno = 1"),
// and the tests time nothing, so they copy twice.
inline std::vector<std::string> mpi_env() {
  return {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
          "OMPI_MCA_btl_vader_single_copy_mechanism=none"};
}

inline MpiRun run_command(std::vector<std::string> argv) {
  proc::Command c;
  c.argv = std::move(argv);
  c.env = mpi_env();
  c.timeout_s = 600;
  const auto res = proc::run(c);
  MpiRun r;
  r.code = res.timed_out ? -1 : res.exit_code;
  r.out = res.out;
  r.err = res.err;
  return r;
}

// `program_and_args` starts with the program to launch.
inline MpiRun run_mpi_program(int ranks, const std::string& program_and_args) {
  auto argv = words(std::string(RINGSIM_MPIEXEC) + " " + RINGSIM_MPIEXEC_NP + " " +
                    std::to_string(ranks) + " " + RINGSIM_MPIEXEC_FLAGS);
  for (auto& w : words(program_and_args)) argv.push_back(std::move(w));
  return run_command(std::move(argv));
}

// ringsim-mpi with `args`.
inline MpiRun run_mpi(int ranks, const std::string& args) {
  return run_mpi_program(ranks, std::string(RINGSIM_MPI_BIN) + " " + args);
}

}  // namespace ringsim::mpi::test
