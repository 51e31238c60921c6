// Scale: a 256 x 256 ring (about 196k events) and a 4096-device trace load and
// draw with level of detail. Times are printed for docs/gui.md, not asserted
// (CI machines differ); what is asserted is that the drawing stays bounded
// (grouped lanes, at most a few primitives per pixel column).
#include <QApplication>
#include <QElapsedTimer>
#include <QtTest>
#include <ctime>

#include "gui/main_window.hpp"
#include "gui/timeline_widget.hpp"
#include "gui/trace_summary.hpp"
#include "tests/gui/trace_fixtures.hpp"

using namespace ringsim::gui;

namespace {
double ms(const QElapsedTimer& t) {
  return static_cast<double>(t.nsecsElapsed()) / 1e6;
}
// CPU time of this process, so a busy CI machine does not inflate the breakdown.
double cpu_ms() {
  return 1e3 * static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}
}  // namespace

class LargeTraceTest : public QObject {
  Q_OBJECT

 private slots:
  void ring_256_by_256() {
    test::RingSpec spec;
    spec.devices = 256;
    spec.causal = true;
    spec.transfer_us = 120;  // some waits too: four phases in play
    const std::string json = test::ring_trace_json(spec);
    const QString path = test::write_temp(json, "ring256.json");

    // Where the time goes, in CPU ms.
    double c0 = cpu_ms();
    const Trace parsed = read_trace_file(path.toStdString());
    const double parse_cpu = cpu_ms() - c0;
    c0 = cpu_ms();
    const Summary sum = summarize(parsed);
    const double summary_cpu = cpu_ms() - c0;
    QCOMPARE(sum.devices, 256);

    MainWindow w;
    w.resize(1600, 1000);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QElapsedTimer t;
    t.start();
    c0 = cpu_ms();
    QVERIFY(w.open_trace(path));
    const double open_ms = ms(t), open_cpu = cpu_ms() - c0;
    const Trace& tr = *w.traces().front().trace;
    QCOMPARE(tr.lanes.size(), std::size_t{256});

    TimelineWidget* tl = w.timeline();
    t.restart();
    tl->repaint();  // the full view: every event is visible
    const double paint_fit_ms = ms(t);
    t.restart();
    for (int i = 0; i < 10; ++i) {
      tl->zoom_in();
      tl->repaint();
    }
    for (int i = 0; i < 10; ++i) {
      tl->pan_by_fraction(0.05);
      tl->repaint();
    }
    const double interact_ms = ms(t) / 20;
    qInfo("256x256 ring: %zu events, %.1f MB of JSON", tr.events.size(), json.size() / 1e6);
    qInfo("  open (read + parse + index + summary + layout): %.0f ms wall, %.0f ms CPU", open_ms,
          open_cpu);
    qInfo("  of which read + parse + index %.0f ms CPU, summary %.0f ms CPU", parse_cpu,
          summary_cpu);
    qInfo("  paint, whole trace in view: %.1f ms; zoom or pan + repaint: %.1f ms on average",
          paint_fit_ms, interact_ms);
    qInfo("  widget %dx%d, %zu drawn lanes (group size %d)", tl->width(), tl->height(),
          tl->scene().bands()[0].layout.groups.size(), tl->scene().bands()[0].layout.group_size);
  }

  void thousands_of_devices_group_lanes() {
    test::RingSpec spec;
    spec.devices = 4096;
    spec.steps = 4;
    const QString path = test::write_temp(test::ring_trace_json(spec), "wide.json");
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QElapsedTimer t;
    t.start();
    QVERIFY(w.open_trace(path));
    // Past 64 devices the trace opens on the heatmap of waits; the lanes are one key away.
    QVERIFY(w.timeline()->scene().mode() == ViewMode::Heatmap);
    w.timeline()->set_mode(ViewMode::Lanes);
    w.timeline()->repaint();
    qInfo("4096 devices x 4 steps: %zu events, open + first paint %.0f ms",
          w.traces().front().trace->events.size(), ms(t));
    const auto& band = w.timeline()->scene().bands()[0];
    qInfo("  %zu drawn lanes of %d devices each", band.layout.groups.size(),
          band.layout.group_size);
    QVERIFY(band.layout.group_size > 1);
    QVERIFY(band.layout.groups.size() < 400);
    QCOMPARE(band.layout.groups.back().last, 4096);
    // A grouped lane's tooltip speaks for its devices.
    const LaneGroup& g = band.layout.groups[3];
    const VisualRow rs = row_span(g, Row::Compute);
    const QRectF plot = w.timeline()->scene().plot_rect();
    const QPointF p(w.timeline()->view().x_of(150, plot.left(), plot.width()), rs.y + rs.h / 2);
    const QString tip = w.timeline()->tooltip_at(p);
    QVERIFY2(tip.contains(QString("devices %1").arg(g.first)) && tip.contains("partial 100%"),
             qPrintable(tip));
  }
};

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  LargeTraceTest t;
  return QTest::qExec(&t, argc, argv);
}

#include "test_large_trace.moc"
