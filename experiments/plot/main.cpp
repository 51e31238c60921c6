// ringsim-plot SPEC.json OUT.png [OUT.svg]: renders an experiment's plot spec
// (experiments/plot_spec.hpp) offscreen with Qt 6 Charts. A separate program so
// the ringsim CLI does not link Qt; `ringsim experiment` runs it as a child.
#include <QApplication>
#include <QBuffer>
#include <QImage>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "experiments/plot/chart.hpp"
#include "experiments/plot/from_svg.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"
#include "models/core/input_file.hpp"

namespace {
// Headless runs have no XDG runtime dir; Qt's warning about it is noise.
void quiet_handler(QtMsgType type, const QMessageLogContext&, const QString& msg) {
  if (type == QtDebugMsg || type == QtInfoMsg) return;
  if (msg.contains("XDG_RUNTIME_DIR")) return;
  std::cerr << "ringsim-plot: qt: " << msg.toStdString() << "\n";
}
void offscreen_unless_display() {
  // No display (CI, ssh): render offscreen. A user's explicit choice wins.
  if (!std::getenv("QT_QPA_PLATFORM") && !std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY"))
    setenv("QT_QPA_PLATFORM", "offscreen", 1);
}

// --from-svg IN.svg OUT.png|OUT.pdf: the format is the output's extension.
int from_svg(char** argv) {
  const std::string in = argv[2], out = argv[3];
  const auto dot = out.rfind('.');
  const auto ext = dot == std::string::npos ? std::string() : out.substr(dot + 1);
  if (ext != "png" && ext != "pdf") {
    std::cerr << "ringsim-plot: error: OUT: name a .png or a .pdf file, got '"
              << ringsim::one_line(out) << "'\n";
    return 2;
  }
  offscreen_unless_display();
  qInstallMessageHandler(quiet_handler);
  int qargc = 1;
  QApplication app(qargc, argv);
  try {
    ringsim::plot::convert_svg(in, out, ext);
  } catch (const ringsim::InputError& e) {
    std::cerr << "ringsim-plot: error: " << ringsim::one_line(e.what()) << "\n";
    return 2;
  }
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::string(argv[1]) == "--version" || std::string(argv[1]) == "-V")) {
    std::cout << "ringsim-plot " << RINGSIM_VERSION << "\n";
    return 0;
  }
  if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::cout
        << "usage: ringsim-plot SPEC.json OUT.png [OUT.svg]\n"
           "Renders a ringsim plot spec (schema ringsim-plot-1, experiments/README.md) to PNG\n"
           "and, when OUT.svg is given, the same figure as SVG.\n"
           "       ringsim-plot --from-svg IN.svg OUT.png|OUT.pdf\n"
           "Renders an SVG (ringsim validate --plot's) to PNG or PDF.\n";
    return 0;
  }
  if (argc == 4 && std::string(argv[1]) == "--from-svg") return from_svg(argv);
  if (argc != 3 && argc != 4) {
    std::cerr << "ringsim-plot: error: usage: ringsim-plot SPEC.json OUT.png [OUT.svg]\n";
    return 2;
  }
  // No display (CI, ssh): render offscreen. A user's explicit choice wins.
  if (!std::getenv("QT_QPA_PLATFORM") && !std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY"))
    setenv("QT_QPA_PLATFORM", "offscreen", 1);
  nlohmann::json spec;
  const std::string spec_path = argv[1], out_path = argv[2];
  const std::string svg_path = argc == 4 ? argv[3] : "";
  try {
    // The same rules as ringsim's: a directory, FIFO or device as the spec is
    // refused (a FIFO with no writer used to hang), the output is judged
    // before rendering and is never the spec itself.
    if (svg_path.empty())
      ringsim::check_outputs({{"OUT.png", out_path}}, {{"SPEC.json", spec_path}});
    else
      ringsim::check_outputs({{"OUT.png", out_path}, {"OUT.svg", svg_path}},
                             {{"SPEC.json", spec_path}});
    // 64 MiB: a plot spec of 100,000 points per panel is a few MiB.
    const auto text = ringsim::read_input_file("SPEC.json", spec_path, 64u << 20);
    spec = nlohmann::json::parse(text);
  } catch (const ringsim::InputError& e) {
    std::cerr << "ringsim-plot: error: " << ringsim::one_line(e.what()) << "\n";
    return 2;
  } catch (const nlohmann::json::exception& e) {
    std::cerr << "ringsim-plot: error: SPEC.json: " << ringsim::one_line(spec_path)
              << " is not JSON (" << ringsim::one_line(e.what()) << ")\n";
    return 2;
  }
  qInstallMessageHandler(quiet_handler);
  int qargc = 1;
  QApplication app(qargc, argv);
  try {
    const QImage img = ringsim::plot::render_spec(spec);
    // PNG is lossless; quality 0 asks for the strongest compression (smaller
    // files to commit, same pixels). Encoded in memory, then written like
    // every ringsim output (models/core/atomic_file.hpp): whole or not at all.
    QByteArray png;
    QBuffer buf(&png);
    buf.open(QIODevice::WriteOnly);
    if (!img.save(&buf, "PNG", 0)) {
      std::cerr << "ringsim-plot: error: OUT.png: cannot encode the image\n";
      return 2;
    }
    ringsim::AtomicFile out(out_path, "OUT.png");
    out.write(std::string_view(png.constData(), static_cast<std::size_t>(png.size())));
    out.commit();
    if (!svg_path.empty()) {
      const QByteArray svg = ringsim::plot::render_svg(
          spec, QString::fromStdString(spec.value("title", std::string())));
      ringsim::AtomicFile sout(svg_path, "OUT.svg");
      sout.write(std::string_view(svg.constData(), static_cast<std::size_t>(svg.size())));
      sout.commit();
    }
  } catch (const ringsim::InputError& e) {
    std::cerr << "ringsim-plot: error: " << ringsim::one_line(e.what()) << "\n";
    return 2;
  } catch (const ringsim::plot::SpecError& e) {
    std::cerr << "ringsim-plot: error: " << ringsim::one_line(spec_path) << ": "
              << ringsim::one_line(e.what()) << "\n";
    return 2;
  } catch (const nlohmann::json::exception& e) {
    std::cerr << "ringsim-plot: error: " << ringsim::one_line(spec_path)
              << ": spec: " << ringsim::one_line(e.what()) << "\n";
    return 2;
  }
  return 0;
}
