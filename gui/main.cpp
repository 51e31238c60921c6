// ringsim-gui: the timeline of ring steps (docs/gui.md). main only parses the
// command line and picks the window or the offscreen screenshot.
#include <QApplication>
#include <QGuiApplication>
#include <QRegularExpression>
#include <QTextStream>
#include <QTimer>
#include <cstdio>

#include "gui/main_window.hpp"
#include "gui/screenshot.hpp"

namespace {

const char* kUsage =
    "usage: ringsim-gui [TRACE.json] [--compare TRACE2.json]\n"
    "       ringsim-gui --screenshot OUT.png|OUT.svg TRACE.json [--compare TRACE2.json]"
    " [--size WxH] [--view heatmap|lanes]\n"
    "Shows ringsim traces (ringsim run --trace FILE) as a timeline of ring steps.\n"
    "Set RINGSIM_BIN to the ringsim program if it is not next to ringsim-gui or on PATH.\n"
    "  -h, --help     this text\n"
    "  -V, --version  the version\n";

int fail(const QString& message) {
  QTextStream(stderr) << "ringsim-gui: error: " << message << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  ringsim::gui::ScreenshotArgs shot;
  QString size_text;
  bool screenshot = false;
  QStringList positional;
  for (int i = 1; i < argc; ++i) {
    const QString a = QString::fromLocal8Bit(argv[i]);
    auto value = [&](QString* out) {
      if (i + 1 >= argc) return false;
      *out = QString::fromLocal8Bit(argv[++i]);
      return true;
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--version" || a == "-V") {
      std::printf("ringsim-gui %s\n", RINGSIM_VERSION);
      return 0;
    } else if (a == "--screenshot") {
      screenshot = true;
      if (!value(&shot.out)) return fail("--screenshot needs an output file (.png or .svg)");
    } else if (a == "--compare") {
      if (!value(&shot.compare)) return fail("--compare needs a trace file");
    } else if (a == "--view") {
      if (!value(&shot.view) || (shot.view != "heatmap" && shot.view != "lanes"))
        return fail("--view must be heatmap or lanes (default: heatmap from 64 devices)");
    } else if (a == "--size") {
      if (!value(&size_text)) return fail("--size needs WxH, e.g. 1600x900");
    } else if (a.startsWith("-") && a != "-") {
      // Qt's own options (-platform, -style, ...) are allowed in the window.
      if (!screenshot && (a == "-platform" || a == "-style" || a == "-geometry")) {
        ++i;
        continue;
      }
      return fail("unknown option " + a + "; see --help");
    } else {
      positional << a;
    }
  }
  if (positional.size() > 1)
    return fail("one trace at most (got " + QString::number(positional.size()) +
                "); use --compare for a second");
  if (!size_text.isEmpty()) {
    static const QRegularExpression re(R"(^(\d{3,5})x(\d{3,5})$)");
    const auto m = re.match(size_text);
    if (!m.hasMatch())
      return fail("--size must be WxH within 200x100 .. 20000x20000, got " + size_text);
    shot.size = QSize(m.captured(1).toInt(), m.captured(2).toInt());
  }

  if (screenshot) {
    if (positional.isEmpty()) return fail("--screenshot needs a trace file");
    shot.trace = positional.front();
    QTextStream err(stderr);
    std::vector<ringsim::gui::LoadedTrace> traces;
    if (const int rc = ringsim::gui::load_screenshot_traces(shot, err, &traces); rc != 0) return rc;
    // No window: render with the offscreen platform whatever the display, and
    // keep Qt's start-up chatter (e.g. about XDG_RUNTIME_DIR) off stderr, which
    // scripts read for our one-line errors.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& msg) {
      if (type == QtCriticalMsg || type == QtFatalMsg)
        QTextStream(stderr) << "ringsim-gui: error: " << msg << "\n";
    });
    QGuiApplication app(argc, argv);
    return ringsim::gui::render_screenshot(shot, traces, err);
  }

  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
      qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    return fail("no display; run under xvfb-run, set QT_QPA_PLATFORM, or use --screenshot");

  QApplication app(argc, argv);
  QApplication::setApplicationName("ringsim-gui");
  ringsim::gui::MainWindow window;
  window.show();
  const QString trace = positional.isEmpty() ? QString() : positional.front();
  const QString compare = shot.compare;
  QTimer::singleShot(0, &window, [&window, trace, compare] {
    if (!trace.isEmpty() && window.open_trace(trace) && !compare.isEmpty())
      window.open_comparison(compare);
  });
  return app.exec();
}
