#include "cli/calibrate/noise.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace ringsim::cli::calibrate {

namespace {

double now(clockid_t c) {
  timespec t{};
  clock_gettime(c, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// A dependent chain of floating-point operations the compiler cannot fold
// or vectorise away: a fixed amount of work whose time only the core sets.
double spin(long n) {
  volatile double sink = 0;
  double x = 1.000001;
  for (long i = 0; i < n; ++i) x = x * 1.0000001 + 1e-9;
  sink = x;
  return sink;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

}  // namespace

nlohmann::json Noise::to_json() const {
  return {
      {"spread", spread}, {"contention", contention}, {"samples", samples}, {"sample_s", median_s}};
}

Noise measure_noise(int samples) {
  // Size one sample to about 2 ms on this core.
  long n = 1 << 16;
  for (double t = 0; t < 2e-3 && n < (1L << 30); n *= 2) {
    const double a = now(CLOCK_MONOTONIC);
    spin(n);
    t = now(CLOCK_MONOTONIC) - a;
  }
  n /= 2;  // the loop doubled it once more after the size that reached 2 ms
  std::vector<double> times;
  const double wall0 = now(CLOCK_MONOTONIC), cpu0 = now(CLOCK_PROCESS_CPUTIME_ID);
  for (int i = 0; i < samples; ++i) {
    const double a = now(CLOCK_MONOTONIC);
    spin(n);
    times.push_back(now(CLOCK_MONOTONIC) - a);
  }
  const double wall = now(CLOCK_MONOTONIC) - wall0, cpu = now(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
  Noise r;
  r.samples = samples;
  r.median_s = quantile(times, 0.5);
  r.spread = (quantile(times, 0.9) - quantile(times, 0.1)) / r.median_s;
  r.contention = cpu > 0 ? wall / cpu : 1;
  return r;
}

}  // namespace ringsim::cli::calibrate
