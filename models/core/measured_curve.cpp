#include "models/core/measured_curve.hpp"

#include <algorithm>
#include <cmath>

namespace ringsim {

namespace {

struct KindName {
  MeasuredKind kind;
  const char* name;
};
constexpr KindName kKinds[] = {{MeasuredKind::AllReduce, "all_reduce"},
                               {MeasuredKind::AllGather, "all_gather"},
                               {MeasuredKind::ReduceScatter, "reduce_scatter"},
                               {MeasuredKind::AllToAll, "alltoall"},
                               {MeasuredKind::SendRecv, "sendrecv"}};

}  // namespace

const char* to_string(MeasuredKind k) {
  for (const auto& e : kKinds)
    if (e.kind == k) return e.name;
  return "?";
}

std::optional<MeasuredKind> parse_measured_kind(const std::string& s) {
  for (const auto& e : kKinds)
    if (s == e.name) return e.kind;
  return std::nullopt;
}

const std::vector<std::string>& measured_kind_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& e : kKinds) v.emplace_back(e.name);
    return v;
  }();
  return names;
}

double bus_factor(MeasuredKind k, double n) {
  if (n <= 1) return 1;
  switch (k) {
    case MeasuredKind::AllReduce:
      return 2 * (n - 1) / n;
    case MeasuredKind::AllGather:
    case MeasuredKind::ReduceScatter:
    case MeasuredKind::AllToAll:
      return (n - 1) / n;
    case MeasuredKind::SendRecv:
      return 1;
  }
  return 1;
}

double MeasuredCurve::busbw(std::size_t i) const {
  const auto& [size, t] = points.at(i);
  return t > 0 ? bus_factor(kind, ranks) * size / t : 0;
}

double MeasuredCurve::floor_seconds(double n) const {
  if (points.empty()) return 0;
  return points.front().second * bus_factor(kind, n) / bus_factor(kind, ranks);
}

double MeasuredCurve::seconds(double bytes, double n) const {
  if (points.empty() || bytes <= 0) return 0;
  const double scale = bus_factor(kind, n) / bus_factor(kind, ranks);
  if (bytes <= points.front().first) return points.front().second * scale;
  if (bytes >= points.back().first)
    return points.back().second * bytes / points.back().first * scale;
  const auto hi = std::upper_bound(points.begin(), points.end(), bytes,
                                   [](double b, const auto& p) { return b < p.first; });
  const auto lo = hi - 1;
  // Log-log between the two measured sizes either side (a power law between
  // them: latency-bound below, bandwidth-bound above).
  const double f = std::log(bytes / lo->first) / std::log(hi->first / lo->first);
  const double t =
      std::exp(std::log(lo->second) + f * (std::log(hi->second) - std::log(lo->second)));
  return t * scale;
}

const MeasuredCurve* find_curve(const std::vector<MeasuredCurve>& curves, MeasuredKind kind) {
  for (const auto& c : curves)
    if (c.kind == kind) return &c;
  return nullptr;
}

}  // namespace ringsim
