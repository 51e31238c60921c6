#include "gui/export_view.hpp"

#include <QBuffer>
#include <QFileInfo>
#include <QImage>
#include <QImageWriter>
#include <QPainter>
#ifdef RINGSIM_HAVE_QT_SVG
#include <QSvgGenerator>
#endif

#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"

namespace ringsim::gui {

namespace {
// Like every ringsim output (models/core/atomic_file.hpp): judged first,
// written whole or not at all, a device or link never replaced.
QString write_output(const QString& path, const QByteArray& bytes) {
  try {
    AtomicFile f(path.toStdString(), "export");
    f.write(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
    f.commit();
  } catch (const InputError& e) {
    return QString::fromStdString(one_line(e.what()));
  }
  return {};
}
}  // namespace

bool svg_supported() {
#ifdef RINGSIM_HAVE_QT_SVG
  return true;
#else
  return false;
#endif
}

QString export_view(const QString& path, const std::vector<LoadedTrace>& traces,
                    const TimeView& view, QSize size, const TimelineScene::Selection& sel,
                    const TimelineScene* like) {
  if (size.width() < 200 || size.height() < 100 || size.width() > 20000 || size.height() > 20000)
    return QString("image size %1x%2 is outside 200x100 .. 20000x20000")
        .arg(size.width())
        .arg(size.height());
  TimelineScene scene;
  scene.set_traces(traces);
  if (like) {
    scene.set_mode(like->mode());
    scene.set_lane_window(like->lane_window_first(), like->lane_window_count());
    scene.set_show_critical_path(like->show_critical_path());
  }
  scene.set_size(size);
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == "svg") {
#ifdef RINGSIM_HAVE_QT_SVG
    QByteArray svg;
    QBuffer buf(&svg);
    buf.open(QIODevice::WriteOnly);
    QSvgGenerator gen;
    gen.setOutputDevice(&buf);
    gen.setSize(size);
    gen.setViewBox(QRect(QPoint(0, 0), size));
    gen.setTitle("ringsim timeline");
    gen.setDescription("Ring attention steps per device, drawn by ringsim-gui");
    QPainter p;
    if (!p.begin(&gen)) return "cannot write " + path;
    scene.paint(p, view, sel);
    p.end();
    return write_output(path, svg);
#else
    return "SVG export needs Qt6::Svg (Debian package qt6-svg-dev); save as .png instead";
#endif
  }
  QImage img(size, QImage::Format_ARGB32_Premultiplied);
  {
    QPainter p(&img);
    scene.paint(p, view, sel);
  }
  QByteArray encoded;
  QBuffer buf(&encoded);
  buf.open(QIODevice::WriteOnly);
  QImageWriter writer(&buf, suffix.isEmpty() ? QByteArray("png") : suffix.toLatin1());
  if (!writer.write(img)) return "cannot write " + path + ": " + writer.errorString();
  return write_output(path, encoded);
}

}  // namespace ringsim::gui
