#pragma once
// Shared by the kernel tests: small workloads, random tensors, and running the CLI.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/inputs.hpp"
#include "models/core/workload.hpp"
#include "tests/run_cli.hpp"

namespace ringsim::kernels::testing {

inline Workload small_workload(Layout layout, std::int64_t devices, std::int64_t block, int heads,
                               int kv_heads, int head_dim, bool causal, int ulysses = 0) {
  Workload w;
  w.layout = layout;
  w.devices = devices;
  w.block = block;
  w.causal = causal;
  w.shape.name = "custom";
  w.shape.heads = heads;
  w.shape.kv_heads = kv_heads;
  w.shape.head_dim = head_dim;
  w.ulysses_degree = ulysses;
  return w;
}

// Random normal values rounded to float, scaled.
inline std::vector<double> randn(std::size_t n, std::uint64_t seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  auto v = normal_values(n, rng, NpyDType::F32);
  for (auto& x : v) x = static_cast<double>(static_cast<float>(x * scale));
  return v;
}

using cli_testing::CliResult;
using cli_testing::run_cli;

inline std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "ringsim_kernels_" + name;
}

}  // namespace ringsim::kernels::testing
