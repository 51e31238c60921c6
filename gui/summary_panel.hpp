#pragma once
// The summary panel: headline numbers per trace side by side, per-step compute
// and transfer, and the rest of the simulator's summary.
#include <QWidget>
#include <vector>

#include "gui/timeline_scene.hpp"

class QTableWidget;
class QLabel;

namespace ringsim::gui {

class SummaryPanel : public QWidget {
  Q_OBJECT

 public:
  explicit SummaryPanel(QWidget* parent = nullptr);
  void set_traces(const std::vector<LoadedTrace>& traces);

  // Rows of the headline table, in order.
  enum Metric { kTotal, kIdeal, kEfficiency, kExposed, kIdle, kDevices, kSteps, kMetricCount };
  QString metric_text(Metric m, int trace) const;
  const QTableWidget* steps_table() const { return steps_; }

 signals:
  void step_activated(int step);  // double-click on a per-step row

 private:
  QTableWidget* metrics_;
  QTableWidget* steps_;
  QTableWidget* other_;
  QLabel* note_;
};

// A summary field as text: seconds and bytes in readable units.
QString format_field(const RunInfo::Field& f);

}  // namespace ringsim::gui
