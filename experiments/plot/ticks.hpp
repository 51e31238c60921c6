#pragma once
// Tick positions and labels for the plots, in plain C++ (tested without Qt).
// Log axes are drawn as linear axes over log_base(value) with labels at the
// powers of the base, so labels read "1K", "64K", "1M" instead of "1e+06".
#include <string>
#include <vector>

namespace ringsim::plot {

struct Tick {
  double at;  // position on the drawn axis (log_base(value) on log axes)
  std::string label;
};

// Ticks covering [lo, hi] (data values, lo > 0) at powers of `base`; when the
// range spans many decades only every k-th power is labelled so at most
// `max_ticks` remain; base-10 ranges under two decades get 1-2-5 steps.
std::vector<Tick> log_ticks(double lo, double hi, int base, int max_ticks = 12);

// Compact label of a value: base 2 uses binary K/M/G (token counts, like the
// CLI's 128K), base 10 decimal K/M/G; small values in %g form.
std::string compact_label(double v, int base);

// Range [lo, hi] with a margin so markers at the ends are not clipped:
// `frac` of the span on linear axes, the same fraction of a decade on log axes.
void pad_range(double& lo, double& hi, bool log, int base, double frac = 0.04);

}  // namespace ringsim::plot
