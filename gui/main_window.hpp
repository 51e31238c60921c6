#pragma once
// The window: timeline in the middle, run panel on the left, summary and
// details on the right, menus and shortcuts. Any trace that fails to load is
// reported through the error sink (a dialog by default) and changes nothing.
#include <QMainWindow>
#include <functional>
#include <vector>

#include "gui/timeline_scene.hpp"

class QAction;
class QLineEdit;
class QPlainTextEdit;
class QSpinBox;
class QTabWidget;

namespace ringsim::gui {

class RunPanel;
class SummaryPanel;
class TimelineWidget;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);

  bool open_trace(const QString& path, const QString& title = {});
  bool open_comparison(const QString& path, const QString& title = {});
  void close_comparison();
  // What a drop does: two files are compared; one file with Shift or Ctrl is
  // compared with the open trace; otherwise it replaces the view.
  void open_dropped(const QStringList& files, Qt::KeyboardModifiers modifiers);
  bool export_to(const QString& path);
  // The shown traces' events through trace::write_trace (gui/perfetto_export.hpp).
  bool export_perfetto_to(const QString& path);
  // Shows only the events the filter text selects (gui/event_filter.hpp); ""
  // shows everything. False, with the reason in the status bar, on a bad filter.
  bool apply_filter(const QString& text);

  using ErrorSink = std::function<void(const QString& title, const QString& message)>;
  void set_error_sink(ErrorSink sink) { error_sink_ = std::move(sink); }

  TimelineWidget* timeline() const { return timeline_; }
  SummaryPanel* summary() const { return summary_; }
  RunPanel* run_panel() const { return run_panel_; }
  QString details_text() const;
  const std::vector<LoadedTrace>& traces() const { return traces_; }
  double last_load_ms() const { return last_load_ms_; }

 protected:
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dropEvent(QDropEvent* e) override;
  void closeEvent(QCloseEvent* e) override;

 private:
  bool load_into(const QString& path, const QString& title, bool as_comparison);
  void show_traces(bool keep_view);
  void show_details(int trace, long event);
  void report(const QString& title, const QString& message);
  void build_menus();
  void open_dialog(bool comparison);
  void export_dialog();
  void save_trace_dialog();
  void export_perfetto_dialog();

  TimelineWidget* timeline_;
  SummaryPanel* summary_;
  RunPanel* run_panel_;
  QPlainTextEdit* details_;
  QTabWidget* tabs_;
  QSpinBox* step_box_;
  QLineEdit* filter_box_;
  QAction* heatmap_action_;
  std::vector<LoadedTrace> traces_;   // what is shown (filtered)
  std::vector<LoadedTrace> sources_;  // as loaded
  ErrorSink error_sink_;
  double last_load_ms_ = 0;
};

}  // namespace ringsim::gui
