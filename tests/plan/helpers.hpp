#pragma once
// Shared by the planner tests: catalog hardware, small shapes, requests, and
// `ringsim plan` run through the CLI's own entry point in this process (the
// analytic planner starts no SimGrid engine).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "models/core/catalog.hpp"
#include "models/plan/plan.hpp"
#include "proc/resolve.hpp"
#include "tests/run_cli.hpp"

namespace ringsim::plan_testing {

inline Hardware hardware(const std::string& gpu) {
  proc::HardwareSpec f;
  f.gpu = gpu;
  return proc::resolve_hardware(f, Catalog::embedded(), DType::BF16);
}

// Small enough to count every term by hand (docs/plan.md walks it through).
inline ModelShape tiny_shape() {
  ModelShape s;
  s.name = "tiny";
  s.layers = 2;
  s.d_model = 64;
  s.heads = 4;
  s.kv_heads = 2;
  s.head_dim = 16;
  s.ffn = 128;
  s.vocab = 1000;
  return s;
}

inline PlanRequest request(const ModelShape& s, std::int64_t context, std::int64_t gpus) {
  PlanRequest r;
  r.shape = s;
  r.context = context;
  r.gpus = gpus;
  return r;
}

// A memory estimate's terms by name, in bytes.
inline std::map<std::string, double> items(const PlanMemory& m) {
  std::map<std::string, double> out;
  for (const auto& i : m.items) out[i.name] = i.bytes;
  return out;
}

using cli_testing::CliResult;
using cli_testing::run_cli;

// Each command is refused: exit 2, nothing on stdout, one line on stderr
// containing its expected text.
using Refusals = std::vector<std::pair<std::vector<std::string>, std::string>>;
inline void expect_refused_with_one_line(const Refusals& cases) {
  for (const auto& [args, prefix] : cases) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(prefix), std::string::npos) << r.err;
  }
}

}  // namespace ringsim::plan_testing
