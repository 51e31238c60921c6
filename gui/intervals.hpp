#pragma once
// Time intervals [start, end) of one lane: their union and total length, for
// the trace summary and the range statistics (both count busy time once
// where activities overlap).
#include <algorithm>
#include <utility>
#include <vector>

namespace ringsim::gui {

using Intervals = std::vector<std::pair<double, double>>;

// Sorted, disjoint union of `v`.
inline Intervals unite(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& iv : v) {
    if (!out.empty() && iv.first <= out.back().second)
      out.back().second = std::max(out.back().second, iv.second);
    else
      out.push_back(iv);
  }
  return out;
}

inline double length(const Intervals& v) {
  double s = 0;
  for (const auto& [a, b] : v) s += b - a;
  return s;
}

}  // namespace ringsim::gui
