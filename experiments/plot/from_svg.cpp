#include "experiments/plot/from_svg.hpp"

#include <QBuffer>
#include <QImage>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgRenderer>

#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"
#include "models/core/input_file.hpp"

namespace ringsim::plot {

namespace {

// PNG at 2x the SVG's own size: a figure for a design doc stays sharp.
QByteArray to_png(QSvgRenderer& svg) {
  const QSize size = svg.defaultSize() * 2;
  QImage img(size, QImage::Format_ARGB32);
  img.fill(Qt::white);
  QPainter p(&img);
  svg.render(&p);
  p.end();
  QByteArray png;
  QBuffer buf(&png);
  buf.open(QIODevice::WriteOnly);
  if (!img.save(&buf, "PNG", 0)) throw InputError("OUT: cannot encode the image as PNG");
  return png;
}

// PDF of one page the SVG's size (points = the SVG's pixels at 72 dpi): vector, not raster.
QByteArray to_pdf(QSvgRenderer& svg) {
  QByteArray pdf;
  QBuffer buf(&pdf);
  buf.open(QIODevice::WriteOnly);
  QPdfWriter w(&buf);
  w.setResolution(72);
  w.setPageSize(QPageSize(QSizeF(svg.defaultSize()), QPageSize::Point));
  w.setPageMargins(QMarginsF(0, 0, 0, 0));
  w.setCreator("ringsim-plot");
  QPainter p(&w);
  svg.render(&p);
  p.end();
  return pdf;
}

}  // namespace

void convert_svg(const std::string& in, const std::string& out, const std::string& format) {
  check_outputs({{"OUT", out}}, {{"IN.svg", in}});
  // 64 MiB: validate's figure of 600 cases is about 200 KB.
  const auto text = read_input_file("IN.svg", in, 64u << 20);
  QSvgRenderer svg(QByteArray(text.data(), static_cast<qsizetype>(text.size())));
  if (!svg.isValid() || svg.defaultSize().isEmpty())
    throw InputError("IN.svg " + in + ": not an SVG Qt can render");
  const QByteArray bytes = format == "pdf" ? to_pdf(svg) : to_png(svg);
  AtomicFile f(out, "OUT");
  f.write(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
  f.commit();
}

}  // namespace ringsim::plot
