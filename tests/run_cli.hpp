#pragma once
// `ringsim ...` run through the CLI's own entry point in this process, its
// exit code, stdout and stderr captured (tests/kernels and tests/plan; what
// starts a SimGrid engine runs as a child instead, proc/child.hpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/command.hpp"

namespace ringsim::cli_testing {

struct CliResult {
  int code = 0;
  std::string out, err;
};

inline CliResult run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "ringsim");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  CliResult r;
  r.code = cli::run_cli(static_cast<int>(argv.size()), argv.data());
  r.out = ::testing::internal::GetCapturedStdout();
  r.err = ::testing::internal::GetCapturedStderr();
  return r;
}

}  // namespace ringsim::cli_testing
