#include "sim/link_meter.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ringsim::sim {

LinkMeter::LinkMeter(std::vector<double> bandwidth, double bin_s)
    : bw_(std::move(bandwidth)), bin_(bin_s) {
  if (!(bin_ > 0)) throw std::invalid_argument("LinkMeter: bin width must be positive");
  bins_.resize(2 * bw_.size());
  bytes_.assign(2 * bw_.size(), 0.0);
}

void LinkMeter::add(const std::vector<Hop>& hops, double bytes, double t0, double t1) {
  if (bytes <= 0) return;
  t1 = std::max(t1, t0);
  const auto first = static_cast<std::size_t>(std::floor(t0 / bin_));
  const auto last = static_cast<std::size_t>(std::floor(t1 / bin_));
  for (const auto& h : hops) {
    const auto i = 2 * static_cast<std::size_t>(h.link) + (h.up ? 0 : 1);
    auto& b = bins_[i];
    if (b.size() <= last) b.resize(last + 1, 0.0);
    bytes_[i] += bytes;
    if (first == last || t1 <= t0) {
      b[first] += bytes;
      continue;
    }
    // Each bin gets the share of [t0, t1] it covers.
    const double rate = bytes / (t1 - t0);
    for (auto k = first; k <= last; ++k) {
      const double lo = std::max(t0, static_cast<double>(k) * bin_);
      const double hi = std::min(t1, static_cast<double>(k + 1) * bin_);
      if (hi > lo) b[k] += rate * (hi - lo);
    }
  }
}

double LinkMeter::peak(std::int32_t link, bool up) const {
  const auto i = 2 * static_cast<std::size_t>(link) + (up ? 0 : 1);
  const auto& b = bins_[i];
  if (b.empty()) return 0;
  // Spreading each transfer evenly over its life can overfill a bin where two
  // transfers shared the link at uneven rates (each is charged its mean
  // rate): no bin carried more than the link can, so an overfull one was full.
  return std::min(
      1.0, *std::max_element(b.begin(), b.end()) / (bw_[static_cast<std::size_t>(link)] * bin_));
}

double LinkMeter::mean(std::int32_t link, bool up, double span) const {
  const auto i = 2 * static_cast<std::size_t>(link) + (up ? 0 : 1);
  return span > 0 ? bytes_[i] / (bw_[static_cast<std::size_t>(link)] * span) : 0;
}

bool LinkMeter::busier(double peak_a, double mean_a, double peak_b, double mean_b) {
  if (std::fabs(peak_a - peak_b) > 1e-6 * std::max(peak_a, peak_b)) return peak_a > peak_b;
  return mean_a > mean_b * (1 + 1e-9);
}

std::vector<LinkLoad> LinkMeter::hottest(std::size_t k, double span,
                                         const std::vector<TopoLink>& links) const {
  struct Row {
    std::size_t i;
    double peak, mean;
  };
  std::vector<Row> rows;
  for (std::size_t i = 0; i < bins_.size(); ++i) {
    if (bytes_[i] <= 0) continue;
    const auto link = static_cast<std::int32_t>(i / 2);
    rows.push_back({i, peak(link, i % 2 == 0), mean(link, i % 2 == 0, span)});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return busier(a.peak, a.mean, b.peak, b.mean);
  });
  if (rows.size() > k) rows.resize(k);
  std::vector<LinkLoad> out;
  for (const auto& r : rows)
    out.push_back(
        {links[r.i / 2].name + (r.i % 2 == 0 ? " up" : " down"), r.peak, r.mean, bytes_[r.i]});
  return out;
}

}  // namespace ringsim::sim
