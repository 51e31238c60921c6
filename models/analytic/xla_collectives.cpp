#include "models/analytic/xla_collectives.hpp"

#include <algorithm>

#include "models/core/torus.hpp"

namespace ringsim {

XlaIci xla_ici(const Hardware& hw, std::int64_t group) {
  XlaIci x;
  x.link_bw = hw.ici_link_bw;
  x.hop_lat = hw.intra_lat;
  x.wraparound = hw.torus_wraparound;
  const int rank = hw.platform == Platform::Torus2D ? 2 : 3;
  std::int64_t n = 1;
  for (int d : hw.torus_dims) n *= d;
  x.dims = !hw.torus_dims.empty() && n == group
               ? hw.torus_dims
               : auto_torus_dims(std::max<std::int64_t>(1, group), rank);
  return x;
}

bool xla_collectives_apply(const Hardware& hw) {
  return hw.ici_link_bw > 0 && !hw.bandwidth_override &&
         (hw.platform == Platform::Torus2D || hw.platform == Platform::Torus3D);
}

namespace {
// Links into one device along an axis of n that a collective can use at once.
int links_in(int n, bool wrap) {
  if (n <= 1) return 0;
  return n >= 3 && wrap ? 2 : 1;
}
int axis_hops(int n, bool wrap) {
  if (n <= 1) return 0;
  return n >= 3 && wrap ? n / 2 : n - 1;
}
double latency_term(const XlaIci& x) {
  int hops = 0;
  for (int n : x.dims) hops += axis_hops(n, x.wraparound);
  return hops * x.hop_lat;
}
std::int64_t members(const XlaIci& x) {
  std::int64_t n = 1;
  for (int d : x.dims) n *= d;
  return n;
}
}  // namespace

double xla_permute_seconds(std::uint64_t bytes, const XlaIci& x, int hops) {
  if (bytes == 0) return 0;
  return hops * x.hop_lat + static_cast<double>(bytes) / x.link_bw;
}

double xla_all_gather_seconds(std::uint64_t block_bytes, const XlaIci& x) {
  const auto n = members(x);
  if (n <= 1 || block_bytes == 0) return 0;
  int links = 0;
  for (int d : x.dims) links += links_in(d, x.wraparound);
  const double bw =
      static_cast<double>(n - 1) * static_cast<double>(block_bytes) / (links * x.link_bw);
  return std::max(latency_term(x), bw);
}

double xla_all_to_all_seconds(std::uint64_t bytes_per_device, const XlaIci& x) {
  if (members(x) <= 1 || bytes_per_device == 0) return 0;
  const double b = static_cast<double>(bytes_per_device);
  double busiest = 0;  // the slowest axis's busiest link, bytes per direction
  for (int n : x.dims) {
    if (n <= 1) continue;
    double load = 0;
    if (n >= 3 && x.wraparound) {
      long s = 0;  // S(n): ring distances from one member to all the others
      for (int j = 0; j < n; ++j) s += std::min(j, n - j);
      load = b * static_cast<double>(s) / (2.0 * n);
    } else {
      load = b * static_cast<double>(n / 2) * static_cast<double>((n + 1) / 2) / n;
    }
    busiest = std::max(busiest, load);
  }
  return std::max(latency_term(x), busiest / x.link_bw);
}

std::string xla_schedule_text() {
  return "XLA on the ICI torus: ring collective-permute async (overlaps the next step's "
         "compute); all-gather, reduce-scatter and all-to-all on the attention's critical path";
}

}  // namespace ringsim
