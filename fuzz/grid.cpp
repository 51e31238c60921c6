// Fuzz target: the sweep's grid file (`ringsim sweep --grid FILE`,
// sweep::parse_grid). Any bytes must be refused with one InputError line or
// give a usable grid: every axis named by a sweepable flag and non-empty, and
// (for grids of at most 64 points) every point parsed as `ringsim run` would,
// either a typed spec or its own one-line error, never another exception.
#include <string>

#include "fuzz/target.hpp"
#include "models/core/errors.hpp"
#include "sweep/sweep.hpp"

namespace ringsim::fuzz {

int grid(const std::uint8_t* data, std::size_t size) {
  if (size > 8192) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  sweep::Grid g;
  try {
    g = sweep::parse_grid(text, "grid.json", "--grid", proc::RunFlags{}, {"--engine"});
  } catch (const InputError& e) {
    check_message("grid", e.what(), false);
    return 0;
  }
  double total = 1;
  for (const auto& a : g.axes) {
    // `--set KEY` axes are sweepable too; their KEY is checked per point,
    // against the catalog, as `ringsim run --set` would.
    if (!sweep::sweepable(a.flag)) finding("grid: axis " + a.flag);
    if (a.values.empty()) finding("grid: empty axis " + a.flag);
    total *= static_cast<double>(a.values.size());
  }
  // A base flag is named as an axis is (a "--set KEY" too: its KEY is
  // checked per point, against the catalog).
  for (const auto& [k, v] : g.file_base)
    if (!sweep::sweepable(k)) finding("grid: base flag " + k);
  if (total > 64) return 0;  // each point is a full `ringsim run` parse
  try {
    const auto pts = sweep::points(g);
    if (pts.size() != static_cast<std::size_t>(total)) finding("grid: wrong number of points");
    for (const auto& p : pts)
      if (!p.spec) check_message("grid point", p.error, false);
  } catch (const InputError& e) {
    check_message("grid", e.what(), false);
  }
  return 0;
}

}  // namespace ringsim::fuzz

RINGSIM_FUZZ_ENTRY(grid)
