#include "experiments/runner.hpp"

#include <nlohmann/json.hpp>

#include "models/analytic/report.hpp"
#include "models/core/errors.hpp"
#include "proc/child.hpp"
#include "proc/run_spec.hpp"

namespace ringsim::exp {

namespace {

// The probe child's summary, or why there is none.
struct Probe {
  bool ok = false;
  RunSummary s;
  std::string error;
};

Probe read_point(const proc::Result& r) {
  Probe run;
  if (!r.ok()) {
    run.error = r.failure();
    return run;
  }
  try {
    run.s = RunSummary::from_json(nlohmann::json::parse(r.out), "ringsim run --json");
    run.ok = true;
  } catch (const nlohmann::json::exception& e) {
    run.error = std::string("unreadable JSON: ") + e.what();
  } catch (const InputError& e) {
    run.error = e.what();
  }
  return run;
}

}  // namespace

std::pair<std::string, std::string> choose_engine(const std::string& ringsim,
                                                  const std::string& requested) {
  if (requested == "analytic")
    return {"analytic", "analytic closed forms (requested with --engine analytic)"};
  proc::RunSpec probe;
  probe.workload.devices = 2;
  probe.workload.block = 256;
  probe.workload.model = "llama2-7b";
  probe.json = true;
  proc::Command c;
  c.argv = proc::to_args(probe);
  c.argv.insert(c.argv.begin(), ringsim);
  c.timeout_s = 60;
  const auto p = read_point(proc::run(c));
  std::string why = p.error;
  const bool ok = p.ok && p.s.engine == "simgrid";
  if (p.ok && !ok) why = "the run did not report engine simgrid";
  if (ok)
    return {"simgrid",
            "SimGrid discrete-event simulation (`ringsim run --engine simgrid`, one process per "
            "point)"};
  if (requested == "simgrid")
    throw InputError("--engine: simgrid is not available in this build (" + why + ")");
  return {"analytic",
          "analytic closed forms: `ringsim run --engine simgrid` is not available in this build (" +
              why + ")"};
}

}  // namespace ringsim::exp
