#include "kernels/profile_run.hpp"

#include <fmt/format.h>
#include <time.h>

#include <Eigen/Core>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "kernels/blockwise.hpp"
#include "kernels/inputs.hpp"
#include "kernels/merge.hpp"
#include "models/core/cancel.hpp"
#include "models/core/errors.hpp"
#include "models/core/profile.hpp"
#include "models/core/schema.hpp"

#ifdef RINGSIM_HAVE_CUDA
#include "kernels/cuda/attention.hpp"
#endif

namespace ringsim::kernels {

namespace {

// Thread CPU time, not wall time: the kernel is one thread, so on an idle
// machine the two agree, and on a shared one (CI, a busy workstation) CPU time
// leaves out the time other processes held the core.
double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Timing {
  double median_s = 0, min_s = 0, max_s = 0, wall_median_s = 0;
  int repeats = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <typename F>
Timing time_calls(F&& call, int warmup, int repeats, double budget_s, bool by_wall = false) {
  for (int i = 0; i < warmup; ++i) call();
  std::vector<double> cpu, wall;
  double spent = 0;
  for (int i = 0; i < repeats; ++i) {
    const double w0 = wall_seconds(), c0 = thread_seconds();
    call();
    const double c1 = thread_seconds(), w1 = wall_seconds();
    cpu.push_back(c1 - c0);
    wall.push_back(w1 - w0);
    spent += c1 - c0;
    if (spent > budget_s && cpu.size() >= 3) break;
  }
  Timing t;
  const auto& primary = by_wall ? wall : cpu;
  t.median_s = median(primary);
  t.min_s = *std::min_element(primary.begin(), primary.end());
  t.max_s = *std::max_element(primary.begin(), primary.end());
  t.wall_median_s = median(wall);
  t.repeats = static_cast<int>(cpu.size());
  return t;
}

template <typename T>
HeadTensor<T> random_tensor(int heads, std::int64_t tokens, int dim, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto v = normal_values(static_cast<std::size_t>(heads) * tokens * dim, rng,
                               sizeof(T) == 4 ? NpyDType::F32 : NpyDType::F64);
  HeadTensor<T> t(heads, tokens, dim);
  for (std::size_t i = 0; i < v.size(); ++i) t.data[i] = static_cast<T>(v[i]);
  return t;
}

struct Point {
  std::string kernel, dtype, mask;
  int head_dim = 0, heads = 0;
  std::int64_t block = 0;
  std::uint64_t entries = 0;
  Timing time;
};

// A point's share of the sweep's work: its score entries (block^2 x head dim)
// times the kernels timed on them (fwd, and bwd at ~2.5x fwd, per mask).
double point_work(std::int64_t block, int d, bool backward) {
  return static_cast<double>(block) * static_cast<double>(block) * d * (backward ? 3.5 : 1.0);
}

struct WorkDone {
  double total = 0, done = 0;
  double fraction() const { return total > 0 ? std::min(1.0, done / total) : 1.0; }
};

template <typename T>
void sweep(const CpuProfileOptions& opt, const std::string& dtype, std::int64_t max_block,
           std::vector<Point>& points, const ProfileProgress& progress, WorkDone& work) {
  for (int d : opt.head_dims)
    for (auto block : opt.blocks) {
      throw_if_cancelled();
      if (block > max_block) continue;
      const int kv_heads = opt.kv_heads > 0 ? opt.kv_heads : opt.heads;
      const auto q = random_tensor<T>(opt.heads, block, d, 1),
                 k = random_tensor<T>(kv_heads, block, d, 2),
                 v = random_tensor<T>(kv_heads, block, d, 3),
                 d_o = random_tensor<T>(opt.heads, block, d, 4);
      {
        // The online-softmax merge of a ring step after the first: a block's
        // partial (O, LSE) into the running one. A call takes about a
        // microsecond at small blocks, near the CPU clock's own cost (~0.4
        // us), so each timed sample runs enough calls for ~100k values.
        const FwdResult<T> f = blockwise_forward(q, k, v, {}, {}, BlockOpts{});
        const auto rows = static_cast<std::uint64_t>(opt.heads) * static_cast<std::uint64_t>(block);
        const int inner = static_cast<int>(std::max<std::uint64_t>(1, 100000 / (rows * d)));
        // Merging into the same running output again and again: the arithmetic
        // (a max, two exps and a weighted sum per value) does not depend on
        // the values, and the LSE only grows by log 2 per call.
        auto acc = f.o;
        auto lse = f.lse;
        auto t = time_calls(
            [&] {
              for (int i = 0; i < inner; ++i) merge_partial(acc, lse, f.o, f.lse);
            },
            opt.warmup, opt.repeats, opt.point_budget_s);
        for (double* x : {&t.median_s, &t.min_s, &t.max_s, &t.wall_median_s}) *x /= inner;
        points.push_back({"merge", dtype, "full", d, opt.heads, block, rows, t});
        if (progress)
          progress(fmt::format("merge {} d={} block={}: {:.3f} us ({} calls per sample)", dtype, d,
                               block, t.median_s * 1e6, inner),
                   work.fraction());
      }
      for (bool causal : {false, true}) {
        BlockOpts bo;
        bo.causal = causal;
        bo.threads = opt.threads;
        const bool by_wall = opt.threads > 1;
        const FwdResult<T> f = blockwise_forward(q, k, v, {}, {}, bo);
        auto add = [&](const char* kernel, const Timing& t) {
          Point p{kernel,    dtype, causal ? "causal_diagonal" : "full", d, opt.heads, block,
                  f.entries, t};
          points.push_back(p);
          // Half of this (d, block)'s work per mask, split between its kernels.
          work.done += point_work(block, d, opt.backward) / 2 *
                       (kernel[0] == 'b' ? 2.5 / 3.5 : (opt.backward ? 1.0 / 3.5 : 1.0));
          if (progress) {
            const double flops =
                4.0 * d * static_cast<double>(p.entries) * (kernel[0] == 'b' ? 2.5 : 1.0);
            progress(fmt::format("{} {} d={} block={} {}: {:.3f} ms ({:.1f} GFLOP/s, {} repeats)",
                                 kernel, dtype, d, block, p.mask, t.median_s * 1e3,
                                 flops / t.median_s * 1e-9, t.repeats),
                     work.fraction());
          }
        };
        FwdResult<T> scratch;
        add("fwd", time_calls([&] { blockwise_forward_into(q, k, v, {}, {}, bo, scratch); },
                              opt.warmup, opt.repeats, opt.point_budget_s, by_wall));
        if (opt.backward) {
          // As a ring step: gradients accumulate into buffers that live across
          // steps, and D = rowsum(dO * O) is computed once per pass, not per step.
          const auto delta = softmax_delta(f.o, d_o);
          HeadTensor<T> dq(q.heads, q.tokens, q.dim), dk(k.heads, k.tokens, k.dim),
              dv(v.heads, v.tokens, v.dim);
          add("bwd", time_calls(
                         [&] {
                           blockwise_backward_accumulate(q, k, v, d_o, f.lse, delta, {}, {}, bo, dq,
                                                         dk, dv);
                         },
                         opt.warmup, opt.repeats, opt.point_budget_s, by_wall));
        }
      }
    }
}

std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    v.erase(v.find_last_not_of(" \t") + 1);
    return v;
  }
  return "";
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::string cpu_model_name() {
  const auto m = cpuinfo_field("model name");
  return m.empty() ? "unknown CPU" : m;
}

std::string short_name(const std::string& model) {
  std::string s;
  for (char c : model) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!s.empty() && s.back() != '-')
      s += '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s.empty() ? "cpu" : s;
}

std::string cpu_profile_json(const CpuProfileOptions& in, const ProfileProgress& progress) {
  CpuProfileOptions opt = in;
  if (opt.blocks.empty())
    for (std::int64_t b = 128; b <= (opt.quick ? 2048 : 16384); b *= 2) opt.blocks.push_back(b);
  if (opt.dtypes.empty()) opt.dtypes = {"fp32", "fp64"};
  if (opt.fp64_max_block == 0) opt.fp64_max_block = opt.quick ? 512 : 4096;
  if (opt.quick) opt.repeats = std::min(opt.repeats, 3);
  if (opt.kv_heads < 0 || (opt.kv_heads > 0 && opt.heads % opt.kv_heads != 0))
    throw InputError("profile: kv heads must divide heads");
  if (opt.heads < 1 || opt.repeats < 1 || opt.warmup < 0)
    throw InputError("profile: heads and repeats must be at least 1");
  for (auto b : opt.blocks)
    if (b < 1 || b > (1 << 16))
      throw InputError(fmt::format("--blocks: each block must be in 1..65536, got {}", b));
  for (int d : opt.head_dims)
    if (d < 1 || d > 1024)
      throw InputError(fmt::format("--head-dims: each head dim must be in 1..1024, got {}", d));
  for (const auto& t : opt.dtypes)
    if (t != "fp32" && t != "fp64")
      throw InputError("--dtypes: the CPU kernels run fp32 or fp64, got " + t);

  Eigen::setNbThreads(1);
  std::vector<Point> points;
  WorkDone work;
  for (const auto& t : opt.dtypes)
    for (int d : opt.head_dims)
      for (auto b : opt.blocks)
        if (t == "fp32" || b <= opt.fp64_max_block) work.total += point_work(b, d, opt.backward);
  for (const auto& t : opt.dtypes) {
    if (t == "fp32")
      sweep<float>(opt, t, INT64_MAX, points, progress, work);
    else
      sweep<double>(opt, t, opt.fp64_max_block, points, progress, work);
  }

  nlohmann::json pts = nlohmann::json::array();
  for (const auto& p : points) {
    auto j = profile_point_json({p.kernel, p.dtype, p.head_dim, p.block, p.mask, p.time.median_s,
                                 p.time.min_s, p.time.max_s, p.time.repeats, p.entries},
                                p.heads);
    j["wall_median_s"] = p.time.wall_median_s;
    // Merge points are memory-bound: no FLOP rate (their entries are rows merged).
    if (p.kernel != "merge")
      j["gflops"] = 4.0 * p.head_dim * static_cast<double>(p.entries) *
                    (p.kernel == "bwd" ? 2.5 : 1.0) / p.time.median_s * 1e-9;
    pts.push_back(std::move(j));
  }
  const BlockOpts tiles;
  nlohmann::json j = {
      {"schema", "ringsim-profile-1"},
      {"device",
       {{"kind", "cpu"},
        {"name", cpu_model_name()},
        {"driver", fmt::format("Eigen {}.{}.{} ({}), {}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
                               EIGEN_MINOR_VERSION, Eigen::SimdInstructionSetsInUse(),
#ifdef __VERSION__
                               std::string("gcc/clang ") + __VERSION__
#else
                               std::string("unknown compiler")
#endif
                               )},
        {"clock_mhz", cpuinfo_field("cpu MHz")},
        {"logical_cpus", std::thread::hardware_concurrency()},
        {"threads", opt.threads}}},
      {"date", utc_now()},
      {"kernel_version", std::string(kBlockwiseKernelVersion)},
      {"tool_version", opt.tool_version.empty() ? "ringsim" : "ringsim " + opt.tool_version},
      {"tiles", fmt::format("{}x{}", tiles.q_chunk, tiles.k_chunk)},
      {"kv_heads", opt.kv_heads > 0 ? opt.kv_heads : opt.heads},
      {"method",
       std::string(opt.threads > 1
                       ? "wall time of each call (kernels on " + std::to_string(opt.threads) +
                             " threads; merge points on one) after warm-up; "
                       : "thread CPU time of each call after warm-up; ") +
           "median, min and max over the repeats; "
           "unit-normal random inputs; one call = block x block x heads at positions 0..block-1; "
           "bwd: blockwise_backward_accumulate into existing dQ/dK/dV with D precomputed, as a "
           "ring step; "
           "gflops counts 4 d FLOPs per entry forward, 10 d backward; merge points: one "
           "online-softmax merge of a block's partial (O, LSE) into the running one, entries = "
           "rows "
           "(block x heads), timed in batches of calls"},
      {"quick", opt.quick},
      {"points", pts},
      {"schema_version", kJsonSchemaVersion}};
  return j.dump(1);
}

bool cuda_profile_available(std::string* why) {
#ifdef RINGSIM_HAVE_CUDA
  std::string reason;
  if (cuda::device_count(&reason) > 0) return true;
  if (why) *why = "no usable NVIDIA GPU (" + reason + ")";
  return false;
#else
  if (why)
    *why =
        "this ringsim was built without CUDA (nvcc not found at configure time, or "
        "-DRINGSIM_CUDA=OFF)";
  return false;
#endif
}

}  // namespace ringsim::kernels
