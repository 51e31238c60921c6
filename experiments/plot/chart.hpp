#pragma once
// Plot spec (experiments/plot_spec.hpp) -> one PNG-ready image: a title, a
// grid of Qt Charts panels, and a footnote.
#include <QImage>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace ringsim::plot {

struct SpecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Needs a QApplication. Throws SpecError naming the bad field.
QImage render_spec(const nlohmann::json& spec);

}  // namespace ringsim::plot
