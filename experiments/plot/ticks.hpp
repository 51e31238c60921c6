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
// `max_ticks` remain (base 2: every 1, 2, 5 or 10th, so 1K, 1M, 1G stay
// labelled); base-10 ranges under two decades get 1-2-5 steps. Labels as
// unit_label(v, unit, base).
std::vector<Tick> log_ticks(double lo, double hi, int base, int max_ticks = 12,
                            const std::string& unit = "");

// Ticks of a linear axis over [lo, hi] at a 1-2-2.5-5 step (in the unit's
// prefix for bytes, so 0, 16 GiB, 32 GiB, ...), at most about `max_ticks`.
std::vector<Tick> linear_ticks(double lo, double hi, int max_ticks = 8,
                               const std::string& unit = "");

// Compact label of a value: base 2 uses binary K/M/G (token counts, like the
// CLI's 128K), base 10 decimal K/M/G; small values in %g form.
std::string compact_label(double v, int base);

// A tick label with its unit (experiments/plot_spec.hpp, Axis::unit):
//   "bytes":  binary IEC prefixes, 1 KiB = 1024 B: "512 MiB", "8 PiB"
//   "tokens": binary K/M/G as the CLI reads them: "32K" = 32768, "1M"
//   "s":      "250 ns", "40 us", "1.5 ms", "2 s"
//   "%": "50%"; "x": "1.5x"; "": compact_label(v, base)
std::string unit_label(double v, const std::string& unit, int base = 10);

// Range [lo, hi] with a margin so markers at the ends are not clipped:
// `frac` of the span on linear axes, the same fraction of a decade on log axes.
void pad_range(double& lo, double& hi, bool log, int base, double frac = 0.04);

}  // namespace ringsim::plot
