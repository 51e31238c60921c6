// ringsim-plot SPEC.json OUT.png: renders an experiment's plot spec
// (experiments/plot_spec.hpp) offscreen with Qt 6 Charts. A separate program so
// the ringsim CLI does not link Qt; `ringsim experiment` runs it as a child.
#include <QApplication>
#include <QImage>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "experiments/plot/chart.hpp"

namespace {
// Headless runs have no XDG runtime dir; Qt's warning about it is noise.
void quiet_handler(QtMsgType type, const QMessageLogContext&, const QString& msg) {
  if (type == QtDebugMsg || type == QtInfoMsg) return;
  if (msg.contains("XDG_RUNTIME_DIR")) return;
  std::cerr << "ringsim-plot: qt: " << msg.toStdString() << "\n";
}
}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::cout
        << "usage: ringsim-plot SPEC.json OUT.png\n"
           "Renders a ringsim plot spec (schema ringsim-plot-1, experiments/README.md) to PNG.\n";
    return 0;
  }
  if (argc != 3) {
    std::cerr << "ringsim-plot: error: usage: ringsim-plot SPEC.json OUT.png\n";
    return 2;
  }
  // No display (CI, ssh): render offscreen. A user's explicit choice wins.
  if (!std::getenv("QT_QPA_PLATFORM") && !std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY"))
    setenv("QT_QPA_PLATFORM", "offscreen", 1);
  nlohmann::json spec;
  {
    std::ifstream f(argv[1]);
    if (!f) {
      std::cerr << "ringsim-plot: error: SPEC.json: cannot read " << argv[1] << "\n";
      return 2;
    }
    try {
      spec = nlohmann::json::parse(f);
    } catch (const nlohmann::json::exception& e) {
      std::cerr << "ringsim-plot: error: SPEC.json: " << argv[1] << " is not JSON (" << e.what()
                << ")\n";
      return 2;
    }
  }
  qInstallMessageHandler(quiet_handler);
  int qargc = 1;
  QApplication app(qargc, argv);
  try {
    const QImage img = ringsim::plot::render_spec(spec);
    // PNG is lossless; quality 0 asks for the strongest compression (smaller
    // files to commit, same pixels).
    if (!img.save(QString::fromLocal8Bit(argv[2]), "PNG", 0)) {
      std::cerr << "ringsim-plot: error: OUT.png: cannot write " << argv[2] << "\n";
      return 2;
    }
  } catch (const ringsim::plot::SpecError& e) {
    std::cerr << "ringsim-plot: error: " << argv[1] << ": " << e.what() << "\n";
    return 2;
  } catch (const nlohmann::json::exception& e) {
    std::cerr << "ringsim-plot: error: " << argv[1] << ": spec: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
