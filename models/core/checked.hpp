#pragma once
// Checked 64-bit arithmetic for sizes: devices up to 2^20 and sequences up to
// 2^40 tokens multiply into byte counts that overflow naive 64-bit math.
#include <cstdint>
#include <string>

#include "models/core/errors.hpp"

namespace ringsim {

inline std::uint64_t mul_checked(std::uint64_t a, std::uint64_t b, const std::string& what) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw InputError(what + ": size overflows 64 bits");
  return r;
}

inline std::uint64_t add_checked(std::uint64_t a, std::uint64_t b, const std::string& what) {
  std::uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw InputError(what + ": size overflows 64 bits");
  return r;
}

}  // namespace ringsim
