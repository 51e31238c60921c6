#pragma once
// Each rank's share of the inputs: its query block, its own K/V block and (for
// backward) its rows of dO, at the token positions models/core/work.hpp's
// device_tokens gives for the layout (the sharding contract the simulator and
// the emulator use too). Inputs are synthetic (a counter-based hash of the seed
// and the element's global index, so any rank can draw any rows without the
// others) or read from .npy files by rank 0, which sends each rank its rows.
#include <cstdint>
#include <vector>

#include "kernels/tensor.hpp"
#include "mpi/comm.hpp"
#include "mpi/options.hpp"

namespace ringsim::mpi {

enum class Tensor { Q = 0, K = 1, V = 2, DO = 3 };

// Element `index` of synthetic tensor `which`: uniform in [-1, 1).
double synthetic_value(std::uint64_t seed, Tensor which, std::uint64_t index);

// The whole synthetic tensor, token-major [tokens, heads, dim].
std::vector<double> synthetic_tensor(std::uint64_t seed, Tensor which, std::int64_t tokens,
                                     int heads, int dim);

// Whole inputs, token-major, as the float64 reference takes them.
struct FullInputs {
  std::vector<double> q, k, v, d_o;
};

template <typename T>
struct Shard {
  std::vector<std::int64_t> tokens;  // absolute positions of this rank's rows
  kernels::HeadTensor<T> q, k, v, d_o;
};

template <typename T>
struct Loaded {
  Shard<T> shard;
  FullInputs full;  // rank 0 with keep_full only
};

// Reads the .npy files on rank 0 and sets opts' sizes from them (on every rank),
// or draws synthetic inputs. Bad files: InputError on every rank.
template <typename T>
Loaded<T> load_inputs(const World& w, RingOptions& opts, bool keep_full);

}  // namespace ringsim::mpi
