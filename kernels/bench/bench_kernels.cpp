// bench_kernels: the CPU kernels against in-run baselines (one thread).
//   1. Blockwise forward GFLOP/s vs a plain Eigen GEMM of the same shapes
//      (S = Q K^T, block 512, head dim 128). Goal: >= 60% of the GEMM.
//   2. Ring emulator vs the single-device blockwise kernel on the same total
//      work (N devices x block c vs one sequence of N*c). Goal: <= 10% overhead.
// After the runs it prints both ratios (medians when --benchmark_repetitions
// is given). Recorded numbers: docs/kernels.md.
//
//   bench_kernels --benchmark_repetitions=5
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <Eigen/Core>
#include <cstdio>
#include <map>
#include <string>

#include "kernels/blockwise.hpp"
#include "kernels/emulator.hpp"
#include "kernels/inputs.hpp"

namespace ringsim::kernels {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr int kDim = 128;

HeadTensor<float> random_head_tensor(int heads, std::int64_t tokens, int dim, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto v = normal_values(static_cast<std::size_t>(heads) * tokens * dim, rng, NpyDType::F32);
  HeadTensor<float> t(heads, tokens, dim);
  for (std::size_t i = 0; i < v.size(); ++i) t.data[i] = static_cast<float>(v[i]);
  return t;
}

void set_flops(benchmark::State& state, double flops_per_iter) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_iter * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// The baseline: one GEMM S = Q K^T with the blockwise kernel's shapes.
void BM_EigenGemmQKt(benchmark::State& state) {
  const auto n = state.range(0);
  const auto q = random_head_tensor(1, n, kDim, 1), k = random_head_tensor(1, n, kDim, 2);
  const Eigen::Map<const RowMat> Q(q.data.data(), n, kDim), K(k.data.data(), n, kDim);
  RowMat s(n, n);
  for (auto _ : state) {
    s.noalias() = Q * K.transpose();
    benchmark::DoNotOptimize(s.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * n * n * kDim);
}

// Blockwise forward over one n-token sequence, one head: QK^T and PV, 4 n^2 d FLOPs
// (the exp and the online-softmax bookkeeping are not counted).
void time_forward(benchmark::State& state, std::int64_t n, const BlockOpts& opts) {
  const auto q = random_head_tensor(1, n, kDim, 1), k = random_head_tensor(1, n, kDim, 2),
             v = random_head_tensor(1, n, kDim, 3);
  std::uint64_t entries = 0;
  for (auto _ : state) {
    auto r = blockwise_forward(q, k, v, {}, {}, opts);
    entries = r.entries;
    benchmark::DoNotOptimize(r.o.data.data());
  }
  set_flops(state, 4.0 * kDim * static_cast<double>(entries));
}

void BM_BlockwiseForward(benchmark::State& state) {
  BlockOpts opts;
  opts.causal = state.range(1) != 0;
  time_forward(state, state.range(0), opts);
}

// Tile-size sweep at a 4096-token sequence: why BlockOpts defaults to 256 x 256.
void BM_BlockwiseForwardTiles(benchmark::State& state) {
  BlockOpts opts;
  opts.q_chunk = state.range(0);
  opts.k_chunk = state.range(1);
  time_forward(state, 4096, opts);
}

// Backward: five GEMMs per tile (S, dV, dP, dQ, dK): 10 n^2 d FLOPs.
void BM_BlockwiseBackward(benchmark::State& state) {
  const auto n = state.range(0);
  const auto q = random_head_tensor(1, n, kDim, 1), k = random_head_tensor(1, n, kDim, 2),
             v = random_head_tensor(1, n, kDim, 3), d_o = random_head_tensor(1, n, kDim, 4);
  const BlockOpts opts;
  const auto f = blockwise_forward(q, k, v, {}, {}, opts);
  std::uint64_t entries = 0;
  for (auto _ : state) {
    auto g = blockwise_backward(q, k, v, f.o, f.lse, d_o, {}, {}, opts);
    entries = g.entries;
    benchmark::DoNotOptimize(g.dq.data.data());
  }
  set_flops(state, 10.0 * kDim * static_cast<double>(entries));
}

// Overhead pair: the same N*c-token attention on one device and on N emulated
// devices (ring layout, merges, block passing, sharding copies included).
constexpr std::int64_t kRingDevices = 4, kRingBlock = 512;

Workload ring_workload(bool causal) {
  Workload w;
  w.layout = Layout::Ring;
  w.devices = kRingDevices;
  w.block = kRingBlock;
  w.causal = causal;
  w.shape.heads = w.shape.kv_heads = 1;
  w.shape.head_dim = kDim;
  return w;
}

void BM_SingleDevice(benchmark::State& state) {
  BlockOpts opts;
  opts.causal = state.range(0) != 0;
  time_forward(state, kRingDevices * kRingBlock, opts);
}

void BM_RingEmulator(benchmark::State& state) {
  const auto w = ring_workload(state.range(0) != 0);
  const auto in = random_inputs(w, 1, NpyDType::F32);
  std::uint64_t entries = 0;
  for (auto _ : state) {
    auto r = emulate<float>(w, in, false);
    entries = 0;
    for (const auto& dev : r.fwd.steps)
      for (const auto& st : dev) entries += st.entries;
    benchmark::DoNotOptimize(r.o.data());
  }
  set_flops(state, 4.0 * kDim * static_cast<double>(entries));
}

BENCHMARK(BM_EigenGemmQKt)->Arg(512)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BlockwiseForward)
    ->Args({512, 0})
    ->Args({512, 1})
    ->Args({2048, 0})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BlockwiseForwardTiles)
    ->Args({64, 64})
    ->Args({128, 128})
    ->Args({256, 256})
    ->Args({256, 512})
    ->Args({512, 512})
    ->Args({1024, 1024})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BlockwiseBackward)->Arg(512)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SingleDevice)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RingEmulator)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// Keeps each benchmark's GFLOP/s (the median aggregate when there is one) for the ratios.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      const auto it = r.counters.find("GFLOP/s");
      if (it == r.counters.end() || r.error_occurred) continue;
      const std::string name = r.run_name.str();
      if (r.run_type == Run::RT_Aggregate) {
        if (r.aggregate_name == "median") median_[name] = it->second.value;
      } else {
        last_[name] = it->second.value;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  double get(const std::string& name) const {
    if (auto it = median_.find(name); it != median_.end()) return it->second;
    if (auto it = last_.find(name); it != last_.end()) return it->second;
    return 0;
  }

 private:
  std::map<std::string, double> median_, last_;
};

}  // namespace
}  // namespace ringsim::kernels

int main(int argc, char** argv) {
  Eigen::setNbThreads(1);
  // Keep freed memory in the process: by default glibc maps every buffer over
  // 128 KiB afresh and unmaps it on free, so each iteration of a benchmark that
  // allocates its outputs would pay page faults that a long-running program
  // (which reuses its buffers) does not. Both sides of every ratio get this.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  ringsim::kernels::RatioReporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  const double gemm = rep.get("BM_EigenGemmQKt/512"), fwd = rep.get("BM_BlockwiseForward/512/0");
  if (gemm > 0 && fwd > 0)
    std::printf(
        "\nblockwise forward / Eigen GEMM (block 512, head dim 128): %.1f / %.1f GFLOP/s = %.0f%% "
        "(goal >= 60%%)\n",
        fwd, gemm, 100 * fwd / gemm);
  for (int causal = 0; causal <= 1; ++causal) {
    const std::string arg = causal ? "/1" : "/0";
    const double one = rep.get("BM_SingleDevice" + arg), ring = rep.get("BM_RingEmulator" + arg);
    if (one > 0 && ring > 0)
      std::printf(
          "ring emulator overhead (%s, %lld x %lld tokens): %.1f vs %.1f GFLOP/s = %+.1f%% (goal "
          "<= 10%%)\n",
          causal ? "causal" : "full", static_cast<long long>(ringsim::kernels::kRingDevices),
          static_cast<long long>(ringsim::kernels::kRingBlock), ring, one, 100 * (one / ring - 1));
  }
  benchmark::Shutdown();
  return 0;
}
