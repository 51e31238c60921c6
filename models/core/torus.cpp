#include "models/core/torus.hpp"

#include <algorithm>
#include <cstdlib>

namespace ringsim {

namespace {

std::int64_t largest_divisor_at_most(std::int64_t n, std::int64_t limit) {
  for (std::int64_t a = std::max<std::int64_t>(1, limit); a > 1; --a)
    if (n % a == 0) return a;
  return 1;
}

std::int64_t floor_root(std::int64_t n, int k) {
  std::int64_t r = 1;
  auto pow = [k](std::int64_t x) {
    std::int64_t p = 1;
    for (int i = 0; i < k; ++i) p *= x;
    return p;
  };
  while (pow(r + 1) <= n) ++r;
  return r;
}

}  // namespace

std::vector<int> auto_torus_dims(std::int64_t n, int rank) {
  std::vector<int> d;
  if (rank == 2) {
    const auto a = largest_divisor_at_most(n, floor_root(n, 2));
    d = {static_cast<int>(a), static_cast<int>(n / a)};
  } else {
    const auto a = largest_divisor_at_most(n, floor_root(n, 3));
    const auto m = n / a;
    const auto b = largest_divisor_at_most(m, floor_root(m, 2));
    d = {static_cast<int>(a), static_cast<int>(b), static_cast<int>(m / b)};
    std::sort(d.begin(), d.end());
  }
  // The snake visits the last dimension once per sweep of the others; it ends
  // next to its start (one wrap-around link) when that dimension is even.
  for (int k = rank - 1; k >= 0; --k)
    if (d[k] % 2 == 0) {
      std::swap(d[k], d[rank - 1]);
      break;
    }
  return d;
}

std::vector<int> snake_coords(const std::vector<int>& dims, std::int64_t p) {
  std::vector<int> c;
  std::int64_t below = 1;
  for (int dk : dims) {
    const auto raw = (p / below) % dk;
    const auto sweeps = p / (below * dk);  // completed sweeps of this digit
    c.push_back(static_cast<int>(sweeps % 2 ? dk - 1 - raw : raw));
    below *= dk;
  }
  return c;
}

int closing_hops(const std::vector<int>& dims, bool wraparound) {
  std::int64_t n = 1;
  for (int d : dims) n *= d;
  if (n < 2) return 1;
  const auto end = snake_coords(dims, n - 1), start = snake_coords(dims, 0);
  int hops = 0;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const int f = std::abs(end[k] - start[k]);
    hops += wraparound ? std::min(f, dims[k] - f) : f;
  }
  return std::max(hops, 1);
}

}  // namespace ringsim
