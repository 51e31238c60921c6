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
#ifdef RINGSIM_PY_SWEEP
#include "sweep/sweep.hpp"
#endif

namespace py = pybind11;
using namespace ringsim;

namespace {

// proc::run installs, once per process, handlers that pass SIGINT/SIGTERM/
// SIGHUP on to the children and then end this process as the signal would.
// Right for the ringsim program; in Python it would turn every later Ctrl-C
// into the interpreter's death instead of KeyboardInterrupt. So Python's
// handlers are put back after each call (a Ctrl-C during a child run is seen
// by Python when the call returns; the children themselves lead their own
// process groups and finish or reach their deadline).
class KeepSignals {
 public:
  KeepSignals() {
    for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], nullptr, &saved_[i]);
  }
  ~KeepSignals() {
    for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &saved_[i], nullptr);
  }
  KeepSignals(const KeepSignals&) = delete;
  KeepSignals& operator=(const KeepSignals&) = delete;

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction saved_[3]{};
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
  KeepSignals keep;
  int code = 0;
  Capture cap;
  code = cli::run_cli(static_cast<int>(argv.size()), argv.data());
  std::cout.flush();
  return {code, cap.out(), cap.err()};
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
  {
    py::gil_scoped_release release;
    KeepSignals keep;
    r = proc::run(c);
  }
  return {r.exit_code, r.out, r.err, r.failure()};
}

// `ringsim run args...` parsed as the CLI parses it (InputError with its
// message), then the flags that reproduce the typed spec.
std::vector<std::string> run_args(const std::vector<std::string>& args) {
  return proc::to_args(proc::parse_run_args(args));
}

#ifdef RINGSIM_PY_SWEEP
// The base flags of a sweep (`ringsim run` flags, text) into RunFlags, by the
// same CLI11 declarations the CLI uses; each point is then parsed whole by
// sweep::points, so a base that only a swept value completes is fine.
proc::RunFlags base_flags(const std::vector<std::string>& args) {
  proc::RunFlags f;
  CLI::App app{"ringsim run", "run"};
  proc::add_run_flags(&app, f);
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    app.parse(rev);
  } catch (const CLI::ExtrasError& e) {
    const auto line = proc::unknown_flag_line(app.remaining(), {&app}, "ringsim run");
    throw InputError(line.empty() ? e.what() : line);
  } catch (const CLI::ParseError& e) {
    throw InputError(e.what());
  }
  return f;
}

// Rows of a sweep as JSON text (sweep::to_json), grid order; the Python side
// turns them into dicts or a DataFrame.
std::vector<std::string> run_sweep(const std::vector<std::string>& base,
                                   const std::vector<std::pair<std::string, std::string>>& axes,
                                   int jobs, const std::string& out, double timeout_s) {
  sweep::Grid g;
  g.base = base_flags(base);
  for (const auto& [flag, text] : axes) g.axes.push_back({flag, sweep::expand(flag, text)});
  const auto pts = sweep::points(g);
  sweep::Options o;
  o.out = out;
  o.jobs = jobs;
  o.timeout_s = timeout_s;
  o.ringsim = ringsim_bin();
  sweep::Result res;
  {
    py::gil_scoped_release release;
    KeepSignals keep;
    res = sweep::run_local(pts, o);
  }
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
        py::arg("out") = "", py::arg("timeout_s") = 0.0,
        "Run a sweep grid (sweep/sweep.hpp); returns one JSON text per row, grid order.");
  m.attr("HAVE_SWEEP") = true;
#else
  m.attr("HAVE_SWEEP") = false;
#endif
}
