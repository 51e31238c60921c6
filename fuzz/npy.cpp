// Fuzz target: .npy files (kernels::parse_npy), the `--q/--k/--v` inputs of
// `ringsim verify`. An accepted array must be what its header says (element
// count = product of the shape, every value finite) and must survive
// encode_npy -> parse_npy unchanged.
#include "kernels/npy.hpp"

#include <cmath>

#include "fuzz/target.hpp"
#include "models/core/errors.hpp"

namespace ringsim::fuzz {

int npy(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (int rank : {-1, 3}) {
    kernels::NpyArray a;
    try {
      a = kernels::parse_npy(bytes, "--q fuzz.npy", rank);
    } catch (const InputError& e) {
      check_message("npy", e.what(), true);
      continue;
    }
    std::int64_t n = 1;
    for (auto d : a.shape) {
      if (d < 1) finding("npy: accepted a dimension < 1");
      n *= d;
    }
    if (a.shape.empty() && a.data.size() != 1) finding("npy: a 0-d array must hold one value");
    if (static_cast<std::size_t>(n) != a.data.size() || a.size() != n)
      finding("npy: element count differs from the shape");
    if (rank == 3 && a.shape.size() != 3) finding("npy: rank 3 requested, other rank accepted");
    for (double v : a.data)
      if (!std::isfinite(v)) finding("npy: accepted a non-finite value");
    const std::string again = kernels::encode_npy(a.shape, a.dtype, a.data);
    const auto b = kernels::parse_npy(again, "round trip", rank);
    if (b.shape != a.shape || b.dtype != a.dtype || b.data != a.data)
      finding("npy: encode -> parse changed the array");
  }
  return 0;
}

}  // namespace ringsim::fuzz

RINGSIM_FUZZ_ENTRY(npy)
