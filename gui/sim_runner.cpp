#include "gui/sim_runner.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTimer>

#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "proc/child.hpp"

namespace ringsim::gui {

QString RunParams::describe() const {
  return QString("%1 \u00b7 %2 \u00b7 %3 \u00d7 %4")
      .arg(layout, causal ? "causal" : "full mask")
      .arg(devices)
      .arg(block);
}

proc::RunSpec run_spec(const RunParams& p, const QString& trace_path) {
  proc::RunSpec s;
  auto& w = s.workload;
  w.devices = p.devices;
  w.block = parse_count("--block", p.block.trimmed().toStdString(), 1, kMaxTokens);
  w.layout = parse_layout("--layout", p.layout.toStdString());
  w.model = p.model.toStdString();
  w.pass = parse_pass("--pass", p.pass.toStdString());
  w.causal = p.causal;
  s.hardware.gpu = p.gpu.toStdString();
  s.hardware.intra = p.intra.toStdString();
  s.hardware.inter = p.inter.toStdString();
  s.hardware.kernel = p.kernel.toStdString();
  s.sim.trace = trace_path.toStdString();
  // ringsim draws its progress bar only on a terminal unless asked.
  s.sim.progress = true;
  s.json = true;
  return s;
}

QStringList ringsim_arguments(const RunParams& p, const QString& trace_path) {
  QStringList a;
  for (const auto& x : proc::to_args(run_spec(p, trace_path))) a << QString::fromStdString(x);
  // The panel's free-text flags, as the user typed them, after the spec's.
  a << p.extra;
  return a;
}

QString find_ringsim(QString* searched) {
  std::string why;
  const auto path = proc::ringsim_exe(&why);
  if (searched) *searched = QString::fromStdString(why);
  return QString::fromStdString(path);
}

SimRunner::SimRunner(QObject* parent) : QObject(parent) {}

SimRunner::~SimRunner() {
  if (!proc_) return;
  // Quietly: whoever listens to finished() may be half destroyed by now.
  proc_->disconnect();
  if (running()) {
    proc_->kill();
    proc_->waitForFinished(2000);
  }
}

bool SimRunner::running() const {
  return proc_ && proc_->state() != QProcess::NotRunning;
}

bool SimRunner::start(const RunParams& p, QString* error) {
  if (running()) {
    *error = "a simulation is already running";
    return false;
  }
  QString searched;
  const QString bin = find_ringsim(&searched);
  if (bin.isEmpty()) {
    *error =
        "cannot find the ringsim program (looked at " + searched + "); set RINGSIM_BIN to its path";
    return false;
  }
  if (!dir_) dir_ = std::make_unique<QTemporaryDir>();
  if (!dir_->isValid()) {
    *error = "cannot create a temporary directory for the trace";
    return false;
  }
  trace_path_ = dir_->filePath(QString("run-%1.json").arg(++runs_));
  QStringList args;
  try {
    args = ringsim_arguments(p, trace_path_);
  } catch (const InputError& e) {
    *error = QString::fromStdString(e.what());
    return false;
  }
  command_line_ = bin + " " + args.join(' ');
  stdout_.clear();
  stderr_buf_.clear();
  last_error_line_.clear();
  cancelled_ = false;

  delete proc_;
  proc_ = new QProcess(this);
  connect(proc_, &QProcess::readyReadStandardError, this, &SimRunner::on_stderr);
  connect(proc_, &QProcess::readyReadStandardOutput, this,
          [this] { stdout_ += QString::fromUtf8(proc_->readAllStandardOutput()); });
  connect(proc_, &QProcess::finished, this, &SimRunner::on_finished);
  connect(proc_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart)
      emit finished(false, {}, "ringsim failed to start: " + proc_->errorString());
  });
  proc_->start(bin, args);
  emit progress(-1, command_line_);
  return true;
}

void SimRunner::cancel() {
  if (!running()) return;
  cancelled_ = true;
  proc_->terminate();
  // A simulation deep in a step may ignore SIGTERM; make sure it ends.
  QTimer::singleShot(2000, proc_, [p = proc_] {
    if (p->state() != QProcess::NotRunning) p->kill();
  });
}

void SimRunner::on_stderr() {
  stderr_buf_ += QString::fromUtf8(proc_->readAllStandardError());
  // ringsim redraws its progress bar with '\r', so both end a line here.
  static const QRegularExpression eol("[\r\n]");
  int nl;
  while ((nl = stderr_buf_.indexOf(eol)) >= 0) {
    const QString line = stderr_buf_.left(nl).trimmed();
    stderr_buf_.remove(0, nl + 1);
    if (line.isEmpty()) continue;
    last_error_line_ = line;
    // "42%" or "step 3/8": either gives a fraction; anything else is just shown.
    static const QRegularExpression pct(R"((\d+(?:\.\d+)?)\s*%)");
    static const QRegularExpression frac(R"((\d+)\s*/\s*(\d+))");
    int percent = -1;
    if (const auto m = pct.match(line); m.hasMatch()) {
      percent = static_cast<int>(m.captured(1).toDouble());
    } else if (const auto f = frac.match(line); f.hasMatch() && f.captured(2).toDouble() > 0) {
      percent = static_cast<int>(100 * f.captured(1).toDouble() / f.captured(2).toDouble());
    }
    emit progress(percent > 100 ? 100 : percent, line);
  }
}

void SimRunner::on_finished(int code, QProcess::ExitStatus status) {
  on_stderr();
  if (!stderr_buf_.trimmed().isEmpty()) last_error_line_ = stderr_buf_.trimmed();
  if (cancelled_) {
    emit finished(false, {}, "cancelled");
    return;
  }
  if (status == QProcess::CrashExit) {
    emit finished(false, {}, "ringsim crashed: " + last_error_line_);
    return;
  }
  if (code != 0) {
    emit finished(false, {},
                  last_error_line_.isEmpty() ? QString("ringsim exited with code %1").arg(code)
                                             : last_error_line_);
    return;
  }
  if (!QFileInfo(trace_path_).isFile() || QFileInfo(trace_path_).size() == 0) {
    emit finished(false, {},
                  "ringsim finished but wrote no trace; does this ringsim support --trace?");
    return;
  }
  emit finished(true, trace_path_, "done");
}

}  // namespace ringsim::gui
