#pragma once
// `ringsim-gui --screenshot OUT TRACE [--compare TRACE2] [--view heatmap|lanes]`: renders without a
// window (docs and tests). Bad input prints one `ringsim-gui: error:` line.
#include <QSize>
#include <QString>
#include <QTextStream>
#include <vector>

#include "gui/timeline_scene.hpp"

namespace ringsim::gui {

struct ScreenshotArgs {
  QString out, trace, compare;
  QSize size;    // invalid: 1600 wide, as tall as the lanes need
  QString view;  // "heatmap", "lanes", or empty: the default (heatmap from 64 devices)
};

// Reads the traces; needs no QGuiApplication, so a bad file is reported
// before any platform plugin starts (and adds its own lines). 0, or 2 with the
// message on `err`.
int load_screenshot_traces(const ScreenshotArgs& args, QTextStream& err,
                           std::vector<LoadedTrace>* traces);
// Draws them into args.out; needs a QGuiApplication. 0, or 2 with the message.
int render_screenshot(const ScreenshotArgs& args, const std::vector<LoadedTrace>& traces,
                      QTextStream& err);
// Both.
int run_screenshot(const ScreenshotArgs& args, QTextStream& err);

}  // namespace ringsim::gui
