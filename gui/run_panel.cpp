#include "gui/run_panel.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "gui/run_choices.hpp"

namespace ringsim::gui {

namespace {

const QString kDefault = "(default)";

// Editable, so a catalog entry added with --catalog can still be typed in.
QComboBox* combo(QWidget* parent, const QStringList& items, const QString& current,
                 bool with_default) {
  auto* c = new QComboBox(parent);
  c->setEditable(true);
  if (with_default) c->addItem(kDefault);
  c->addItems(items);
  c->setCurrentText(current.isEmpty() ? kDefault : current);
  return c;
}

QString value_of(const QComboBox* c) {
  const QString t = c->currentText().trimmed();
  return t == kDefault ? QString() : t;
}

}  // namespace

RunPanel::RunPanel(QWidget* parent) : QWidget(parent), runner_(new SimRunner(this)) {
  const RunChoices ch = run_choices();
  const RunParams def;
  auto* form = new QFormLayout;
  devices_ = new QSpinBox(this);
  devices_->setRange(1, 1 << 20);
  devices_->setValue(def.devices);
  block_ = new QLineEdit(def.block, this);
  block_->setToolTip("Tokens per device block; K/M suffixes as in the ringsim CLI (4096, 32K)");
  layout_ =
      combo(this, ch.layouts.isEmpty() ? QStringList{"ring", "striped", "zigzag"} : ch.layouts,
            def.layout, false);
  gpu_ = combo(this, ch.gpus, def.gpu, true);
  intra_ = combo(this, ch.interconnects, def.intra, true);
  inter_ = combo(this, ch.interconnects, def.inter, true);
  kernel_ = combo(this, ch.kernels, def.kernel, true);
  kernel_->setToolTip(
      "Attention implementation (--kernel); default: what PyTorch or JAX runs on the GPU");
  model_ = combo(this, ch.models, def.model, false);
  pass_ = combo(this, ch.passes.isEmpty() ? QStringList{"fwd", "bwd"} : ch.passes, def.pass, false);
  causal_ = new QCheckBox("causal mask", this);
  causal_->setChecked(def.causal);
  extra_ = new QLineEdit(this);
  extra_->setPlaceholderText("more ringsim flags, e.g. --engine NAME");
  target_ = new QComboBox(this);
  target_->addItems({"replace the view", "compare below"});
  form->addRow("devices", devices_);
  form->addRow("block", block_);
  form->addRow("layout", layout_);
  form->addRow("GPU", gpu_);
  form->addRow("link in node", intra_);
  form->addRow("link between nodes", inter_);
  form->addRow("kernel", kernel_);
  form->addRow("model", model_);
  form->addRow("pass", pass_);
  form->addRow("", causal_);
  form->addRow("extra flags", extra_);
  form->addRow("result", target_);

  run_ = new QPushButton("Run", this);
  run_->setToolTip("Run ringsim with these parameters (Ctrl+R)");
  cancel_ = new QPushButton("Cancel", this);
  cancel_->setToolTip("Stop the running simulation (Esc)");
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(run_);
  buttons->addWidget(cancel_);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 100);
  progress_->setValue(0);
  status_ = new QLabel("Ready.", this);
  status_->setWordWrap(true);
  log_ = new QPlainTextEdit(this);
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(500);
  log_->setPlaceholderText("ringsim output");

  auto* v = new QVBoxLayout(this);
  v->addLayout(form);
  v->addLayout(buttons);
  v->addWidget(progress_);
  v->addWidget(status_);
  v->addWidget(log_, 1);

  connect(run_, &QPushButton::clicked, this, &RunPanel::start);
  connect(cancel_, &QPushButton::clicked, this, &RunPanel::cancel);
  connect(runner_, &SimRunner::progress, this, [this](int percent, const QString& line) {
    if (percent >= 0) {
      // A progress bar redraw: show it in place rather than filling the log.
      progress_->setRange(0, 100);
      progress_->setValue(percent);
      status_->setText(line.simplified());
      return;
    }
    log_->appendPlainText(line);
  });
  connect(runner_, &SimRunner::finished, this,
          [this](bool ok, const QString& path, const QString& message) {
            set_running(false);
            if (!runner_->json_output().trimmed().isEmpty())
              log_->appendPlainText(runner_->json_output().trimmed());
            if (ok) {
              progress_->setValue(100);
              status_->setText("Finished.");
              emit trace_ready(path, pending_.describe(), target_->currentIndex() == 1);
            } else {
              progress_->setValue(0);
              status_->setText(message);
              if (message != "cancelled") emit failed(message);
            }
          });
  set_running(false);
}

RunParams RunPanel::params() const {
  RunParams p;
  p.devices = devices_->value();
  p.block = block_->text().trimmed();
  p.layout = layout_->currentText().trimmed();
  p.gpu = value_of(gpu_);
  p.intra = value_of(intra_);
  p.inter = value_of(inter_);
  p.kernel = value_of(kernel_);
  p.model = model_->currentText().trimmed();
  p.pass = pass_->currentText().trimmed();
  p.causal = causal_->isChecked();
  p.extra = QProcess::splitCommand(extra_->text());
  return p;
}

void RunPanel::set_params(const RunParams& p) {
  devices_->setValue(p.devices);
  block_->setText(p.block);
  layout_->setCurrentText(p.layout);
  gpu_->setCurrentText(p.gpu.isEmpty() ? kDefault : p.gpu);
  intra_->setCurrentText(p.intra.isEmpty() ? kDefault : p.intra);
  inter_->setCurrentText(p.inter.isEmpty() ? kDefault : p.inter);
  kernel_->setCurrentText(p.kernel.isEmpty() ? kDefault : p.kernel);
  model_->setCurrentText(p.model);
  pass_->setCurrentText(p.pass);
  causal_->setChecked(p.causal);
  extra_->setText(p.extra.join(' '));
}

void RunPanel::start() {
  if (runner_->running()) return;
  pending_ = params();
  QString error;
  log_->clear();
  if (!runner_->start(pending_, &error)) {
    status_->setText(error);
    emit failed(error);
    return;
  }
  set_running(true);
  status_->setText("Running " + pending_.describe() + " ...");
  // Unknown progress until ringsim reports some: a busy bar.
  progress_->setRange(0, 0);
}

void RunPanel::cancel() {
  if (!runner_->running()) return;
  status_->setText("Cancelling ...");
  runner_->cancel();
}

void RunPanel::set_running(bool on) {
  run_->setEnabled(!on);
  cancel_->setEnabled(on);
  if (!on) progress_->setRange(0, 100);
}

}  // namespace ringsim::gui
