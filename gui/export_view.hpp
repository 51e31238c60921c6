#pragma once
// Writes the timeline as an image file: SVG by extension (vector, via
// Qt6::Svg), anything else as a raster image (PNG by default).
#include <QSize>
#include <QString>
#include <vector>

#include "gui/time_view.hpp"
#include "gui/timeline_scene.hpp"

namespace ringsim::gui {

bool svg_supported();

// Empty on success, else a one-line reason.
QString export_view(const QString& path, const std::vector<LoadedTrace>& traces,
                    const TimeView& view, QSize size, const TimelineScene::Selection& sel = {},
                    const TimelineScene* like = nullptr);  // its mode, lane window, path

}  // namespace ringsim::gui
