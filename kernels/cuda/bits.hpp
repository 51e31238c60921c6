#pragma once
// Host-side conversions between float and the 16-bit storage formats the CUDA
// kernels read (bf16, IEEE fp16). Round-to-nearest-even, like __float2bfloat16_rn
// and __float2half_rn, so host-made inputs match what the device would round to.
#include <cmath>
#include <cstdint>
#include <cstring>

namespace ringsim::kernels::cuda {

inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40);  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round half to even on the dropped 16 bits
  return static_cast<std::uint16_t>(u >> 16);
}
inline float bf16_to_float(std::uint16_t h) {
  return bits_float(static_cast<std::uint32_t>(h) << 16);
}

inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16;
  const int exp = (h >> 10) & 0x1f;
  const std::uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {  // zero or subnormal: man * 2^-24
    const float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  return bits_float(sign | (static_cast<std::uint32_t>(exp - 15 + 127) << 23) | (man << 13));
}

inline std::uint16_t float_to_half(float f) {
  const std::uint32_t u = float_bits(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const float a = std::fabs(f);
  if (std::isnan(f)) return static_cast<std::uint16_t>(sign | 0x7e00u);
  if (a >= 65520.0f) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (a < 6.103515625e-05f) {  // below the smallest normal: quantum 2^-24, nearbyint is RNE
    const float q = std::nearbyint(std::ldexp(a, 24));
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(q));
  }
  std::uint32_t au = float_bits(a);
  au += 0xfffu + ((au >> 13) & 1u);  // round half to even on the 13 dropped bits
  const std::uint32_t exp = (au >> 23) - 127 + 15, man = (au >> 13) & 0x3ffu;
  return static_cast<std::uint16_t>(sign | (exp << 10) | man);
}

inline float storage_to_float(std::uint16_t h, bool is_bf16) {
  return is_bf16 ? bf16_to_float(h) : half_to_float(h);
}
inline std::uint16_t float_to_storage(float f, bool is_bf16) {
  return is_bf16 ? float_to_bf16(f) : float_to_half(f);
}

}  // namespace ringsim::kernels::cuda
