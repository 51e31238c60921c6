#pragma once
// The parameter panel: pick a configuration, run `ringsim` on it, watch its
// progress, cancel it, and get the trace back for the timeline.
#include <QWidget>

#include "gui/sim_runner.hpp"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace ringsim::gui {

class RunPanel : public QWidget {
  Q_OBJECT

 public:
  explicit RunPanel(QWidget* parent = nullptr);
  RunParams params() const;
  void set_params(const RunParams& p);
  bool running() const { return runner_->running(); }
  SimRunner* runner() const { return runner_; }

 public slots:
  void start();
  void cancel();

 signals:
  // A run finished and wrote `path`; `as_comparison` if the user asked to
  // show it under the current trace.
  void trace_ready(const QString& path, const QString& title, bool as_comparison);
  void failed(const QString& message);

 private:
  void set_running(bool on);

  SimRunner* runner_;
  QSpinBox* devices_;
  QLineEdit* block_;
  QComboBox *layout_, *gpu_, *intra_, *inter_, *kernel_, *model_, *pass_, *target_;
  QCheckBox* causal_;
  QLineEdit* extra_;
  QPushButton *run_, *cancel_;
  QProgressBar* progress_;
  QLabel* status_;
  QPlainTextEdit* log_;
  RunParams pending_;
};

}  // namespace ringsim::gui
