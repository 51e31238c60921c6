// Fuzz target: `--profile FILE.json` (parse_profile, then ProfileModel as the
// CLI builds it). An accepted profile must give finite, non-negative step
// times at every block it is asked about, or refuse the block with one line.
#include "models/core/profile.hpp"

#include <cmath>
#include <set>

#include "fuzz/target.hpp"
#include "models/core/errors.hpp"

namespace ringsim::fuzz {

int profile(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Profile p;
  try {
    p = parse_profile(text, "--profile fuzz.json");
  } catch (const InputError& e) {
    check_message("profile", e.what(), false);
    return 0;
  }
  if (p.points.empty()) finding("profile: accepted a profile without points");
  std::set<std::string> dtypes;
  std::set<int> dims;
  for (const auto& pt : p.points) {
    dtypes.insert(pt.dtype);
    dims.insert(pt.head_dim);
    if (pt.block < 1 || pt.head_dim < 1 || pt.entries < 1 || pt.repeats < 1 || !(pt.median_s > 0) ||
        !std::isfinite(pt.median_s))
      finding("profile: accepted a point outside its documented range");
  }
  for (const auto& dt : dtypes) {
    ProfileModel m(p, dt, "--profile fuzz.json");
    if (m.min_block() < 1 || m.min_block() > m.max_block())
      finding("profile: min_block " + std::to_string(m.min_block()) + " > max_block " +
              std::to_string(m.max_block()));
    const std::int64_t lo = m.min_block(), hi = m.max_block();
    for (std::int64_t block :
         {std::int64_t{1}, lo, lo + 1, (lo + hi) / 2, hi - 1, hi, hi * 2, std::int64_t{1} << 40}) {
      if (block < 1) continue;
      for (int dim : dims)
        for (bool bwd : {false, true})
          for (bool partial : {false, true}) {
            const std::uint64_t entries =
                static_cast<std::uint64_t>(std::min<std::int64_t>(block, 1 << 20)) *
                static_cast<std::uint64_t>(std::min<std::int64_t>(block, 1 << 20));
            try {
              const double s = m.seconds(entries, block, dim, bwd, partial);
              if (!std::isfinite(s) || s < 0)
                finding("profile: step time " + std::to_string(s) + " at block " +
                        std::to_string(block));
            } catch (const InputError& e) {
              check_message("profile", e.what(), false);
            }
          }
    }
  }
  return 0;
}

}  // namespace ringsim::fuzz

RINGSIM_FUZZ_ENTRY(profile)
