#pragma once
// Kernel time vs block size for the CUDA kernels, in the profile schema that
// `ringsim ... --profile` reads ("ringsim-profile-1", models/profiles/README.md,
// parsed by models/core/profile.cpp). `ringsim profile --device cuda` calls this; so
// does the stand-alone ringsim_cuda_profile (profile_main.cpp).
//
// One point = one kernel call on a square block: block queries x block keys x
// `heads` heads, positions 0..block-1; mask "full" is non-causal, "causal_diagonal"
// is the causal diagonal block of a ring. `entries` counts the score entries the
// call computes: block^2 * heads (full) or block (block + 1) / 2 * heads (diagonal,
// the visible ones).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/cuda/timing.hpp"
#include "kernels/profile_run.hpp"  // ProfileProgress

namespace ringsim::kernels::cuda {

struct CudaProfileOptions {
  bool quick = false;                // fewer sizes and repeats, bf16 only
  std::vector<std::int64_t> blocks;  // empty: 128, 256, ..., 16384 (quick: up to 4096)
  std::vector<int> head_dims{64, 128};
  std::vector<std::string> dtypes;  // empty: bf16, fp16 (quick: bf16)
  int heads = 16;                   // query heads = KV heads per call
  int warmup = 2, repeats = 10;     // quick: 1 and 5
  bool backward = true;
};

struct CudaProfilePoint {
  std::string kernel, dtype, mask;  // fwd|bwd, bf16|fp16, full|causal_diagonal
  int head_dim = 0, heads = 0;
  std::int64_t block = 0;
  std::uint64_t entries = 0;
  TimeStats time;
};

// The profile document for these points (no GPU needed; tested against the
// reader in models/core/profile.cpp).
std::string cuda_profile_document(const DeviceInfo& device,
                                  const std::vector<CudaProfilePoint>& points,
                                  const std::string& date);

// Runs the sweep on the current device and returns the profile JSON text.
// `progress` (optional) gets one line per point. Throws CudaError when no GPU.
// The fraction done counts points (a GPU point's time is mostly its fixed
// repeats and cache flushes, not its size).
std::string cuda_profile_json(const CudaProfileOptions& opt, const ProfileProgress& progress = {});

}  // namespace ringsim::kernels::cuda
