// The window, the timeline widget, the screenshot command and the run panel,
// under the offscreen platform. The run panel talks to a stand-in `ringsim`
// script (RINGSIM_BIN), so these tests need no simulator.
#include <QApplication>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QMimeData>
#include <QProcess>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QUrl>
#include <QtTest>
#include <cmath>
#include <memory>

#include "gui/export_view.hpp"
#include "gui/main_window.hpp"
#include "gui/run_panel.hpp"
#include "gui/screenshot.hpp"
#include "gui/summary_panel.hpp"
#include "gui/timeline_widget.hpp"
#include "tests/gui/trace_fixtures.hpp"

using namespace ringsim::gui;
using test::RingSpec;

namespace {

struct Errors {
  QStringList titles, messages;
  MainWindow::ErrorSink sink() {
    return [this](const QString& t, const QString& m) {
      titles << t;
      messages << m;
    };
  }
};

QString ring_file(int devices, const std::string& layout = "ring", bool causal = false,
                  const QString& name = {}) {
  RingSpec spec;
  spec.devices = devices;
  spec.layout = layout;
  spec.causal = causal;
  return test::write_temp(
      test::ring_trace_json(spec),
      name.isEmpty() ? QString("ring%1-%2.json").arg(devices).arg(layout.c_str()) : name);
}

// Centre of a row of `device`'s lane at time t in the window's timeline.
QPoint point_at(const TimelineWidget& w, int band, int device, Row row, double t) {
  const auto& b = w.scene().bands()[static_cast<std::size_t>(band)];
  const LaneGroup& g = b.layout.groups[static_cast<std::size_t>(device / b.layout.group_size)];
  const VisualRow rs = row_span(g, row);
  const QRectF plot = w.scene().plot_rect();
  return QPointF(w.view().x_of(t, plot.left(), plot.width()), rs.y + rs.h / 2).toPoint();
}

bool near(const QColor& a, const QColor& b, int tol = 8) {
  return std::abs(a.red() - b.red()) <= tol && std::abs(a.green() - b.green()) <= tol &&
         std::abs(a.blue() - b.blue()) <= tol;
}

// Pixels of colour `c` along the middle line of a row, over the plot.
int count_on_row(const QImage& img, const TimelineScene& scene, const LaneGroup& g, Row row,
                 const QColor& c) {
  const VisualRow rs = row_span(g, row);
  const int y = static_cast<int>(rs.y + rs.h / 2);
  const QRectF plot = scene.plot_rect();
  int n = 0;
  for (int x = static_cast<int>(plot.left()); x < static_cast<int>(plot.right()); ++x)
    n += near(img.pixelColor(x, y), c);
  return n;
}

struct CliResult {
  int code = -1;
  QString err;
};

CliResult run_gui(const QStringList& args) {
  QProcess p;
  p.start(RINGSIM_GUI_BIN, args);
  p.waitForFinished(60000);
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
          QString::fromUtf8(p.readAllStandardError())};
}

}  // namespace

class TimelineTest : public QObject {
  Q_OBJECT

 private slots:
  void loading_builds_one_lane_per_device() {
    MainWindow w;
    Errors errors;
    w.set_error_sink(errors.sink());
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.open_trace(ring_file(8)));
    const auto& bands = w.timeline()->scene().bands();
    QCOMPARE(bands.size(), std::size_t{1});
    QCOMPARE(bands[0].layout.group_size, 1);
    QCOMPARE(bands[0].layout.groups.size(), std::size_t{8});
    for (int i = 0; i < 8; ++i) {
      QCOMPARE(bands[0].layout.groups[static_cast<std::size_t>(i)].first, i);
      QVERIFY(bands[0].layout.groups[static_cast<std::size_t>(i)].h > 10);
    }
    QVERIFY(errors.messages.isEmpty());
  }

  void zoom_and_pan_change_the_visible_range() {
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.open_trace(ring_file(4)));
    TimelineWidget* tl = w.timeline();
    tl->setFocus();
    const double span0 = tl->view().span(), t00 = tl->view().t0();
    QVERIFY(t00 < 0 && tl->view().t1() > 400);  // fit shows the whole 400 us

    QTest::keyClick(tl, Qt::Key_Plus);
    QVERIFY(std::abs(tl->view().span() - span0 / 1.5) < 1e-6);
    const double t0 = tl->view().t0();
    QTest::keyClick(tl, Qt::Key_Right);
    QVERIFY(std::abs(tl->view().t0() - (t0 + 0.1 * tl->view().span())) < 1e-6);
    QTest::keyClick(tl, Qt::Key_Minus);
    QVERIFY(std::abs(tl->view().span() - span0) < 1e-6);

    // Wheel up zooms in around the pointer: the time under it stays put.
    const QPoint at = point_at(*tl, 0, 1, Row::Compute, 250);
    const QRectF plot = tl->scene().plot_rect();
    const double t_at = tl->view().t_of(at.x(), plot.left(), plot.width());
    QWheelEvent wheel(at, tl->mapToGlobal(at), QPoint(), QPoint(0, 240), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(tl, &wheel);
    QVERIFY(tl->view().span() < span0 / 1.4);
    QVERIFY(std::abs(tl->view().t_of(at.x(), plot.left(), plot.width()) - t_at) < 1e-6);

    // Dragging right by 100 px shows earlier times.
    const double before = tl->view().t0();
    const double us_per_px = tl->view().span() / plot.width();
    QTest::mousePress(tl, Qt::LeftButton, {}, at);
    QTest::mouseMove(tl, at + QPoint(50, 0));
    QTest::mouseMove(tl, at + QPoint(100, 0));
    QTest::mouseRelease(tl, Qt::LeftButton, {}, at + QPoint(100, 0));
    QVERIFY(std::abs(tl->view().t0() - (before - 100 * us_per_px)) < 1e-6);

    QTest::keyClick(tl, Qt::Key_F);
    QVERIFY(std::abs(tl->view().span() - span0) < 1e-6);
    QCOMPARE(tl->view().t0(), t00);

    // Zoom to one ring step: step 2 runs 200..300 us on every device.
    QVERIFY(tl->zoom_to_step(2));
    QVERIFY(tl->view().t0() < 200 && tl->view().t0() > 190);
    QVERIFY(tl->view().t1() > 300 && tl->view().t1() < 310);
    QTest::keyClick(tl, Qt::Key_BracketRight);
    QCOMPARE(tl->current_step(), 3);
    QVERIFY(!tl->zoom_to_step(99));
  }

  void hover_and_click_describe_a_bar() {
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.open_trace(ring_file(4)));
    TimelineWidget* tl = w.timeline();
    // Device 2, step 1: compute on KV block 1 from 100 to 200 us.
    const QPoint p = point_at(*tl, 0, 2, Row::Compute, 150);
    const QString tip = tl->tooltip_at(p);
    QVERIFY2(tip.contains("device 2") && tip.contains("partial") && tip.contains("step 1") &&
                 tip.contains("KV block 1") && tip.contains("start 100 us") &&
                 tip.contains("duration 100 us") && tip.contains("bytes 0 B"),
             qPrintable(tip));
    const QString send_tip = tl->tooltip_at(point_at(*tl, 0, 2, Row::Send, 130));
    QVERIFY2(
        send_tip.contains("send") && send_tip.contains("16.8 MB") && send_tip.contains("device 3"),
        qPrintable(send_tip));

    QSignalSpy selected(tl, &TimelineWidget::event_selected);
    QTest::mouseClick(tl, Qt::LeftButton, {}, p);
    QCOMPARE(selected.count(), 1);
    const long ev = tl->selection().event;
    QVERIFY(ev >= 0);
    QVERIFY2(w.details_text().contains("step: 1") && w.details_text().contains("KV block: 1") &&
                 w.details_text().contains("duration: 100 us"),
             qPrintable(w.details_text()));
    // Clicking empty space clears the selection.
    QTest::mouseClick(tl, Qt::LeftButton, {}, QPoint(5, 5));
    QCOMPARE(tl->selection().event, -1L);
  }

  void summary_matches_the_trace() {
    MainWindow w;
    QVERIFY(w.open_trace(ring_file(4)));
    // 4 devices x 100 us of compute, transfers hidden (test_trace_data checks the arithmetic).
    SummaryPanel* s = w.summary();
    QCOMPARE(s->metric_text(SummaryPanel::kTotal, 0), QString("400 us"));
    QCOMPARE(s->metric_text(SummaryPanel::kIdeal, 0), QString("400 us"));
    QCOMPARE(s->metric_text(SummaryPanel::kEfficiency, 0), QString("100.0 %"));
    QCOMPARE(s->metric_text(SummaryPanel::kExposed, 0), QString("0 us"));
    QCOMPARE(s->metric_text(SummaryPanel::kIdle, 0), QString("0.0 %"));
    QCOMPARE(s->metric_text(SummaryPanel::kDevices, 0), QString("4"));
    QCOMPARE(s->steps_table()->rowCount(), 4);
    QCOMPARE(s->steps_table()->item(0, 1)->text(), QString("100 us"));
    QCOMPARE(s->steps_table()->item(0, 2)->text(), QString("60 us"));

    // With the simulator's own summary in the trace, its numbers are shown and marked.
    RingSpec spec;
    spec.summary_json = R"({"time_s":0.00045,"efficiency":0.5})";
    QVERIFY(w.open_trace(test::write_temp(test::ring_trace_json(spec), "with-summary.json")));
    QCOMPARE(s->metric_text(SummaryPanel::kTotal, 0), QString("450 us *"));
    QCOMPARE(s->metric_text(SummaryPanel::kEfficiency, 0), QString("50.0 % *"));
    QCOMPARE(s->metric_text(SummaryPanel::kIdeal, 0), QString("400 us"));
  }

  void malformed_traces_show_an_error_and_keep_the_view() {
    MainWindow w;
    Errors errors;
    w.set_error_sink(errors.sink());
    QVERIFY(w.open_trace(ring_file(4)));
    const QString good_title = w.traces().front().title;
    const QStringList bad = {
        test::write_temp("", "empty.json"),
        test::write_temp("{\"traceEvents\":[{\"name\":\"partial\",\"ph\":\"X\",\"ts\":",
                         "truncated.json"),
        test::write_temp(R"({"traceEvents":[{"name":"x","ph":"X","ts":"soon","dur":1,"tid":0}]})",
                         "wrong-type.json"),
        test::write_temp(R"({"traceEvents":[]})", "no-events.json"),
        QString("/nonexistent/trace.json")};
    for (const QString& path : bad) {
      QVERIFY(!w.open_trace(path));
      QVERIFY(!w.open_comparison(path));
    }
    QCOMPARE(errors.messages.size(), 2 * bad.size());
    for (const QString& m : errors.messages) {
      QVERIFY2(m.startsWith("trace ") && !m.contains('\n'), qPrintable(m));
    }
    QCOMPARE(errors.titles.front(), QString("Cannot open trace"));
    QCOMPARE(w.traces().size(), std::size_t{1});
    QCOMPARE(w.traces().front().title, good_title);
  }

  void compare_two_traces_on_one_axis() {
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.open_trace(ring_file(4, "ring", true)));
    QVERIFY(w.open_comparison(ring_file(4, "striped", true)));
    const auto& bands = w.timeline()->scene().bands();
    QCOMPARE(bands.size(), std::size_t{2});
    QVERIFY(bands[1].lanes.top() > bands[0].lanes.bottom());
    QCOMPARE(bands[1].layout.groups.size(), std::size_t{4});
    // One axis: the extent covers the longer of the two (the causal ring).
    const double ring_end = w.traces()[0].trace->end_us, striped_end = w.traces()[1].trace->end_us;
    QVERIFY(ring_end > striped_end);
    QCOMPARE(w.timeline()->view().extent_end(), ring_end);
    QVERIFY(w.summary()->metric_text(SummaryPanel::kTotal, 1) != QString());
    w.close_comparison();
    QCOMPARE(w.timeline()->scene().bands().size(), std::size_t{1});
  }

  void drop_two_files_to_compare() {
    MainWindow w;
    // A drag of files is accepted...
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(ring_file(4)), QUrl::fromLocalFile(ring_file(3))});
    QDragEnterEvent enter(QPoint(100, 100), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &enter);
    QVERIFY(enter.isAccepted());
    // ... and dropping them does this (Qt delivers a drop only inside a real drag).
    w.open_dropped({ring_file(4), ring_file(3)}, Qt::NoModifier);
    QCOMPARE(w.traces().size(), std::size_t{2});
    QCOMPARE(w.traces()[1].trace->lanes.size(), std::size_t{3});
    w.open_dropped({ring_file(5)}, Qt::NoModifier);
    QCOMPARE(w.traces().size(), std::size_t{1});
    w.open_dropped({ring_file(2)}, Qt::ShiftModifier);
    QCOMPARE(w.traces().size(), std::size_t{2});
    QCOMPARE(w.traces()[0].trace->lanes.size(), std::size_t{5});
  }

  void export_png_and_svg() {
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.open_trace(ring_file(4)));
    QTemporaryDir dir;
    const QString png = dir.filePath("view.png");
    QVERIFY(w.export_to(png));
    QImage img(png);
    QCOMPARE(img.size(), w.timeline()->size());
    if (!svg_supported()) QSKIP("built without Qt6::Svg");
    const QString svg = dir.filePath("view.svg");
    QVERIFY(w.export_to(svg));
    QFile f(svg);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray text = f.readAll();
    QVERIFY(text.contains("<svg"));
    QVERIFY(text.contains("device 3"));
  }

  void export_follows_the_output_rules() {
    // As every ringsim output: a link keeps pointing where it did and its
    // target gets the image; a missing directory is one line, nothing written.
    MainWindow w;
    Errors errors;
    w.set_error_sink(errors.sink());
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.open_trace(ring_file(4)));
    QTemporaryDir dir;
    const QString target = dir.filePath("target.png"), link = dir.filePath("link.png");
    QVERIFY(QFile::link(target, link));
    QVERIFY(w.export_to(link));
    QVERIFY(QFileInfo(link).isSymLink());
    QVERIFY(!QImage(target).isNull());
    QVERIFY(!w.export_to(dir.filePath("missing/view.png")));
    QVERIFY(!errors.messages.isEmpty());
    QVERIFY(errors.messages.back().contains("No such file or directory"));
    QVERIFY(!errors.messages.back().contains('\n'));
  }
};

class ScreenshotTest : public QObject {
  Q_OBJECT

 private slots:
  void screenshot_has_bars_in_every_lane() {
    QTemporaryDir dir;
    const QString out = dir.filePath("shot.png");
    const QString ring = ring_file(8, "ring", true), striped = ring_file(8, "striped", true);
    const CliResult r = run_gui({"--screenshot", out, ring, "--compare", striped});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    const QImage img(out);
    QVERIFY(!img.isNull());
    QCOMPARE(img.width(), 1600);

    // Rebuild the layout the program used and look at each lane's pixels.
    TimelineScene scene;
    scene.set_traces({load_trace(ring), load_trace(striped)});
    scene.set_size(img.size());
    QCOMPARE(scene.bands().size(), std::size_t{2});
    for (const auto& band : scene.bands()) {
      QCOMPARE(band.layout.groups.size(), std::size_t{8});
      for (const LaneGroup& g : band.layout.groups) {
        const int compute = count_on_row(img, scene, g, Row::Compute, phase_color(Phase::Partial));
        const int send = count_on_row(img, scene, g, Row::Send, phase_color(Phase::Send));
        QVERIFY2(compute > 20 && send > 20,
                 qPrintable(QString("band %1 lane %2: %3 compute px, %4 send px")
                                .arg(band.trace)
                                .arg(g.first)
                                .arg(compute)
                                .arg(send)));
      }
    }
    // The causal ring's device 0 has masked blocks: far less compute than device 7.
    const auto& ring_groups = scene.bands()[0].layout.groups;
    QVERIFY(count_on_row(img, scene, ring_groups[0], Row::Compute, phase_color(Phase::Partial)) *
                3 <
            count_on_row(img, scene, ring_groups[7], Row::Compute, phase_color(Phase::Partial)));
  }

  void screenshot_svg() {
    if (!svg_supported()) QSKIP("built without Qt6::Svg");
    QTemporaryDir dir;
    const QString out = dir.filePath("shot.svg");
    const CliResult r = run_gui({"--screenshot", out, ring_file(4)});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll().contains("<svg"));
  }

  void bad_input_is_one_line_and_exit_2() {
    QTemporaryDir dir;
    const QString out = dir.filePath("never.png");
    const QString truncated = test::write_temp("{\"traceEvents\":[{\"name\":\"pa", "cut.json");
    const QString good = ring_file(2);
    const QList<QStringList> cases = {
        {"--screenshot", out, truncated},
        {"--screenshot", out, good, "--compare", truncated},
        {"--screenshot", out, test::write_temp("", "empty2.json")},
        {"--screenshot", out, "/nonexistent.json"},
        {"--screenshot", out},
        {"--screenshot", out, good, "--size", "big"},
        {"--screenshot", out, good, "--bogus"},
        {"--screenshot", out, good, "--view", "grid"},
        {"--screenshot", dir.filePath("no/such/dir/x.png"), good},
    };
    for (const QStringList& args : cases) {
      const CliResult r = run_gui(args);
      QVERIFY2(r.code == 2, qPrintable(args.join(' ') + " -> " + QString::number(r.code)));
      const QStringList lines = r.err.trimmed().split('\n');
      QVERIFY2(lines.size() == 1 && lines[0].startsWith("ringsim-gui: error: "),
               qPrintable(args.join(' ') + " -> " + r.err));
      QVERIFY(!QFile::exists(out));
    }
    // The picture over the trace it draws: refused, the trace unchanged.
    QFile before(good);
    QVERIFY(before.open(QIODevice::ReadOnly));
    const QByteArray bytes = before.readAll();
    before.close();
    const CliResult over = run_gui({"--screenshot", good, good});
    QVERIFY2(over.code == 2 && over.err.contains("is the TRACE input"), qPrintable(over.err));
    QFile after(good);
    QVERIFY(after.open(QIODevice::ReadOnly));
    QCOMPARE(after.readAll(), bytes);
  }
};

class RunPanelTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;

  // A stand-in for ringsim: logs its arguments, then behaves as `mode` says.
  QString fake_ringsim(const QString& mode) {
    const QString src = ring_file(4, "ring", true, "fake-result.json");
    const QString path = dir_.filePath("ringsim-" + mode);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(
        QString("#!/bin/sh\n"
                "echo \"$@\" > '%1'\n"
                "out=''\n"
                "while [ $# -gt 0 ]; do [ \"$1\" = --trace ] && out=\"$2\"; shift; done\n"
                "case %2 in\n"
                "  ok) echo 'step 1/2' >&2; cp '%3' \"$out\"; echo '{\"time_s\": 0.0004}' ;;\n"
                "  fail) echo 'ringsim: error: --block must be in [1, 16M], got 0' >&2; exit 2 ;;\n"
                "  notrace) echo '{}' ;;\n"
                "  slow) exec sleep 30 ;;\n"
                "esac\n")
            .arg(dir_.filePath("args-" + mode), mode, src)
            .toUtf8());
    f.close();
    f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    return path;
  }

 private slots:
  void arguments() {
    RunParams p;
    p.devices = 16;
    p.block = "32K";
    p.layout = "striped";
    p.gpu = "h100-sxm";
    p.inter = "ib-ndr";
    p.causal = false;
    p.pass = "bwd";
    const QStringList a = ringsim_arguments(p, "/tmp/t.json");
    QCOMPARE(a.front(), QString("run"));
    QCOMPARE(a[a.indexOf("--devices") + 1], QString("16"));
    QCOMPARE(a[a.indexOf("--block") + 1], QString("32768"));  // the spec holds tokens, 32K
    QCOMPARE(a[a.indexOf("--layout") + 1], QString("striped"));
    QCOMPARE(a[a.indexOf("--gpu") + 1], QString("h100-sxm"));
    QCOMPARE(a[a.indexOf("--inter") + 1], QString("ib-ndr"));
    QCOMPARE(a[a.indexOf("--pass") + 1], QString("bwd"));
    QVERIFY(a.contains("--no-causal") && !a.contains("--causal"));
    QVERIFY(!a.contains("--intra"));  // left at the GPU's default
    QCOMPARE(a[a.indexOf("--trace") + 1], QString("/tmp/t.json"));
    QVERIFY(a.contains("--json"));
  }

  void run_loads_the_trace() {
    qputenv("RINGSIM_BIN", fake_ringsim("ok").toUtf8());
    QCOMPARE(find_ringsim(), fake_ringsim("ok"));
    MainWindow w;
    Errors errors;
    w.set_error_sink(errors.sink());
    RunParams p;
    p.devices = 4;
    p.layout = "ring";
    w.run_panel()->set_params(p);
    QSignalSpy progress(w.run_panel()->runner(), &SimRunner::progress);
    w.run_panel()->start();
    QTRY_COMPARE_WITH_TIMEOUT(w.traces().size(), std::size_t{1}, 15000);
    QVERIFY(errors.messages.isEmpty());
    QVERIFY(w.traces().front().title.contains("ring"));
    QCOMPARE(w.traces().front().trace->lanes.size(), std::size_t{4});
    bool saw_fraction = false;
    for (const auto& args : progress) saw_fraction |= args.at(0).toInt() == 50;
    QVERIFY(saw_fraction);  // "step 1/2" on stderr
    QFile log(dir_.filePath("args-ok"));
    QVERIFY(log.open(QIODevice::ReadOnly));
    const QString args = QString::fromUtf8(log.readAll());
    QVERIFY2(
        args.contains("run --devices 4") && args.contains("--trace") && args.contains("--json"),
        qPrintable(args));
  }

  void failures_are_reported() {
    for (const QString mode : {"fail", "notrace"}) {
      qputenv("RINGSIM_BIN", fake_ringsim(mode).toUtf8());
      MainWindow w;
      Errors errors;
      w.set_error_sink(errors.sink());
      w.run_panel()->start();
      QTRY_COMPARE_WITH_TIMEOUT(errors.messages.size(), 1, 15000);
      QVERIFY(w.traces().empty());
      if (mode == "fail")
        QCOMPARE(errors.messages.front(),
                 QString("ringsim: error: --block must be in [1, 16M], got 0"));
      else
        QVERIFY(errors.messages.front().contains("wrote no trace"));
    }
    // RINGSIM_BIN is final: a wrong path is an error, not a silent fallback.
    qputenv("RINGSIM_BIN", dir_.filePath("missing").toUtf8());
    MainWindow w;
    Errors errors;
    w.set_error_sink(errors.sink());
    w.run_panel()->start();
    QCOMPARE(errors.messages.size(), 1);
    QVERIFY2(errors.messages.front().contains("RINGSIM_BIN=") &&
                 errors.messages.front().contains("not an executable"),
             qPrintable(errors.messages.front()));
    QVERIFY(!w.run_panel()->running());
  }

  void closing_mid_run_is_safe() {
    qputenv("RINGSIM_BIN", fake_ringsim("slow").toUtf8());
    auto w = std::make_unique<MainWindow>();
    Errors errors;
    w->set_error_sink(errors.sink());
    w->run_panel()->start();
    QTRY_VERIFY_WITH_TIMEOUT(w->run_panel()->running(), 5000);
    w.reset();  // kills the child without telling half-destroyed widgets
    QVERIFY(errors.messages.isEmpty());
  }

  void real_ringsim() {
    // The argument names checked against the real CLI, when this build has it.
    if (!QFileInfo(RINGSIM_BIN_PATH).isExecutable()) QSKIP("ringsim not built in this tree");
    qputenv("RINGSIM_BIN", RINGSIM_BIN_PATH);
    MainWindow w;
    Errors errors;
    w.set_error_sink(errors.sink());
    RunParams p;
    p.devices = 4;
    p.block = "1K";
    p.layout = "striped";
    p.causal = false;
    w.run_panel()->set_params(p);
    w.run_panel()->start();
    QTRY_VERIFY_WITH_TIMEOUT(!w.traces().empty() || !errors.messages.isEmpty(), 60000);
    QVERIFY2(errors.messages.isEmpty(), qPrintable(errors.messages.join('\n')));
    const LoadedTrace& t = w.traces().front();
    QCOMPARE(t.trace->lanes.size(), std::size_t{4});
    QCOMPARE(t.trace->run.layout, std::string("striped"));
    QVERIFY(t.summary.total_us.from_trace);
    QVERIFY(t.summary.total_us.value > 0);
  }

  void cancel_stops_the_child() {
    qputenv("RINGSIM_BIN", fake_ringsim("slow").toUtf8());
    MainWindow w;
    Errors errors;
    w.set_error_sink(errors.sink());
    w.run_panel()->start();
    QTRY_VERIFY_WITH_TIMEOUT(w.run_panel()->running(), 5000);
    w.run_panel()->cancel();
    QTRY_VERIFY_WITH_TIMEOUT(!w.run_panel()->running(), 5000);
    QVERIFY(errors.messages.isEmpty());  // a cancel is not an error
    QVERIFY(w.traces().empty());
  }
};

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  int status = 0;
  TimelineTest a;
  status |= QTest::qExec(&a, argc, argv);
  ScreenshotTest b;
  status |= QTest::qExec(&b, argc, argv);
  RunPanelTest c;
  status |= QTest::qExec(&c, argc, argv);
  return status;
}

#include "test_timeline.moc"
