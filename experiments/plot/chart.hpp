#pragma once
// Plot spec (experiments/plot_spec.hpp) -> one PNG-ready image: a title, a
// grid of Qt Charts panels, and a footnote.
#include <QByteArray>
#include <QImage>
#include <QString>
#include <nlohmann/json.hpp>

#include "experiments/plot/spec.hpp"

namespace ringsim::plot {

// Needs a QApplication. Throws SpecError naming the bad field (resolve_spec).
QImage render_spec(const nlohmann::json& spec);
// The same figure as SVG bytes (vector: charts, text and legend as paths).
QByteArray render_svg(const nlohmann::json& spec, const QString& title);

}  // namespace ringsim::plot
