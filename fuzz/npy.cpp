// Fuzz target: .npy files (parse_npy, parse_npy_ints), the `--q/--k/--v`
// inputs of `ringsim verify` and the cu_seqlens of `--documents`. An accepted
// array must be what its header says (element count = product of the shape,
// every float finite) and must survive encoding and parsing again unchanged.
#include "models/core/npy.hpp"

#include <cmath>

#include "fuzz/target.hpp"
#include "models/core/errors.hpp"

namespace ringsim::fuzz {

namespace {

void ints(std::string_view bytes) {
  NpyIntArray a;
  try {
    a = parse_npy_ints(bytes, "--documents fuzz.npy", -1);
  } catch (const InputError& e) {
    check_message("npy", e.what(), true);
    return;
  }
  if (a.size() != static_cast<std::int64_t>(a.data.size()))
    finding("npy: integer element count differs from the shape");
  if (!npy_is_integer(a.dtype)) finding("npy: the integer reader accepted a float dtype");
  const auto b = parse_npy_ints(encode_npy_ints(a.shape, a.dtype, a.data), "round trip", -1);
  if (b.shape != a.shape || b.dtype != a.dtype || b.data != a.data)
    finding("npy: integer encode -> parse changed the array");
}

}  // namespace

int npy(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (int rank : {-1, 3}) {
    NpyArray a;
    try {
      a = parse_npy(bytes, "--q fuzz.npy", rank);
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
    const std::string again = encode_npy(a.shape, a.dtype, a.data);
    const auto b = parse_npy(again, "round trip", rank);
    if (b.shape != a.shape || b.dtype != a.dtype || b.data != a.data)
      finding("npy: encode -> parse changed the array");
  }
  ints(bytes);
  return 0;
}

}  // namespace ringsim::fuzz

RINGSIM_FUZZ_ENTRY(npy)
