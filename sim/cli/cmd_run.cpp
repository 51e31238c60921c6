// `ringsim run` (the default subcommand): one ring configuration, simulated on
// the described cluster (SimGrid) with the closed forms alongside, or the
// closed forms alone (--engine analytic).
#include <fmt/format.h>

#include <iostream>

#include "models/analytic.hpp"
#include "models/errors.hpp"
#include "models/parse.hpp"
#include "models/report.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/workload_flags.hpp"
#include "sim/faults.hpp"
#include "sim/guard.hpp"
#include "sim/progress.hpp"
#include "sim/sim_report.hpp"
#include "sim/simulate.hpp"
#include "sim/symmetry.hpp"
#include "sim/trace_writer.hpp"

namespace ringsim::cli {
namespace {

struct RunFlags {
  WorkloadFlags w;
  HardwareFlags hw;
  bool json = false;
  std::string engine = "simgrid";
  std::string trace, csv;
  std::string network_model = "exact";
  std::string inter_topology = "rail";
  std::string torus_dims;
  std::vector<std::string> stragglers, degrades;
  std::string jitter, seed = "1";
  bool progress = false;
  std::string max_activities, max_memory;
  std::string symmetry = "auto";
  std::string overlap = "full";
};

// --symmetry auto reduces a symmetric ring to one period past this size, where
// the full simulation starts to take seconds (docs/sim.md, "Speed").
constexpr std::int64_t kAutoSymmetryDevices = 1024;

// Exit code of a run stopped by Ctrl-C (128 + SIGINT, as shells report it).
constexpr int kInterrupted = 130;

int interrupted() {
  std::cerr << "ringsim: interrupted; no output files were written\n";
  return kInterrupted;
}

int run(const RunFlags& f) {
  // From the start, so an early Ctrl-C also ends as "interrupted".
  sim::InterruptGuard guard;
  const auto cat = load_catalog(f.hw);
  const auto dtype = parse_dtype("--dtype", f.w.dtype);
  auto hw = resolve_hardware(f.hw, cat, dtype);
  hw.overlap = parse_choice("--overlap", f.overlap, {"full", "none"}) == "full";
  const auto w = resolve_workload(f.w, hw);
  auto cm = make_compute_model(f.hw, hw, dtype);
  const bool simgrid = parse_choice("--engine", f.engine, {"simgrid", "analytic"}) == "simgrid";

  sim::SimContext ctx;
  ctx.platform = hw.platform;
  ctx.network = static_cast<sim::NetworkModel>(
      std::find(sim::network_model_names().begin(), sim::network_model_names().end(),
                parse_choice("--network-model", f.network_model, sim::network_model_names())) -
      sim::network_model_names().begin());
  ctx.inter =
      parse_choice("--inter-topology", f.inter_topology, sim::inter_topology_names()) == "rail"
          ? sim::InterTopology::Rail
          : sim::InterTopology::FatTree;
  for (const auto& s : f.stragglers)
    ctx.faults.stragglers.push_back(sim::parse_straggler(s, w.devices));
  for (const auto& d : f.degrades) ctx.faults.degrades.push_back(sim::parse_degrade(d));
  if (!f.jitter.empty()) ctx.faults.jitter_sigma = parse_real("--jitter", f.jitter, 0, 10);
  ctx.faults.seed = static_cast<std::uint64_t>(parse_count("--seed", f.seed, 0, INT64_MAX));

  Summary a = analyze(w, hw, *cm);
  if (!simgrid) {
    for (const auto& [flag, set] : {std::pair{"--trace", !f.trace.empty()},
                                    {"--csv", !f.csv.empty()},
                                    {"--straggler/--degrade/--jitter", ctx.faults.any()}})
      if (set) throw InputError(fmt::format("{}: needs the simulator (--engine simgrid)", flag));
    if (f.json)
      std::cout << summary_json(a).dump(2) << "\n";
    else
      std::cout << summary_text(a);
    return 0;
  }

  sim::SimOptions o;
  o.workload = w;
  o.hardware = hw;
  o.compute = cm.get();
  o.topology = sim::topology_options(hw, w.devices);
  o.topology.inter = ctx.inter;
  if (!f.torus_dims.empty()) {
    if (hw.platform != Platform::Torus2D && hw.platform != Platform::Torus3D)
      throw InputError("--torus-dims: only applies to --platform torus2d or torus3d");
    o.topology.torus_dims =
        sim::parse_torus_dims(f.torus_dims, hw.platform == Platform::Torus2D ? 2 : 3, w.devices);
  }
  o.network = ctx.network;
  o.faults = ctx.faults;
  o.record_events = !f.trace.empty();
  o.record_rows = !f.csv.empty();
  o.progress = sim::progress_wanted(f.progress);

  const auto symmetry = parse_choice("--symmetry", f.symmetry, {"auto", "on", "off"});
  if (symmetry != "off") {
    const auto p =
        sim::symmetric_period(w, o.topology, o.faults, o.network == sim::NetworkModel::Exact,
                              o.record_events || o.record_rows);
    if (symmetry == "on" && p.devices == 0)
      throw InputError("--symmetry: this run is not symmetric: " + p.why_not);
    if (p.devices > 0 && (symmetry == "on" || w.devices > kAutoSymmetryDevices))
      o.topology = p.topology;
  }

  auto budget = sim::default_budget();
  if (!f.max_activities.empty())
    budget.max_activities =
        static_cast<std::uint64_t>(parse_count("--max-activities", f.max_activities, 1, INT64_MAX));
  if (!f.max_memory.empty())
    budget.max_memory_bytes =
        static_cast<std::uint64_t>(parse_count("--max-memory", f.max_memory, 1, INT64_MAX));
  sim::check_budget(sim::estimate_size(w, o.topology, o.record_events, o.record_rows), budget);

  auto r = sim::simulate(o);
  if (r.interrupted) return interrupted();
  if (o.topology.devices != w.devices) {
    auto full = o.topology;
    full.platform = hw.platform;
    full.devices = w.devices;
    full.wrap_is_inter = false;
    r.platform = fmt::format("{} (simulated: {})", sim::describe_topology(full),
                             sim::describe_topology(o.topology));
  }
  const auto j = sim::sim_summary_json(a, r, ctx);
  if (!f.trace.empty() && !sim::write_trace(f.trace, r, w, o.topology, j)) return interrupted();
  if (!f.csv.empty() && !sim::write_csv(f.csv, r)) return interrupted();
  if (f.json)
    std::cout << j.dump(2) << "\n";
  else
    std::cout << sim::sim_summary_text(a, r, ctx);
  return 0;
}

const CommandRegistrar reg{
    {"run", 0, [](CLI::App& app, int* code) {
       auto f = std::make_shared<RunFlags>();
       auto* sub =
           app.add_subcommand("run", "Predict one ring configuration (the default subcommand)");
       add_workload_flags(sub, f->w);
       add_hardware_flags(sub, f->hw);
       sub->add_option("--engine", f->engine,
                       "simgrid (simulate the cluster; closed forms alongside) | analytic")
           ->capture_default_str();
       sub->add_flag("--json", f->json, "Print one JSON object instead of the table");
       sub->add_option("--trace", f->trace,
                       "Write a Chrome trace (Perfetto) of the simulation to FILE");
       sub->add_option("--csv", f->csv, "Write one CSV row per device per step to FILE");
       sub->add_option("--network-model", f->network_model,
                       "exact (S/B + L on an idle link) | lv08 (SimGrid's TCP-calibrated model)")
           ->capture_default_str();
       sub->add_option(
              "--inter-topology", f->inter_topology,
              "nodes platform: rail (one leaf switch per GPU rank) | fattree (leaves by node)")
           ->capture_default_str();
       sub->add_option("--torus-dims", f->torus_dims,
                       "torus2d/torus3d: dimensions, e.g. 16x16 or 8x8x4");
       sub->add_option("--straggler", f->stragglers,
                       "DEVICE:FACTOR: that device computes FACTOR x slower (repeatable)");
       sub->add_option(
           "--degrade", f->degrades,
           "LINK:FACTOR: divide a link's bandwidth (a link name such as nic7, or A-B for the route "
           "between devices A and B; repeatable)");
       sub->add_option("--jitter", f->jitter, "SIGMA: lognormal noise (mean 1) on every compute");
       sub->add_option("--seed", f->seed, "Seed for --jitter")->capture_default_str();
       sub->add_flag("--progress", f->progress,
                     "Show progress on stderr (default: when stderr is a terminal)");
       sub->add_option(
              "--symmetry", f->symmetry,
              "auto|on|off: simulate one period of a uniform ring (auto: past 1024 devices)")
           ->capture_default_str();
       sub->add_option("--overlap", f->overlap,
                       "full: a step's transfer runs during its compute (GPUs, RDMA) | none: it "
                       "starts when the compute ends (MPI over shared memory; `ringsim calibrate` "
                       "measures which)")
           ->capture_default_str();
       sub->add_option("--max-activities", f->max_activities,
                       "Size guard: most activities to simulate (default 2^29)");
       sub->add_option("--max-memory", f->max_memory,
                       "Size guard: most bytes of memory (K/M/G; default 80% of RAM)");
       sub->callback([f, code] { *code = run(*f); });
       return sub;
     }}};

}  // namespace
}  // namespace ringsim::cli
