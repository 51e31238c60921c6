#include "experiments/plot/ticks.hpp"

#include <cmath>
#include <cstdio>

namespace ringsim::plot {

std::string compact_label(double v, int base) {
  char buf[64];
  const double unit = base == 2 ? 1024.0 : 1000.0;
  const char* suffix[] = {"", "K", "M", "G", "T", "P"};
  if (std::fabs(v) >= unit) {
    int k = 0;
    double x = v;
    while (std::fabs(x) >= unit && k < 5) {
      x /= unit;
      ++k;
    }
    std::snprintf(buf, sizeof buf, "%g%s", std::round(x * 100) / 100, suffix[k]);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::vector<Tick> log_ticks(double lo, double hi, int base, int max_ticks) {
  std::vector<Tick> ticks;
  if (!(lo > 0) || !(hi >= lo) || base < 2) return ticks;
  const double lb = std::log(base);
  const int first = static_cast<int>(std::ceil(std::log(lo) / lb - 1e-9));
  const int last = static_cast<int>(std::floor(std::log(hi) / lb + 1e-9));
  const int count = last - first + 1;
  if (count < 3 && base == 10) {
    // Less than about two decades: 1-2-5 steps (then every digit) so the
    // axis still carries at least two labels.
    for (const std::vector<double>& mantissas :
         {std::vector<double>{1, 2, 5}, std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
      ticks.clear();
      for (int e = first - 1; e <= last; ++e)
        for (double m : mantissas) {
          const double v = m * std::pow(10.0, e);
          if (v >= lo * (1 - 1e-12) && v <= hi * (1 + 1e-12))
            ticks.push_back({std::log10(v), compact_label(v, base)});
        }
      if (ticks.size() >= 3) break;
    }
    if (ticks.size() < 2) {
      // A narrow range: four ticks evenly spaced in log, at 2 significant digits.
      ticks.clear();
      for (int i = 0; i < 4; ++i) {
        const double raw = lo * std::pow(hi / lo, (i + 0.5) / 4.0);
        const double mag = std::pow(10.0, std::floor(std::log10(raw)) - 1);
        const double v = std::round(raw / mag) * mag;
        ticks.push_back({std::log10(v), compact_label(v, base)});
      }
    }
    return ticks;
  }
  const int step = count > max_ticks ? (count + max_ticks - 1) / max_ticks : 1;
  for (int e = first; e <= last; ++e) {
    // Align labelled powers to multiples of the step so they stay regular.
    if (((e % step) + step) % step != 0) continue;
    ticks.push_back({static_cast<double>(e), compact_label(std::pow(base, e), base)});
  }
  return ticks;
}

void pad_range(double& lo, double& hi, bool log, int base, double frac) {
  if (log) {
    const double f = std::pow(base, frac * (base == 2 ? 3.3 : 1.0));  // same share of a decade
    lo /= f;
    hi *= f;
    return;
  }
  double span = hi - lo;
  if (span <= 0) span = std::fabs(hi) > 0 ? std::fabs(hi) : 1.0;
  lo -= frac * span;
  hi += frac * span;
}

}  // namespace ringsim::plot
