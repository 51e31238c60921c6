// `ringsim run` (the default subcommand): one ring configuration, summarised.
#include <fmt/format.h>

#include <iostream>

#include "models/analytic.hpp"
#include "models/parse.hpp"
#include "models/report.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/workload_flags.hpp"

namespace ringsim::cli {
namespace {

struct RunFlags {
  WorkloadFlags w;
  HardwareFlags hw;
  bool json = false;
  std::string engine = "analytic";
};

int run(const RunFlags& f) {
  const auto cat = load_catalog(f.hw);
  const auto dtype = parse_dtype("--dtype", f.w.dtype);
  auto hw = resolve_hardware(f.hw, cat, dtype);
  const auto w = resolve_workload(f.w, hw);
  auto cm = make_compute_model(f.hw, hw, dtype);
  parse_choice("--engine", f.engine, {"analytic"});
  Summary s = analyze(w, hw, *cm);
  if (f.json)
    std::cout << summary_json(s).dump(2) << "\n";
  else
    std::cout << summary_text(s);
  return 0;
}

const CommandRegistrar reg{{"run", 0, [](CLI::App& app, int* code) {
  auto f = std::make_shared<RunFlags>();
  auto* sub = app.add_subcommand("run", "Predict one ring configuration (the default subcommand)");
  add_workload_flags(sub, f->w);
  add_hardware_flags(sub, f->hw);
  sub->add_option("--engine", f->engine, "analytic (closed forms)")->capture_default_str();
  sub->add_flag("--json", f->json, "Print one JSON object instead of the table");
  sub->callback([f, code] { *code = run(*f); });
  return sub;
}}};

}  // namespace
}  // namespace ringsim::cli
