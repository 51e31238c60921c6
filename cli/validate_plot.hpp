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

}  // namespace ringsim::cli
