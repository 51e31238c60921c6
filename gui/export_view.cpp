#include "gui/export_view.hpp"

#include <QFileInfo>
#include <QImage>
#include <QImageWriter>
#include <QPainter>
#ifdef RINGSIM_HAVE_QT_SVG
#include <QSvgGenerator>
#endif

namespace ringsim::gui {

bool svg_supported() {
#ifdef RINGSIM_HAVE_QT_SVG
  return true;
#else
  return false;
#endif
}

QString export_view(const QString& path, const std::vector<LoadedTrace>& traces,
                    const TimeView& view, QSize size, const TimelineScene::Selection& sel) {
  if (size.width() < 200 || size.height() < 100 || size.width() > 20000 || size.height() > 20000)
    return QString("image size %1x%2 is outside 200x100 .. 20000x20000")
        .arg(size.width())
        .arg(size.height());
  TimelineScene scene;
  scene.set_traces(traces);
  scene.set_size(size);
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == "svg") {
#ifdef RINGSIM_HAVE_QT_SVG
    QSvgGenerator gen;
    gen.setFileName(path);
    gen.setSize(size);
    gen.setViewBox(QRect(QPoint(0, 0), size));
    gen.setTitle("ringsim timeline");
    gen.setDescription("Ring attention steps per device, drawn by ringsim-gui");
    QPainter p;
    if (!p.begin(&gen)) return "cannot write " + path;
    scene.paint(p, view, sel);
    p.end();
    if (!QFileInfo(path).isFile()) return "cannot write " + path;
    return {};
#else
    return "SVG export needs Qt6::Svg (Debian package qt6-svg-dev); save as .png instead";
#endif
  }
  QImage img(size, QImage::Format_ARGB32_Premultiplied);
  {
    QPainter p(&img);
    scene.paint(p, view, sel);
  }
  QImageWriter writer(path, suffix.isEmpty() ? QByteArray("png") : QByteArray());
  if (!writer.write(img)) return "cannot write " + path + ": " + writer.errorString();
  return {};
}

}  // namespace ringsim::gui
