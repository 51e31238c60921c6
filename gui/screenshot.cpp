#include "gui/screenshot.hpp"

#include "gui/export_view.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"

namespace ringsim::gui {

int load_screenshot_traces(const ScreenshotArgs& args, QTextStream& err,
                           std::vector<LoadedTrace>* traces) {
  try {
    // The picture never replaces a trace it draws (nor lands on a directory).
    check_outputs({{"--screenshot", args.out.toStdString()}},
                  {{"TRACE", args.trace.toStdString()}, {"--compare", args.compare.toStdString()}});
    traces->push_back(load_trace(args.trace));
    if (!args.compare.isEmpty()) traces->push_back(load_trace(args.compare));
  } catch (const InputError& e) {
    err << "ringsim-gui: error: " << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    err << "ringsim-gui: error: out of memory reading " << args.trace << "\n";
    return 2;
  }
  return 0;
}

int render_screenshot(const ScreenshotArgs& args, const std::vector<LoadedTrace>& traces,
                      QTextStream& err) {
  QSize size = args.size;
  if (!size.isValid()) size = QSize(1600, TimelineScene::natural_height(traces));
  TimelineScene probe;
  probe.set_traces(traces);
  TimeView view;
  view.set_extent(0, std::max(probe.extent_end(), TimeView::kMinSpanUs));
  view.fit();
  if (args.view == "heatmap") probe.set_mode(ViewMode::Heatmap);
  if (args.view == "lanes") probe.set_mode(ViewMode::Lanes);
  const QString problem = export_view(args.out, traces, view, size, {}, &probe);
  if (!problem.isEmpty()) {
    err << "ringsim-gui: error: " << problem << "\n";
    return 2;
  }
  return 0;
}

int run_screenshot(const ScreenshotArgs& args, QTextStream& err) {
  std::vector<LoadedTrace> traces;
  if (const int rc = load_screenshot_traces(args, err, &traces); rc != 0) return rc;
  return render_screenshot(args, traces, err);
}

}  // namespace ringsim::gui
