#include "gui/main_window.hpp"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QUrl>

#include "gui/event_filter.hpp"
#include "gui/event_text.hpp"
#include "gui/export_view.hpp"
#include "gui/perfetto_export.hpp"
#include "gui/run_panel.hpp"
#include "gui/summary_panel.hpp"
#include "gui/timeline_widget.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"

namespace ringsim::gui {

namespace {

const char* kShortcuts =
    "Wheel: zoom around the pointer   Shift+wheel: pan\n"
    "Drag: pan   Click: select a bar   Double-click: zoom to its step\n"
    "+ / -: zoom in / out   Left / Right: pan (Shift: half a view)\n"
    "F, 0 or Home: fit   [ / ]: previous / next step\n"
    "H: heatmap / lanes   Click a heatmap cell: its lanes at that step   A: all lanes\n"
    "Shift+drag or right-drag: select a time range (statistics)   C: clear it\n"
    "Ctrl+O: open   Ctrl+Shift+O: compare with   Ctrl+E: export view\n"
    "Ctrl+R: run simulation   Esc: cancel it   Ctrl+Q: quit";

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle("ringsim-gui");
  setAcceptDrops(true);
  timeline_ = new TimelineWidget(this);
  setCentralWidget(timeline_);

  run_panel_ = new RunPanel(this);
  auto* run_dock = new QDockWidget("Run a simulation", this);
  run_dock->setObjectName("run");
  run_dock->setWidget(run_panel_);
  addDockWidget(Qt::LeftDockWidgetArea, run_dock);

  summary_ = new SummaryPanel(this);
  details_ = new QPlainTextEdit(this);
  details_->setReadOnly(true);
  details_->setPlaceholderText("Click a bar to see its details.");
  tabs_ = new QTabWidget(this);
  tabs_->addTab(summary_, "Summary");
  tabs_->addTab(details_, "Details");
  tabs_->setMinimumWidth(340);  // the summary's number columns stay readable
  auto* info_dock = new QDockWidget("Trace", this);
  info_dock->setObjectName("trace");
  info_dock->setWidget(tabs_);
  addDockWidget(Qt::RightDockWidgetArea, info_dock);

  build_menus();
  statusBar()->showMessage("Open a trace (Ctrl+O), drop one here, or run a simulation (Ctrl+R).");

  connect(timeline_, &TimelineWidget::event_selected, this, &MainWindow::show_details);
  connect(timeline_, &TimelineWidget::view_changed, this, [this](double t0, double t1) {
    if (traces_.empty()) return;
    statusBar()->showMessage(QString("view %1 .. %2 (span %3)")
                                 .arg(QString::fromStdString(format_us(t0)),
                                      QString::fromStdString(format_us(t1)),
                                      QString::fromStdString(format_us(t1 - t0))));
  });
  connect(timeline_, &TimelineWidget::mode_changed, this,
          [this](ViewMode m) { heatmap_action_->setChecked(m == ViewMode::Heatmap); });
  connect(timeline_, &TimelineWidget::range_selected, this, [this](const QString& text) {
    if (text.isEmpty()) return;
    details_->setPlainText("Selected range\n" + text);
    tabs_->setCurrentWidget(details_);
    statusBar()->showMessage(text.section('\n', 0, 1).replace('\n', "  \u00b7  "));
  });
  connect(summary_, &SummaryPanel::step_activated, this,
          [this](int step) { timeline_->zoom_to_step(step); });
  connect(run_panel_, &RunPanel::trace_ready, this,
          [this](const QString& path, const QString& title, bool comparison) {
            if (comparison && !traces_.empty())
              open_comparison(path, title);
            else
              open_trace(path, title);
          });
  connect(run_panel_, &RunPanel::failed, this,
          [this](const QString& message) { report("Simulation failed", message); });
  resize(1400, 850);
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu("&File");
  QAction* open = file->addAction("&Open trace...", this, [this] { open_dialog(false); });
  open->setShortcut(QKeySequence::Open);
  QAction* cmp = file->addAction("Compare &with...", this, [this] { open_dialog(true); });
  cmp->setShortcut(QKeySequence("Ctrl+Shift+O"));
  file->addAction("&Close comparison", this, &MainWindow::close_comparison);
  file->addSeparator();
  QAction* exp = file->addAction("&Export view (PNG/SVG)...", this, &MainWindow::export_dialog);
  exp->setShortcut(QKeySequence("Ctrl+E"));
  file->addAction("&Save trace as...", this, &MainWindow::save_trace_dialog);
  file->addAction("Export for &Perfetto...", this, &MainWindow::export_perfetto_dialog);
  file->addSeparator();
  QAction* quit = file->addAction("&Quit", this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  QMenu* view = menuBar()->addMenu("&View");
  QAction* zin = view->addAction("Zoom &in", timeline_, &TimelineWidget::zoom_in);
  zin->setShortcut(QKeySequence::ZoomIn);
  QAction* zout = view->addAction("Zoom &out", timeline_, &TimelineWidget::zoom_out);
  zout->setShortcut(QKeySequence::ZoomOut);
  QAction* fit = view->addAction("&Fit to window", timeline_, &TimelineWidget::fit);
  fit->setShortcut(QKeySequence("Ctrl+0"));
  view->addSeparator();
  heatmap_action_ = view->addAction("&Heatmap of waits (device x step)");
  heatmap_action_->setCheckable(true);
  connect(heatmap_action_, &QAction::triggered, this,
          [this](bool on) { timeline_->set_mode(on ? ViewMode::Heatmap : ViewMode::Lanes); });
  view->addAction("&All lanes (undo drill-down)", timeline_, &TimelineWidget::show_all_lanes);
  QAction* path = view->addAction("&Critical path");
  path->setCheckable(true);
  path->setChecked(true);
  connect(path, &QAction::triggered, timeline_, &TimelineWidget::set_show_critical_path);

  QMenu* run = menuBar()->addMenu("&Run");
  QAction* go = run->addAction("&Run simulation", run_panel_, &RunPanel::start);
  go->setShortcut(QKeySequence("Ctrl+R"));
  QAction* cancel = run->addAction("&Cancel simulation", run_panel_, &RunPanel::cancel);
  cancel->setShortcut(QKeySequence(Qt::Key_Escape));

  QMenu* help = menuBar()->addMenu("&Help");
  help->addAction("&Keyboard and mouse", this,
                  [this] { QMessageBox::information(this, "Keyboard and mouse", kShortcuts); });

  QToolBar* tb = addToolBar("Main");
  tb->setObjectName("main");
  tb->addAction(open);
  tb->addAction(cmp);
  tb->addAction(exp);
  tb->addSeparator();
  tb->addAction(zin);
  tb->addAction(zout);
  tb->addAction(fit);
  tb->addSeparator();
  tb->addWidget(new QLabel(" step ", tb));
  step_box_ = new QSpinBox(tb);
  step_box_->setRange(0, 1 << 24);
  step_box_->setToolTip("Zoom to this ring step on all devices");
  tb->addWidget(step_box_);
  tb->addAction("Zoom to step", this, [this] {
    if (!timeline_->zoom_to_step(step_box_->value()))
      statusBar()->showMessage(QString("no events in step %1").arg(step_box_->value()));
  });
  tb->addSeparator();
  tb->addAction(heatmap_action_);
  filter_box_ = new QLineEdit(tb);
  filter_box_->setPlaceholderText("filter: wait device=0-7 step=3 bwd");
  filter_box_->setToolTip(
      "Show only matching events: phase names (wait, send, partial, ...), device=N or A-B, "
      "step=N or A-B, fwd / bwd, layer=N. Enter applies, empty shows all.");
  filter_box_->setClearButtonEnabled(true);
  filter_box_->setMaximumWidth(260);
  connect(filter_box_, &QLineEdit::returnPressed, this,
          [this] { apply_filter(filter_box_->text()); });
  tb->addWidget(filter_box_);
  tb->addSeparator();
  tb->addAction(go);
  tb->addAction(cancel);
}

void MainWindow::report(const QString& title, const QString& message) {
  statusBar()->showMessage(message);
  if (error_sink_)
    error_sink_(title, message);
  else
    QMessageBox::critical(this, title, message);
}

bool MainWindow::load_into(const QString& path, const QString& title, bool as_comparison) {
  QElapsedTimer timer;
  timer.start();
  LoadedTrace loaded;
  try {
    QApplication::setOverrideCursor(Qt::WaitCursor);
    loaded = load_trace(path, title);
    QApplication::restoreOverrideCursor();
  } catch (const InputError& e) {
    QApplication::restoreOverrideCursor();
    report("Cannot open trace", QString::fromUtf8(e.what()));
    return false;
  } catch (const std::bad_alloc&) {
    QApplication::restoreOverrideCursor();
    report("Cannot open trace", "Out of memory reading " + path);
    return false;
  } catch (const std::exception& e) {
    QApplication::restoreOverrideCursor();
    report("Cannot open trace", path + ": " + QString::fromUtf8(e.what()));
    return false;
  }
  last_load_ms_ = static_cast<double>(timer.nsecsElapsed()) / 1e6;
  if (as_comparison && !sources_.empty()) {
    sources_.resize(1);
    sources_.push_back(std::move(loaded));
  } else {
    sources_.clear();
    sources_.push_back(std::move(loaded));
  }
  traces_ = sources_;
  show_traces(as_comparison);
  if (!filter_box_->text().trimmed().isEmpty()) apply_filter(filter_box_->text());
  const Trace& t = *traces_.back().trace;
  QString msg = QString("%1: %2 events, %3 devices, loaded in %4 ms")
                    .arg(traces_.back().title)
                    .arg(t.events.size())
                    .arg(t.lanes.size())
                    .arg(last_load_ms_, 0, 'f', 0);
  if (t.skipped_events > 0)
    msg += QString(" (%1 non-complete events not shown)").arg(t.skipped_events);
  statusBar()->showMessage(msg);
  return true;
}

bool MainWindow::open_trace(const QString& path, const QString& title) {
  return load_into(path, title, false);
}

bool MainWindow::open_comparison(const QString& path, const QString& title) {
  if (traces_.empty()) return load_into(path, title, false);
  return load_into(path, title, true);
}

void MainWindow::close_comparison() {
  if (sources_.size() < 2) return;
  sources_.resize(1);
  traces_.resize(1);
  show_traces(true);
}

void MainWindow::show_traces(bool keep_view) {
  timeline_->set_traces(traces_, keep_view);
  summary_->set_traces(traces_);
  details_->clear();
  QStringList titles;
  for (const auto& t : traces_) titles << t.title;
  setWindowTitle("ringsim-gui \u2014 " + titles.join(" vs "));
}

void MainWindow::show_details(int trace, long event) {
  if (trace < 0 || event < 0 || trace >= static_cast<int>(traces_.size())) {
    details_->clear();
    return;
  }
  const Trace& t = *traces_[static_cast<std::size_t>(trace)].trace;
  details_->setPlainText(
      traces_[static_cast<std::size_t>(trace)].title + "\n" +
      QString::fromStdString(event_details(t, t.events[static_cast<std::size_t>(event)])));
  tabs_->setCurrentWidget(details_);
}

QString MainWindow::details_text() const {
  return details_->toPlainText();
}

bool MainWindow::export_to(const QString& path) {
  if (traces_.empty()) {
    report("Nothing to export", "Open a trace first.");
    return false;
  }
  const QString problem = export_view(path, traces_, timeline_->view(), timeline_->size(),
                                      timeline_->selection(), &timeline_->scene());
  if (!problem.isEmpty()) {
    report("Export failed", problem);
    return false;
  }
  statusBar()->showMessage("Exported " + path);
  return true;
}

bool MainWindow::apply_filter(const QString& text) {
  EventFilter f;
  std::string error;
  if (!parse_filter(text.toStdString(), &f, &error)) {
    statusBar()->showMessage(QString::fromStdString(error));
    return false;
  }
  traces_.clear();
  std::size_t shown = 0, all = 0;
  for (const LoadedTrace& src : sources_) {
    all += src.trace->events.size();
    if (!f.any()) {
      traces_.push_back(src);
      shown += src.trace->events.size();
      continue;
    }
    LoadedTrace t = make_loaded(std::make_shared<Trace>(filter_trace(*src.trace, f)), src.title);
    // The run's story (faults, verdict, critical path) is the whole run's, not the filter's.
    t.facts = src.facts;
    t.critical = src.critical;
    t.summary = src.summary;
    shown += t.trace->events.size();
    traces_.push_back(std::move(t));
  }
  show_traces(true);
  statusBar()->showMessage(f.any() ? QString("filter: %1 of %2 events").arg(shown).arg(all)
                                   : QString("filter cleared: %1 events").arg(all));
  return true;
}

bool MainWindow::export_perfetto_to(const QString& path) {
  if (traces_.empty()) {
    report("Nothing to export", "Open a trace first.");
    return false;
  }
  try {
    export_perfetto(*traces_.front().trace, traces_.front().facts, path.toStdString());
  } catch (const InputError& e) {
    report("Export failed", QString::fromStdString(one_line(e.what())));
    return false;
  }
  statusBar()->showMessage("Wrote " + path + " (open it in ui.perfetto.dev)");
  return true;
}

void MainWindow::export_perfetto_dialog() {
  if (traces_.empty()) return;
  QString path = QFileDialog::getSaveFileName(this, "Export for Perfetto", "trace-perfetto.json",
                                              "Chrome trace JSON (*.json)");
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += ".json";
  export_perfetto_to(path);
}

void MainWindow::open_dialog(bool comparison) {
  const QString path = QFileDialog::getOpenFileName(
      this, comparison ? "Compare with trace" : "Open trace", {}, "Traces (*.json);;All files (*)");
  if (path.isEmpty()) return;
  comparison ? open_comparison(path) : open_trace(path);
}

void MainWindow::export_dialog() {
  QString filter = "PNG image (*.png)";
  if (svg_supported()) filter += ";;SVG image (*.svg)";
  QString path = QFileDialog::getSaveFileName(this, "Export view", "timeline.png", filter);
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += ".png";
  export_to(path);
}

void MainWindow::save_trace_dialog() {
  if (traces_.empty()) return;
  const QString from = QString::fromStdString(traces_.front().trace->origin);
  const QString to =
      QFileDialog::getSaveFileName(this, "Save trace as", "trace.json", "Traces (*.json)");
  if (to.isEmpty()) return;
  // Like every ringsim output (models/core/atomic_file.hpp): never onto the
  // trace itself, whole or not at all, a device or link never replaced.
  try {
    check_outputs({{"Save trace as", to.toStdString()}}, {{"the trace", from.toStdString()}});
    QFile in(from);
    if (!in.open(QIODevice::ReadOnly)) {
      report("Save failed", "cannot read " + from);
      return;
    }
    const QByteArray bytes = in.readAll();
    AtomicFile out(to.toStdString(), "Save trace as");
    out.write(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
    out.commit();
  } catch (const InputError& e) {
    report("Save failed", QString::fromStdString(one_line(e.what())));
  }
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
  if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
  QStringList files;
  for (const QUrl& u : e->mimeData()->urls())
    if (u.isLocalFile()) files << u.toLocalFile();
  if (files.isEmpty()) return;
  e->acceptProposedAction();
  open_dropped(files, e->modifiers());
}

void MainWindow::open_dropped(const QStringList& files, Qt::KeyboardModifiers modifiers) {
  if (files.isEmpty()) return;
  const bool add = modifiers & (Qt::ShiftModifier | Qt::ControlModifier);
  if (files.size() >= 2) {
    if (open_trace(files[0])) open_comparison(files[1]);
  } else if (add && !traces_.empty()) {
    open_comparison(files[0]);
  } else {
    open_trace(files[0]);
  }
}

void MainWindow::closeEvent(QCloseEvent* e) {
  if (run_panel_->running()) run_panel_->cancel();
  e->accept();
}

}  // namespace ringsim::gui
