#include "gui/summary_panel.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace ringsim::gui {

namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

QTableWidget* make_table(QWidget* parent) {
  auto* t = new QTableWidget(parent);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->verticalHeader()->setVisible(false);
  t->verticalHeader()->setDefaultSectionSize(20);
  t->horizontalHeader()->setStretchLastSection(true);
  t->setAlternatingRowColors(true);
  return t;
}

QTableWidgetItem* cell(const QString& text, bool right = true) {
  auto* item = new QTableWidgetItem(text);
  if (right) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

QString format_field(const RunInfo::Field& f) {
  if (!f.is_number) return qs(f.text);
  const std::string& k = f.key;
  if (ends_with(k, "_s") || k.find("_s_per_") != std::string::npos)
    return qs(format_us(f.number * 1e6));
  if (k.find("bytes") != std::string::npos) return qs(format_bytes(f.number));
  return QString::number(f.number, 'g', 6);
}

SummaryPanel::SummaryPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  metrics_ = make_table(this);
  metrics_->setRowCount(kMetricCount);
  metrics_->setMaximumHeight(22 * (kMetricCount + 1) + 6);
  steps_ = make_table(this);
  other_ = make_table(this);
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  note_->setStyleSheet("color: #666;");
  layout->addWidget(new QLabel("<b>Summary</b>", this));
  layout->addWidget(metrics_);
  layout->addWidget(note_);
  layout->addWidget(new QLabel("<b>Per step</b> (double-click a row to zoom to it)", this));
  layout->addWidget(steps_, 2);
  layout->addWidget(new QLabel("<b>Simulator summary</b> (otherData.ringsim)", this));
  layout->addWidget(other_, 1);
  connect(steps_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
    if (const QTableWidgetItem* it = steps_->item(row, 0))
      emit step_activated(it->data(Qt::UserRole).toInt());
  });
  set_traces({});
}

void SummaryPanel::set_traces(const std::vector<LoadedTrace>& traces) {
  const int n = static_cast<int>(traces.size());
  metrics_->clear();
  metrics_->setRowCount(kMetricCount);
  metrics_->setColumnCount(1 + n);
  QStringList heads{"metric"};
  // With two traces, A and B tie these columns to the per-step table's.
  for (int i = 0; i < n; ++i)
    heads << (n == 1 ? QString("value")
                     : QString("%1: %2")
                           .arg(QChar('A' + i))
                           .arg(traces[static_cast<std::size_t>(i)].title));
  metrics_->setHorizontalHeaderLabels(heads);
  static const char* labels[kMetricCount] = {"total time",   "ideal time",    "efficiency",
                                             "exposed comm", "idle fraction", "devices",
                                             "steps"};
  bool any_from_trace = false;
  for (int m = 0; m < kMetricCount; ++m) {
    metrics_->setItem(m, 0, cell(labels[m], false));
    for (int i = 0; i < n; ++i) {
      const Summary& s = traces[static_cast<std::size_t>(i)].summary;
      const SummaryValue* v = nullptr;
      QString text;
      switch (m) {
        case kTotal:
          v = &s.total_us;
          text = qs(format_us(v->value));
          break;
        case kIdeal:
          v = &s.ideal_us;
          text = qs(format_us(v->value));
          break;
        case kEfficiency:
          v = &s.efficiency;
          text = QString::number(v->value * 100, 'f', 1) + " %";
          break;
        case kExposed:
          v = &s.exposed_comm_us;
          text = qs(format_us(v->value));
          break;
        case kIdle:
          v = &s.idle_fraction;
          text = QString::number(v->value * 100, 'f', 1) + " %";
          break;
        case kDevices:
          text = QString::number(s.devices);
          break;
        case kSteps:
          text = QString::number(s.steps);
          break;
      }
      if (v && v->from_trace) {
        text += " *";
        any_from_trace = true;
      }
      metrics_->setItem(m, 1 + i, cell(text));
    }
  }
  metrics_->resizeColumnsToContents();
  note_->setText(QString(any_from_trace ? "* from the simulator's summary in the trace; the rest "
                                          "is computed from the events (docs/gui.md)."
                                        : "Computed from the events (docs/gui.md).") +
                 QString(" Per step: the slowest device's compute and send time, and the bytes "
                         "all devices send."));

  // Per step: the union of the traces' steps, one column triple per trace.
  using Key = std::tuple<int, int, int>;  // layer, pass, step
  std::map<Key, std::vector<const StepStats*>> rows;
  bool repeat = false;
  for (int i = 0; i < n; ++i) {
    const Summary& sum = traces[static_cast<std::size_t>(i)].summary;
    repeat |= sum.steps_repeat;
    for (const StepStats& st : sum.per_step) {
      auto& r = rows[Key{st.layer, static_cast<int>(st.pass), st.step}];
      r.resize(static_cast<std::size_t>(n), nullptr);
      r[static_cast<std::size_t>(i)] = &st;
    }
  }
  steps_->clear();
  steps_->setColumnCount(1 + 3 * n);
  QStringList sh{"step"};
  for (int i = 0; i < n; ++i) {
    const QString tag = n == 1 ? QString() : QString(" (%1)").arg(QChar('A' + i));
    sh << "compute" + tag << "transfer" + tag << "bytes" + tag;
  }
  steps_->setHorizontalHeaderLabels(sh);
  // The table shows at most 4096 steps: enough to read, bounded to stay fast.
  steps_->setRowCount(static_cast<int>(std::min<std::size_t>(rows.size(), 4096)));
  int r = 0;
  for (const auto& [key, stats] : rows) {
    if (r >= steps_->rowCount()) break;
    const auto [layer, pass, step] = key;
    QString label = QString::number(step);
    if (repeat) {
      const char* p = pass == static_cast<int>(PassKind::Fwd)   ? "fwd"
                      : pass == static_cast<int>(PassKind::Bwd) ? "bwd"
                                                                : "";
      label = QString("L%1 %2 %3").arg(layer).arg(p).arg(step);
    }
    QTableWidgetItem* head = cell(label);
    head->setData(Qt::UserRole, step);
    steps_->setItem(r, 0, head);
    for (int i = 0; i < n; ++i) {
      const StepStats* st = stats[static_cast<std::size_t>(i)];
      if (!st) continue;
      steps_->setItem(r, 1 + 3 * i, cell(qs(format_us(st->compute_max_us))));
      steps_->setItem(r, 2 + 3 * i, cell(qs(format_us(st->transfer_max_us))));
      steps_->setItem(r, 3 + 3 * i, cell(qs(format_bytes(st->bytes))));
    }
    ++r;
  }
  steps_->resizeColumnsToContents();

  other_->clear();
  other_->setColumnCount(1 + n);
  QStringList oh{"field"};
  for (int i = 0; i < n; ++i) oh << (n == 1 ? QString("value") : QString(QChar('A' + i)));
  other_->setHorizontalHeaderLabels(oh);
  std::map<std::string, std::vector<const RunInfo::Field*>> fields;
  for (int i = 0; i < n; ++i)
    for (const RunInfo::Field& f : traces[static_cast<std::size_t>(i)].trace->run.summary) {
      auto& v = fields[f.key];
      v.resize(static_cast<std::size_t>(n), nullptr);
      v[static_cast<std::size_t>(i)] = &f;
    }
  other_->setRowCount(static_cast<int>(fields.size()));
  r = 0;
  for (const auto& [key, vals] : fields) {
    other_->setItem(r, 0, cell(qs(key), false));
    for (int i = 0; i < n; ++i)
      if (vals[static_cast<std::size_t>(i)])
        other_->setItem(r, 1 + i, cell(format_field(*vals[static_cast<std::size_t>(i)])));
    ++r;
  }
  other_->resizeColumnsToContents();
  // Long dotted keys would push the values out of sight; the tooltip has them whole.
  other_->setColumnWidth(0, std::min(other_->columnWidth(0), 190));
  for (int row = 0; row < other_->rowCount(); ++row)
    if (QTableWidgetItem* it = other_->item(row, 0)) it->setToolTip(it->text());
}

QString SummaryPanel::metric_text(Metric m, int trace) const {
  const QTableWidgetItem* it = metrics_->item(m, 1 + trace);
  return it ? it->text() : QString();
}

}  // namespace ringsim::gui
