#pragma once
// Runs ringsim-mpi under mpiexec and captures its exit code, stdout and stderr.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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

// `program_and_args` starts with the program to launch.
inline MpiRun run_mpi_program(int ranks, const std::string& program_and_args) {
  // OpenMPI refuses to start as root (CI containers) without these.
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  // Containers without ptrace rights break OpenMPI's single-copy (CMA) transfers
  // ("Read -1, expected ..., errno = 1"); the tests time nothing, so copy twice.
  ::setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 0);
  static int counter = 0;
  const auto dir = scratch_dir("run" + std::to_string(counter++));
  const auto out = dir / "out.txt", err = dir / "err.txt";
  const std::string cmd = std::string(RINGSIM_MPIEXEC) + " " + RINGSIM_MPIEXEC_NP + " " +
                          std::to_string(ranks) + " " + RINGSIM_MPIEXEC_FLAGS + " " +
                          program_and_args + " >" + out.string() + " 2>" + err.string();
  const int status = std::system(cmd.c_str());
  MpiRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::filesystem::remove_all(dir);
  return r;
}

// ringsim-mpi with `args`.
inline MpiRun run_mpi(int ranks, const std::string& args) {
  return run_mpi_program(ranks, std::string(RINGSIM_MPI_BIN) + " " + args);
}

}  // namespace ringsim::mpi::test
