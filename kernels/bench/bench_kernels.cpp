// bench_kernels: the CPU kernels against the core's own peaks, measured in the same run.
//   Physical peak: an FMA-throughput probe (register-only loop, as many
//   independent accumulators as the FMA units need to stay busy) at the widest
//   vector width this build targets (and 256-bit beside AVX-512, which some
//   cores issue at the same rate).
//   Practical peak: the best single-thread GEMM this machine's packages offer:
//   Eigen (built for this host when RINGSIM_NATIVE is on) and, when found,
//   Debian's OpenBLAS, at the kernels' own shape and a large square one.
//   1. Blockwise forward at block 512, head dim 128, one thread: goal >= 70% of
//      the FMA peak. Backward: goal >= 50%.
//   2. Ring emulator vs the single-device blockwise kernel on the same total
//      work (N devices x block c vs one sequence of N*c), both from the same
//      float64 inputs to float64 outputs: goal <= 5% overhead.
//   3. Threads: the forward and backward at block 2048 on 1..all cores.
// After the runs it prints every ratio (medians when --benchmark_repetitions
// is given). Recorded numbers: docs/kernels.md.
//
//   bench_kernels --benchmark_repetitions=5
#include <benchmark/benchmark.h>
#include <immintrin.h>
#include <malloc.h>

#include <Eigen/Core>
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <thread>

#if RINGSIM_HAVE_OPENBLAS
#include <cblas.h>
#endif

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

// --- Physical peak: FMA throughput from registers -------------------------------
// kAcc independent accumulators: an FMA has a latency of 4-5 cycles and cores
// issue up to 2 per cycle, so at least 10 chains must be in flight; 12 leave
// headroom without spilling (16 x86 vector registers without AVX-512, 32 with).
constexpr int kAcc = 12;
constexpr std::int64_t kFmaIters = 1 << 16;

template <typename V, V (*Fma)(V, V, V), V (*Set1)(float)>
double fma_loop(std::int64_t iters) {
  V acc[kAcc];
  for (int i = 0; i < kAcc; ++i) acc[i] = Set1(1.0f + 1e-3f * static_cast<float>(i));
  // x * a + b with a just below 1 and b tiny keeps every value finite and normal.
  const V a = Set1(0.999999f), b = Set1(1e-7f);
  for (std::int64_t n = 0; n < iters; ++n)
    for (int i = 0; i < kAcc; ++i) acc[i] = Fma(acc[i], a, b);
  V sum = acc[0];
  for (int i = 1; i < kAcc; ++i) sum = Fma(sum, a, acc[i]);
  benchmark::DoNotOptimize(sum);
  return 2.0 * kAcc * static_cast<double>(iters) * (sizeof(V) / sizeof(float));
}

#if defined(__AVX512F__)
__m512 fma512(__m512 x, __m512 a, __m512 b) {
  return _mm512_fmadd_ps(x, a, b);
}
__m512 set512(float f) {
  return _mm512_set1_ps(f);
}
#endif
#if defined(__FMA__)
__m256 fma256(__m256 x, __m256 a, __m256 b) {
  return _mm256_fmadd_ps(x, a, b);
}
__m256 set256(float f) {
  return _mm256_set1_ps(f);
}
#endif
// Without FMA (a baseline x86-64 build): one SSE multiply and one add, 2 FLOPs
// per lane, which is the most such a build can issue.
__m128 muladd128(__m128 x, __m128 a, __m128 b) {
  return _mm_add_ps(_mm_mul_ps(x, a), b);
}
__m128 set128(float f) {
  return _mm_set1_ps(f);
}

template <double (*Loop)(std::int64_t)>
void BM_FmaPeak(benchmark::State& state) {
  double flops = 0;
  for (auto _ : state) flops = Loop(kFmaIters);
  set_flops(state, flops);
}
#if defined(__AVX512F__)
BENCHMARK_TEMPLATE(BM_FmaPeak, (fma_loop<__m512, fma512, set512>))->Name("BM_FmaPeak/avx512");
#endif
#if defined(__FMA__)
BENCHMARK_TEMPLATE(BM_FmaPeak, (fma_loop<__m256, fma256, set256>))->Name("BM_FmaPeak/avx2-fma");
#endif
BENCHMARK_TEMPLATE(BM_FmaPeak, (fma_loop<__m128, muladd128, set128>))
    ->Name("BM_FmaPeak/sse-muladd");

// --- Practical peak: the best GEMM on offer ---------------------------------------
// Eigen at a large square shape (its best case) and OpenBLAS at the same shapes.
void BM_EigenGemmSquare(benchmark::State& state) {
  const auto n = state.range(0);
  const RowMat a = RowMat::Random(n, n), b = RowMat::Random(n, n);
  RowMat c(n, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * n * n * n);
}
BENCHMARK(BM_EigenGemmSquare)->Arg(1024)->Unit(benchmark::kMillisecond);

#if RINGSIM_HAVE_OPENBLAS
// m x n = (m x k)(k x n), row-major, one thread; transposed_b: B given as n x k (S = Q K^T).
void openblas_gemm(benchmark::State& state, int m, int n, int k, bool transposed_b) {
  const RowMat a = RowMat::Random(m, k);
  const RowMat b = transposed_b ? RowMat::Random(n, k) : RowMat::Random(k, n);
  RowMat c(m, n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, transposed_b ? CblasTrans : CblasNoTrans, m, n, k,
                1.0f, a.data(), k, b.data(), transposed_b ? k : n, 0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * m * n * k);
}
void BM_OpenBlasGemmQKt(benchmark::State& state) {
  const auto n = static_cast<int>(state.range(0));
  openblas_gemm(state, n, n, kDim, true);
}
void BM_OpenBlasGemmSquare(benchmark::State& state) {
  const auto n = static_cast<int>(state.range(0));
  openblas_gemm(state, n, n, n, false);
}
// Wall time: should OpenBLAS use more than one thread after all, the caller's
// CPU time would understate the call and inflate the "one core" peak.
BENCHMARK(BM_OpenBlasGemmQKt)->Arg(512)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OpenBlasGemmSquare)->Arg(1024)->UseRealTime()->Unit(benchmark::kMillisecond);
#endif

// The kernels' own GEMM shape: S = Q K^T with the blockwise kernel's shapes.
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
void time_backward(benchmark::State& state, std::int64_t n, const BlockOpts& opts) {
  const auto q = random_head_tensor(1, n, kDim, 1), k = random_head_tensor(1, n, kDim, 2),
             v = random_head_tensor(1, n, kDim, 3), d_o = random_head_tensor(1, n, kDim, 4);
  const auto f = blockwise_forward(q, k, v, {}, {}, opts);
  std::uint64_t entries = 0;
  for (auto _ : state) {
    auto g = blockwise_backward(q, k, v, f.o, f.lse, d_o, {}, {}, opts);
    entries = g.entries;
    benchmark::DoNotOptimize(g.dq.data.data());
  }
  set_flops(state, 10.0 * kDim * static_cast<double>(entries));
}

void BM_BlockwiseBackward(benchmark::State& state) {
  time_backward(state, state.range(0), {});
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

// The baseline does what the emulator does around its kernels on one device:
// it starts from the same float64 inputs, converts them to the compute type,
// runs the kernel over the whole sequence and writes O and LSE back in float64.
// What remains of the difference is the ring itself: per-step calls, merges,
// block passing and sharding by layout.
void BM_SingleDevice(benchmark::State& state) {
  const auto w = ring_workload(state.range(0) != 0);
  const auto in = random_inputs(w, 1, NpyDType::F32);
  const auto n = kRingDevices * kRingBlock;
  const auto toks = iota_positions(n);
  BlockOpts opts;
  opts.causal = w.causal;
  std::uint64_t entries = 0;
  for (auto _ : state) {
    const auto q = gather_rows<float>(in.q, 1, kDim, toks, 0, 1);
    const auto k = gather_rows<float>(in.k, 1, kDim, toks, 0, 1);
    const auto v = gather_rows<float>(in.v, 1, kDim, toks, 0, 1);
    const auto r = blockwise_forward(q, k, v, {}, {}, opts);
    std::vector<double> o(in.q.size(), 0.0), lse(static_cast<std::size_t>(n), 0.0);
    scatter_rows(r.o, 1, toks, 0, o);
    scatter_scalars(r.lse, 1, toks, 1, 0, lse);
    entries = r.entries;
    benchmark::DoNotOptimize(o.data());
    benchmark::DoNotOptimize(lse.data());
  }
  set_flops(state, 4.0 * kDim * static_cast<double>(entries));
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

// Threads: the same kernels split over cores (forward by query chunks,
// backward by key chunks), block 2048 so every thread gets several tiles.
void BM_ForwardThreads(benchmark::State& state) {
  BlockOpts opts;
  opts.threads = static_cast<int>(state.range(0));
  time_forward(state, 2048, opts);
}

void BM_BackwardThreads(benchmark::State& state) {
  BlockOpts opts;
  opts.threads = static_cast<int>(state.range(0));
  time_backward(state, 2048, opts);
}

void thread_counts(benchmark::internal::Benchmark* b) {
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  for (int t = 1; t < cores; t *= 2) b->Arg(t);
  b->Arg(cores);
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
BENCHMARK(BM_ForwardThreads)->Apply(thread_counts)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BackwardThreads)->Apply(thread_counts)->UseRealTime()->Unit(benchmark::kMillisecond);

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

double best_of(const RatioReporter& rep, std::initializer_list<const char*> names,
               std::string* which) {
  double best = 0;
  for (const char* n : names)
    if (rep.get(n) > best) {
      best = rep.get(n);
      *which = n;
    }
  return best;
}

void print_ratios(const RatioReporter& rep) {
  std::string fma_name, gemm_name;
  const double fma = best_of(
      rep, {"BM_FmaPeak/avx512", "BM_FmaPeak/avx2-fma", "BM_FmaPeak/sse-muladd"}, &fma_name);
  const double gemm =
      best_of(rep,
              {"BM_EigenGemmQKt/512", "BM_EigenGemmSquare/1024", "BM_OpenBlasGemmQKt/512/real_time",
               "BM_OpenBlasGemmSquare/1024/real_time"},
              &gemm_name);
  std::printf("\nOne core (%s, %s)\n", RINGSIM_ISA_TEXT, Eigen::SimdInstructionSetsInUse());
#if RINGSIM_HAVE_OPENBLAS
  // OpenBLAS picks its kernels at run time; an older OpenBLAS may not know a
  // newer core and fall back to an older ISA's kernels (its "core" below).
  std::printf("  OpenBLAS: core %s, %d thread(s)\n", openblas_get_corename(),
              openblas_get_num_threads());
#endif
  if (fma > 0)
    std::printf("  physical peak (FMA probe):  %7.1f GFLOP/s  [%s]\n", fma, fma_name.c_str());
  if (gemm > 0) {
    std::printf("  practical peak (best GEMM): %7.1f GFLOP/s  [%s]", gemm, gemm_name.c_str());
    if (fma > 0) std::printf(" = %.0f%% of the FMA peak", 100 * gemm / fma);
    std::printf("\n");
  }
  const auto line = [&](const char* what, double v, double goal) {
    if (v <= 0) return;
    std::printf("  %-44s %7.1f GFLOP/s", what, v);
    if (fma > 0) std::printf(" = %3.0f%% of FMA peak", 100 * v / fma);
    if (gemm > 0) std::printf(", %3.0f%% of GEMM peak", 100 * v / gemm);
    if (goal > 0) std::printf("  (goal >= %.0f%% of FMA peak)", 100 * goal);
    std::printf("\n");
  };
  line("blockwise forward (block 512, d 128, full)", rep.get("BM_BlockwiseForward/512/0"), 0.70);
  line("blockwise forward (block 512, d 128, causal)", rep.get("BM_BlockwiseForward/512/1"), 0);
  line("blockwise backward (block 512, d 128, full)", rep.get("BM_BlockwiseBackward/512"), 0.50);
  for (int causal = 0; causal <= 1; ++causal) {
    const std::string arg = causal ? "/1" : "/0";
    const double one = rep.get("BM_SingleDevice" + arg), ring = rep.get("BM_RingEmulator" + arg);
    if (one > 0 && ring > 0)
      std::printf(
          "ring emulator overhead (%s, %lld x %lld tokens): %.1f vs %.1f GFLOP/s = %+.1f%% (goal "
          "<= 5%%)\n",
          causal ? "causal" : "full", static_cast<long long>(kRingDevices),
          static_cast<long long>(kRingBlock), ring, one, 100 * (one / ring - 1));
  }
  for (const char* pass : {"Forward", "Backward"}) {
    const double one = rep.get(std::string("BM_") + pass + "Threads/1/real_time");
    if (one <= 0) continue;
    std::printf("threads, %s at block 2048:", pass);
    for (int t = 1; t <= 1024; ++t) {
      const double v =
          rep.get(std::string("BM_") + pass + "Threads/" + std::to_string(t) + "/real_time");
      if (v > 0) std::printf("  %d: %.1f GFLOP/s (x%.2f)", t, v, v / one);
    }
    std::printf("\n");
  }
}

}  // namespace
}  // namespace ringsim::kernels

int main(int argc, char** argv) {
  Eigen::setNbThreads(1);
#if RINGSIM_HAVE_OPENBLAS
  // One thread: the practical peak is per core, and idle OpenBLAS workers
  // spinning in sched_yield would take time from the other benchmarks.
  openblas_set_num_threads(1);
#endif
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
  ringsim::kernels::print_ratios(rep);
  benchmark::Shutdown();
  return 0;
}
