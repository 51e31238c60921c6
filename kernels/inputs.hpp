#pragma once
// Deterministic random attention inputs. std::normal_distribution's algorithm
// is left to the standard library, so the same seed would give different
// tensors under libstdc++ and libc++; a Box-Muller transform of
// std::mt19937_64 (whose sequence the standard fixes) gives the same values
// wherever the libm functions round the same.
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/emulator.hpp"
#include "models/core/npy.hpp"

namespace ringsim::kernels {

// n standard normal values, each rounded to `storage` (so float32/float16
// inputs are exactly what a .npy of that dtype would hold).
std::vector<double> normal_values(std::size_t n, std::mt19937_64& rng, NpyDType storage);

// q, k, v, d_o for w's shape (S = devices x block tokens), in that order from one
// generator seeded with `seed`.
AttnInputs random_inputs(const Workload& w, std::uint64_t seed, NpyDType storage);

double round_to(double x, NpyDType storage);

}  // namespace ringsim::kernels
