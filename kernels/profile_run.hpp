#pragma once
// `ringsim profile`: kernel time against block size, written in the
// "ringsim-profile-1" schema that models/core/profile.hpp (ProfileModel) reads and
// models/profiles/README.md documents.
//
// CPU: the blockwise kernels of kernels/blockwise.hpp, one thread. One point =
// one kernel call on a square block of `block` queries x `block` keys x
// `heads` heads at positions 0..block-1; mask "full" is non-causal,
// "causal_diagonal" the causal diagonal block of a ring step. `entries` is the
// number of score entries the call computes (block^2 or block (block + 1) / 2,
// times heads). Each point is timed after warm-up calls; the median, minimum
// and maximum over the repeats are recorded.
//
// CUDA: kernels/cuda (built when nvcc is found) provides the sweep;
// cuda_profile_available() says whether this build and machine can run it.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ringsim::kernels {

struct CpuProfileOptions {
  bool quick = false;                // under a minute: fewer sizes and repeats
  std::vector<std::int64_t> blocks;  // empty: 128, 256, ..., 16384 (quick: up to 2048)
  std::vector<int> head_dims{64, 128};
  std::vector<std::string> dtypes;  // fp32 and/or fp64; empty: both
  std::int64_t fp64_max_block = 0;  // 0: 4096 (quick: 512); fp64 runs at half the fp32 rate
  int heads = 1;
  int kv_heads = 0;  // 0: as many as heads (MHA); fewer: GQA, as a ring configuration runs it
  int warmup = 1;
  int repeats = 5;  // quick: 3
  // Repeats are cut (to no fewer than 3) once a point has used this much time.
  double point_budget_s = 20;
  bool backward = true;
  // Threads per kernel call (BlockOpts::threads). With more than one, calls
  // are timed by the wall clock, since the caller's CPU time no longer covers them.
  int threads = 1;
  std::string tool_version;  // recorded as "ringsim <version>"
};

// One line per point and the fraction of the sweep's work done so far (0..1),
// from which the caller draws its ETA.
using ProfileProgress = std::function<void(const std::string& line, double done)>;

// Runs the sweep and returns the profile document (JSON text). `progress`
// (optional) gets one line per point. The fraction done weighs each point by
// block^2 x head dim (its score entries), not by count: a sweep's last,
// largest blocks take most of its time.
std::string cpu_profile_json(const CpuProfileOptions& opt, const ProfileProgress& progress = {});

// "AMD EPYC 7B13" from /proc/cpuinfo's "model name" ("unknown CPU" if absent),
// and the lower-case, dash-separated short form used in profile file names.
std::string cpu_model_name();
std::string short_name(const std::string& model);

// True when this build has the CUDA kernels and a GPU is visible; otherwise
// false with the reason in *why (built without CUDA, or no usable device).
bool cuda_profile_available(std::string* why);

}  // namespace ringsim::kernels
