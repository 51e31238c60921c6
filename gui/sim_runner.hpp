#pragma once
// Runs `ringsim run ... --trace FILE --json` as a child process: SimGrid allows
// one engine per process, and a crash in a simulation must not take the
// window with it.
#include <QObject>
#include <QProcess>
#include <QStringList>
#include <QTemporaryDir>
#include <memory>

#include "proc/run_spec.hpp"

namespace ringsim::gui {

struct RunParams {
  int devices = 8;
  QString block = "4096";
  QString layout = "ring";
  QString gpu;     // empty: ringsim's default
  QString intra;   // interconnect inside a node; empty: the GPU's default
  QString inter;   // between nodes; empty: the GPU's default
  QString kernel;  // attention implementation (--kernel); empty: the GPU's default
  QString model = "llama3-8b";
  bool causal = true;
  QString pass = "fwd";
  QStringList extra;         // further flags, passed as given (e.g. --engine NAME)
  QString describe() const;  // "ring · causal · 8 x 4096" for titles
};

// The run spec of the panel's choices (proc/run_spec.hpp), writing the trace
// to `trace_path`; InputError for a value ringsim would refuse (--block).
proc::RunSpec run_spec(const RunParams& p, const QString& trace_path);
// The ringsim command line for `p`: the spec's flags (proc::to_args), then
// the panel's extra flags as typed.
QStringList ringsim_arguments(const RunParams& p, const QString& trace_path);

// proc::ringsim_exe: $RINGSIM_BIN if set (and then only it), else `ringsim`
// next to this program, else on PATH. Empty if none; `searched` says where it looked.
QString find_ringsim(QString* searched = nullptr);

class SimRunner : public QObject {
  Q_OBJECT

 public:
  explicit SimRunner(QObject* parent = nullptr);
  ~SimRunner() override;

  bool start(const RunParams& p, QString* error);
  void cancel();
  bool running() const;
  QString command_line() const { return command_line_; }
  QString json_output() const { return stdout_; }

 signals:
  void progress(int percent, const QString& line);  // percent -1: unknown
  void finished(bool ok, const QString& trace_path, const QString& message);

 private:
  void on_stderr();
  void on_finished(int code, QProcess::ExitStatus status);

  QProcess* proc_ = nullptr;
  std::unique_ptr<QTemporaryDir> dir_;
  QString trace_path_, command_line_, stdout_, last_error_line_, stderr_buf_;
  int runs_ = 0;
  bool cancelled_ = false;
};

}  // namespace ringsim::gui
