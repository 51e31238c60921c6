#pragma once
// `ringsim validate --plot`: predicted against published as SVG, one colour
// per source. Absolute metrics (tokens/s/GPU, TFLOP/s/GPU, seconds) share one
// log-log panel spanning decades; ratios (speedup), which sit near 1 and would
// collapse to a dot there, get a log-log panel of their own beside it.
#include <string>
#include <vector>

#include "models/plan/validation.hpp"

namespace ringsim::cli {

std::string validation_plot_svg(const std::vector<ValidationRow>& rows, const ValidationSet& set);

// --plot's name: .svg, .png or .pdf (the last two need ringsim-plot beside
// the binary); anything else is refused before any work (InputError).
void check_plot_name(const std::string& path);
// The figure in the format `path`'s extension names: SVG text, or PNG/PDF
// bytes rendered from it by `ringsim-plot --from-svg` (validate_plot_format.cpp).
std::string validation_plot_bytes(const std::vector<ValidationRow>& rows, const ValidationSet& set,
                                  const std::string& path);

}  // namespace ringsim::cli
