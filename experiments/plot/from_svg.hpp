#pragma once
// ringsim-plot --from-svg IN.svg OUT.png|OUT.pdf: an SVG another ringsim
// command wrote (validate --plot), rendered by Qt Svg to PNG (2x raster) or
// PDF (vector). Throws InputError naming IN.svg or OUT.
#include <string>

namespace ringsim::plot {

// `format`: png | pdf. Needs a QGuiApplication.
void convert_svg(const std::string& in, const std::string& out, const std::string& format);

}  // namespace ringsim::plot
