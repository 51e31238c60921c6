#pragma once
// Shared by the `ringsim infer` / `plan --inference` CLI tests: the real
// binary (RINGSIM_BIN, set by tests/infer/CMakeLists.txt) run as a child with
// --json, its output parsed. SimGrid runs in the child, one engine per process.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "proc/child.hpp"

namespace ringsim::infer_testing {

inline nlohmann::json run_json(std::vector<std::string> args) {
  args.insert(args.begin(), RINGSIM_BIN);
  args.push_back("--json");
  const auto r = proc::run(args, 300);
  EXPECT_TRUE(r.ok()) << r.failure() << "\n" << r.err;
  return nlohmann::json::parse(r.out);
}

}  // namespace ringsim::infer_testing
