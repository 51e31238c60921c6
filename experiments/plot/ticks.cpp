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

namespace {
// %g at 3 significant digits, without float noise (0.30000000000000004).
std::string num(double v) {
  char buf[64];
  // Whole numbers up to a billion in full ("1000 s", not "1e+03 s").
  if (std::fabs(v) >= 1000 && std::fabs(v) < 1e9 && v == std::round(v))
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// Scales a value to the largest prefix it reaches: returns the index.
int prefix_index(double v, double unit, int most) {
  int k = 0;
  double x = std::fabs(v);
  while (x >= unit * (1 - 1e-9) && k < most) {
    x /= unit;
    ++k;
  }
  return k;
}
}  // namespace

std::string unit_label(double v, const std::string& unit, int base) {
  if (unit == "bytes") {
    static const char* iec[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    const int k = prefix_index(v, 1024.0, 6);
    return num(v / std::pow(1024.0, k)) + " " + iec[k];
  }
  if (unit == "tokens") {
    static const char* bin[] = {"", "K", "M", "G", "T"};
    const int k = prefix_index(v, 1024.0, 4);
    return num(v / std::pow(1024.0, k)) + bin[k];
  }
  if (unit == "s") {
    const double a = std::fabs(v);
    if (a == 0) return "0 s";
    if (a < 1e-6) return num(v * 1e9) + " ns";
    if (a < 1e-3) return num(v * 1e6) + " us";
    if (a < 1) return num(v * 1e3) + " ms";
    return num(v) + " s";
  }
  if (unit == "%") return num(v) + "%";
  if (unit == "x") return num(v) + "x";
  return compact_label(v, base);
}

std::vector<Tick> linear_ticks(double lo, double hi, int max_ticks, const std::string& unit) {
  std::vector<Tick> ticks;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || max_ticks < 2) return ticks;
  // Bytes step in their prefix (16 GiB, not 17.18 GB); others in plain numbers.
  const double scale =
      unit == "bytes"
          ? std::pow(1024.0, prefix_index(std::max(std::fabs(lo), std::fabs(hi)), 1024.0, 6))
          : 1.0;
  const double raw = (hi - lo) / scale / max_ticks;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * p;
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (m * p >= raw) {
      step = m * p;
      break;
    }
  step *= scale;
  for (double i = std::ceil(lo / step - 1e-9); i * step <= hi * (1 + 1e-12) + 1e-300; i += 1) {
    const double v = std::fabs(i) < 1e-9 ? 0.0 : i * step;
    ticks.push_back({v, unit_label(v, unit, 10)});
    if (ticks.size() > static_cast<std::size_t>(4 * max_ticks)) break;  // float guard
  }
  return ticks;
}

std::vector<Tick> log_ticks(double lo, double hi, int base, int max_ticks,
                            const std::string& unit) {
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
            ticks.push_back({std::log10(v), unit_label(v, unit, base)});
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
        ticks.push_back({std::log10(v), unit_label(v, unit, base)});
      }
    }
    return ticks;
  }
  int step = count > max_ticks ? (count + max_ticks - 1) / max_ticks : 1;
  if (base == 2 && step > 1) {
    // Binary prefixes fall every 10th power: steps of 2, 5, 10, 20, ...
    // keep 1K, 1M, 1G among the labels.
    for (int s : {2, 5, 10, 20, 50})
      if (s >= step) {
        step = s;
        break;
      }
  }
  for (int e = first; e <= last; ++e) {
    // Align labelled powers to multiples of the step so they stay regular.
    if (((e % step) + step) % step != 0) continue;
    ticks.push_back({static_cast<double>(e), unit_label(std::pow(base, e), unit, base)});
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
