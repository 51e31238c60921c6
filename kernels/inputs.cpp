#include "kernels/inputs.hpp"

#include <cmath>
#include <numbers>

namespace ringsim::kernels {

double round_to(double x, NpyDType storage) {
  switch (storage) {
    case NpyDType::F16:
      return half_to_double(double_to_half(x));
    case NpyDType::F32:
      return static_cast<double>(static_cast<float>(x));
    default:
      return x;
  }
}

std::vector<double> normal_values(std::size_t n, std::mt19937_64& rng, NpyDType storage) {
  // Uniform in (0, 1]: the top 53 bits, shifted off zero so log() is finite.
  auto uniform = [&rng] { return (static_cast<double>(rng() >> 11) + 1.0) * 0x1.0p-53; };
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; i += 2) {
    const double r = std::sqrt(-2.0 * std::log(uniform()));
    const double theta = 2.0 * std::numbers::pi * uniform();
    out[i] = round_to(r * std::cos(theta), storage);
    if (i + 1 < n) out[i + 1] = round_to(r * std::sin(theta), storage);
  }
  return out;
}

AttnInputs random_inputs(const Workload& w, std::uint64_t seed, NpyDType storage) {
  std::mt19937_64 rng(seed);
  const auto S = static_cast<std::size_t>(w.devices * w.block);
  const auto d = static_cast<std::size_t>(w.shape.head_dim);
  AttnInputs in;
  in.q = normal_values(S * static_cast<std::size_t>(w.shape.heads) * d, rng, storage);
  in.k = normal_values(S * static_cast<std::size_t>(w.shape.kv_heads) * d, rng, storage);
  in.v = normal_values(S * static_cast<std::size_t>(w.shape.kv_heads) * d, rng, storage);
  in.d_o = normal_values(S * static_cast<std::size_t>(w.shape.heads) * d, rng, storage);
  return in;
}

}  // namespace ringsim::kernels
