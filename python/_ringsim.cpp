// _ringsim: the C++ half of the `ringsim` Python module (docs/python.md).
//
// It runs the CLI's own commands rather than a second copy of them, so a
// Python call validates, fails and answers exactly as `ringsim ... --json`:
//   - cli(args): `ringsim args...` in this process (cli::run_cli), its stdout
//     and stderr captured. Only for commands that start no SimGrid engine:
//     SimGrid allows one engine per process, so a second simulation in the
//     same Python process would fail (ringsim/__init__.py routes those here
//     only with --engine analytic).
//   - child(args): `ringsim args...` as a child process (proc::run), for every
//     SimGrid run.
//   - run_args(args): `ringsim run args...` parsed into the typed RunSpec
//     (proc::parse_run_args) and written back with to_args(): what crosses the
//     process boundary is the typed spec, as everywhere else (architecture.md).
//   - sweep(...): the sweep library (sweep/sweep.hpp), when this tree has it.
// ringsim::InputError becomes ringsim.InputError with the CLI's one-line message.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <csignal>
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/command.hpp"
#include "models/core/errors.hpp"
#include "proc/child.hpp"
#include "proc/run_spec.hpp"
#include "proc/unknown_flag.hpp"
#include "sim/interrupt.hpp"
#ifdef RINGSIM_PY_SWEEP
#include "models/core/atomic_file.hpp"
#include "sweep/sweep.hpp"
#endif

namespace py = pybind11;
using namespace ringsim;

namespace {

// Stop signals during a call (docs/python.md, "Ctrl-C"): the call holds an
// InterruptGuard (sim/interrupt.hpp) while it runs, so SIGINT/SIGTERM/SIGHUP
// stop its children and its work cleanly (a sweep's journal stays whole),
// and Python's own SIGINT handler is called too. Once the last call in any
// thread returns, the process's handlers are again exactly Python's, so a
// later Ctrl-C is plain Python's KeyboardInterrupt.
class CallSignals {
 public:
  CallSignals() : before_(sim::stop_signal_count()) {}
  // With the GIL, after the guard is gone: raises what the signal means in
  // Python when one reached this process during the call.
  void raise_if_stopped() const {
    if (sim::stop_signal_count() == before_) return;
    // Python's handlers run here (main thread): KeyboardInterrupt, or the
    // program's own handler's exception.
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    // A signal Python leaves at its default action (SIGTERM, SIGHUP) ends
    // the interpreter as it would have, now that the children have stopped.
    const int sig = sim::last_stop_signal();
    struct sigaction now {};
    if (sig > 0 && ::sigaction(sig, nullptr, &now) == 0 && !(now.sa_flags & SA_SIGINFO) &&
        now.sa_handler == SIG_DFL)
      ::raise(sig);
    // Another thread (Python runs handlers on the main thread only): this
    // call was stopped all the same.
    PyErr_SetString(PyExc_KeyboardInterrupt, "ringsim: interrupted");
    throw py::error_already_set();
  }

 private:
  std::uint64_t before_;
};

// Restores std::cout and std::cerr even when the command throws.
class Capture {
 public:
  Capture() : out_buf_(std::cout.rdbuf(out_.rdbuf())), err_buf_(std::cerr.rdbuf(err_.rdbuf())) {}
  ~Capture() {
    std::cout.rdbuf(out_buf_);
    std::cerr.rdbuf(err_buf_);
  }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  std::string out() const { return out_.str(); }
  std::string err() const { return err_.str(); }

 private:
  std::ostringstream out_, err_;
  std::streambuf* out_buf_;
  std::streambuf* err_buf_;
};

// The ringsim program children run: $RINGSIM_BIN, else this build's.
std::string ringsim_bin() {
  if (const char* e = std::getenv("RINGSIM_BIN"); e && *e) return e;
  return RINGSIM_PY_BIN;
}

// `ringsim args...` in this process: (exit code, stdout, stderr). The GIL
// stays held: std::cout is process-wide, so two threads must not swap it.
std::tuple<int, std::string, std::string> run_in_process(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"ringsim"};
  for (const auto& a : args) argv.push_back(a.c_str());
  CallSignals signals;
  int code = 0;
  std::string out, err;
  {
    sim::InterruptGuard guard;
    Capture cap;
    code = cli::run_cli(static_cast<int>(argv.size()), argv.data());
    std::cout.flush();
    out = cap.out();
    err = cap.err();
  }
  signals.raise_if_stopped();
  return {code, out, err};
}

// `ringsim args...` as a child: (exit code, stdout, stderr, failure line).
// The GIL is released while it runs so other Python threads go on.
std::tuple<int, std::string, std::string, std::string> run_child(
    const std::vector<std::string>& args, double timeout_s) {
  proc::Command c;
  c.argv.push_back(ringsim_bin());
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  c.timeout_s = timeout_s;
  // SIGINT lets a timed-out ringsim stop cleanly (it exits 130, nothing written).
  c.stop_signal = SIGINT;
  proc::Result r;
  CallSignals signals;
  {
    py::gil_scoped_release release;
    sim::InterruptGuard guard;
    r = proc::run(c);
  }
  signals.raise_if_stopped();
  return {r.exit_code, r.out, r.err, r.failure()};
}

// `ringsim run args...` parsed as the CLI parses it (InputError with its
// message), then the flags that reproduce the typed spec.
std::vector<std::string> run_args(const std::vector<std::string>& args) {
  return proc::to_args(proc::parse_run_args(args));
}

#ifdef RINGSIM_PY_SWEEP
// The base flags of a sweep (`ringsim run` flags, text) into RunFlags, by the
// same CLI11 declarations the CLI uses, and the journal header they make;
// each point is then parsed whole by sweep::points, so a base that only a
// swept value completes is fine.
struct Base {
  proc::RunFlags flags;
  sweep::JournalHeader header;
};
Base base_flags(const std::vector<std::string>& args) {
  Base b;
  CLI::App app{"ringsim run", "run"};
  proc::add_run_flags(&app, b.flags);
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    app.parse(rev);
  } catch (const CLI::ExtrasError& e) {
    const auto line = proc::unknown_flag_line(app.remaining(), {&app}, "ringsim run");
    throw InputError(line.empty() ? e.what() : line);
  } catch (const CLI::ParseError& e) {
    throw InputError(e.what());
  }
  b.header = sweep::make_header(sweep::flags_given(app, {"--json", "--progress"}), "");
  return b;
}

// Rows of a sweep as JSON text (sweep::to_json), grid order; the Python side
// turns them into dicts or a DataFrame.
std::vector<std::string> run_sweep(const std::vector<std::string>& base,
                                   const std::vector<std::pair<std::string, std::string>>& axes,
                                   int jobs, const std::string& out, double timeout_s,
                                   bool force_new) {
  sweep::Grid g;
  auto b = base_flags(base);
  g.base = b.flags;
  for (const auto& [flag, text] : axes) {
    g.axes.push_back({flag, sweep::expand(flag, text)});
    b.header.base.erase(flag);
  }
  const auto pts = sweep::points(g);
  sweep::Options o;
  o.out = out;
  o.header = b.header;
  o.force_new = force_new;
  o.jobs = jobs;
  o.timeout_s = timeout_s;
  o.ringsim = ringsim_bin();
  if (!out.empty()) {
    // The journal itself (the CLI's FILE.csv form has no Python equivalent).
    if (out.size() <= 6 || out.compare(out.size() - 6, 6, ".jsonl") != 0)
      throw InputError("--out " + out + ": name a .jsonl file (the journal)");
    check_outputs({{"--out", out}}, {{"--catalog", g.base.hw.catalog}});
  }
  sweep::Result res;
  CallSignals signals;
  {
    py::gil_scoped_release release;
    sim::InterruptGuard guard;
    res = sweep::run_local(pts, o);
  }
  // Interrupted: every finished row is in the journal, for the rerun.
  signals.raise_if_stopped();
  std::vector<std::string> rows;
  for (const auto& r : res.rows) rows.push_back(sweep::to_json(r).dump());
  return rows;
}
#endif

}  // namespace

PYBIND11_MODULE(_ringsim, m) {
  m.doc() = "C++ half of the ringsim module; use `import ringsim` (docs/python.md).";
  // ringsim.InputError: bad input, with the CLI's one-line message.
  static py::exception<InputError> input_error(m, "InputError", PyExc_Exception);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(input_error.ptr(), one_line(e.what()).c_str());
    }
  });
  m.def("cli", &run_in_process, py::arg("args"),
        "Run `ringsim ARGS` in this process (no SimGrid); returns (exit code, stdout, stderr).");
  m.def("child", &run_child, py::arg("args"), py::arg("timeout_s") = 0.0,
        "Run `ringsim ARGS` as a child process; returns (exit code, stdout, stderr, failure).");
  m.def("run_args", &run_args, py::arg("args"),
        "Parse `ringsim run ARGS` into the typed RunSpec; returns the flags that reproduce it.");
  m.def("ringsim_bin", &ringsim_bin, "The ringsim program child runs use.");
  m.attr("BUILD_RINGSIM_BIN") = RINGSIM_PY_BIN;
  m.attr("VERSION") = RINGSIM_VERSION;  // the CLI's --version, ringsim.__version__
#ifdef RINGSIM_PY_SWEEP
  m.def("sweep", &run_sweep, py::arg("base"), py::arg("axes"), py::arg("jobs") = 1,
        py::arg("out") = "", py::arg("timeout_s") = 0.0, py::arg("force_new") = false,
        "Run a sweep grid (sweep/sweep.hpp); returns one JSON text per row, grid order.");
  m.attr("HAVE_SWEEP") = true;
#else
  m.attr("HAVE_SWEEP") = false;
#endif
}
