// The planner's speed (docs/plan.md, "Whole steps as frameworks run them"):
// the whole search for Llama 3 405B at 128K on 16,384 H100 with TP and PP
// searched, against one fixed configuration timed the same way (the baseline
// of the same run: the search's cost over a single evaluation's). The answer
// is printed into a string that is thrown away, as `ringsim plan` would print it.
#include <benchmark/benchmark.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.hpp"

namespace {

void plan(benchmark::State& state, const std::vector<const char*>& args) {
  for (auto _ : state) {
    std::ostringstream sink;
    auto* old = std::cout.rdbuf(sink.rdbuf());
    const int rc = ringsim::cli::run_cli(static_cast<int>(args.size()), args.data());
    std::cout.rdbuf(old);
    if (rc != 0) state.SkipWithError("ringsim plan failed");
    benchmark::DoNotOptimize(sink);
  }
}

void BM_PlanSearch405B16K(benchmark::State& state) {
  plan(state, {"ringsim", "plan", "--model", "llama3-405b", "--context", "128K", "--gpus", "16384",
               "--tp", "auto", "--pp", "auto"});
}
void BM_PlanOneConfig405B16K(benchmark::State& state) {
  plan(state, {"ringsim", "plan", "--model", "llama3-405b", "--context", "128K", "--gpus", "16384",
               "--tp", "8", "--pp", "16", "--cp", "16", "--layout", "zigzag"});
}

BENCHMARK(BM_PlanSearch405B16K)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanOneConfig405B16K)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
