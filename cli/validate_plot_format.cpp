// validate --plot in the format its extension names: SVG written here, PNG
// and PDF rendered from that SVG by ringsim-plot (Qt Svg) in a child, so the
// CLI does not link Qt.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/validate_plot.hpp"
#include "models/core/errors.hpp"
#include "proc/child.hpp"

namespace ringsim::cli {

namespace {

std::string extension(const std::string& path) {
  const auto dot = path.rfind('.');
  if (dot == std::string::npos || path.find('/', dot) != std::string::npos) return "";
  auto e = path.substr(dot + 1);
  for (auto& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return e;
}

}  // namespace

void check_plot_name(const std::string& path) {
  if (path.empty()) return;
  const auto ext = extension(path);
  if (ext != "svg" && ext != "png" && ext != "pdf")
    throw InputError(
        fmt::format("--plot: the extension names the format: .svg, .png or .pdf; got '{}'", path));
  if (ext != "svg" && proc::sibling_exe("ringsim-plot").empty())
    throw InputError(
        fmt::format("--plot {}: .{} is rendered by ringsim-plot, which is not built here (it needs "
                    "RINGSIM_GUI=ON with Qt 6 Charts and Svg); give a .svg path",
                    path, ext));
}

std::string validation_plot_bytes(const std::vector<ValidationRow>& rows, const ValidationSet& set,
                                  const std::string& path) {
  const auto svg = validation_plot_svg(rows, set);
  const auto ext = extension(path);
  if (ext == "svg") return svg;
  namespace fs = std::filesystem;
  const auto base = fs::temp_directory_path() / fmt::format("ringsim-validate-{}", ::getpid());
  const auto in = base.string() + ".svg", out = base.string() + "." + ext;
  {
    std::ofstream f(in, std::ios::binary);
    f << svg;
    if (!f) throw InputError(fmt::format("--plot: cannot write a scratch file {}", in));
  }
  const auto r = proc::run({proc::sibling_exe("ringsim-plot"), "--from-svg", in, out}, 120);
  std::stringstream bytes;
  if (r.ok()) bytes << std::ifstream(out, std::ios::binary).rdbuf();
  std::error_code ec;
  fs::remove(in, ec);
  fs::remove(out, ec);
  if (!r.ok() || bytes.str().empty())
    throw InputError(fmt::format("--plot {}: ringsim-plot could not render it ({})", path,
                                 r.ok() ? "no output" : r.failure()));
  return bytes.str();
}

}  // namespace ringsim::cli
