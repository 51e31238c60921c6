// Fuzz target: a calibration file (`--calibration FILE` on plan, infer, run,
// sweep and validate: parse_calibration, as `calibrate --runs` writes it).
// Any bytes must be refused with one InputError line or read into factors in
// their stated range and error bands whose low <= 0 <= high, each band's
// class chosen back by choose_band with the file named.
#include "models/plan/calibration.hpp"

#include <cmath>
#include <string>

#include "fuzz/target.hpp"
#include "models/core/errors.hpp"

namespace ringsim::fuzz {

int calibration(const std::uint8_t* data, std::size_t size) {
  if (size > 16384) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto c = parse_calibration(text, "--calibration fuzz.json");
    for (const auto& f : c.factors)
      if (!(f.factor >= 0.05 && f.factor <= 20) || f.runs < 1)
        finding("calibration: a factor out of its range accepted");
    for (const auto& b : c.bands) {
      if (!(b.low <= 0 && b.high >= 0) || !std::isfinite(b.low) || !std::isfinite(b.high))
        finding("calibration: a band that does not hold 0 accepted");
      const auto chosen = choose_band(b.klass, &c, "fuzz.json");
      if (chosen.klass != b.klass || (b.validated() && chosen.source != "fuzz.json"))
        finding("calibration: choose_band did not choose the file's band");
    }
  } catch (const InputError& e) {
    check_message("calibration", e.what(), false);
  }
  return 0;
}

}  // namespace ringsim::fuzz

RINGSIM_FUZZ_ENTRY(calibration)
