// `ringsim run` (the default subcommand): one ring configuration, simulated on
// the described cluster (SimGrid) with the closed forms alongside, or the
// closed forms alone (--engine analytic). The flags are the run spec's
// (proc/run_spec.hpp): what a child `ringsim run` is handed is parsed here.
#include <fmt/format.h>

#include <iostream>
#include <optional>

#include "cli/command.hpp"
#include "cli/stop_scope.hpp"
#include "models/analytic/analytic.hpp"
#include "models/analytic/report.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/plan/calibration.hpp"
#include "models/plan/error_band.hpp"
#include "proc/resolve.hpp"
#include "proc/run_spec.hpp"
#include "sim/guard.hpp"
#include "sim/progress.hpp"
#include "sim/recurrence_rules.hpp"
#include "sim/sim_report.hpp"
#include "sim/simulate.hpp"
#include "sim/symmetry.hpp"
#include "sim/trace_writer.hpp"
#include "sweep/header.hpp"

namespace ringsim::cli {
namespace {

// --symmetry auto reduces a symmetric ring to one period past this size, where
// the full simulation starts to take seconds (docs/sim.md, "Speed").
constexpr std::int64_t kAutoSymmetryDevices = 1024;
// --recurrence auto plays a link-disjoint ring as a recurrence past this size
// (below it SimGrid's actors take seconds at most; docs/sim.md, "Link-disjoint
// rings: recurrences").
constexpr std::int64_t kAutoRecurrenceDevices = 1024;

// Job mode (--dp > 1): dp rings of the workload's CP ranks, placed one after
// another on one platform (tp innermost, then cp, then dp), simulated whole.
sim::SimOptions job_options(const proc::SimSpec& spec, const Workload& w, const Hardware& hw,
                            sim::SimOptions o) {
  const auto l = w.layout;
  if (l != Layout::Ring && l != Layout::Striped && l != Layout::Zigzag)
    throw InputError(fmt::format(
        "--dp: job mode runs the ring layouts (ring, striped, zigzag), not {}", to_string(l)));
  if (hw.platform == Platform::Torus2D || hw.platform == Platform::Torus3D)
    throw InputError("--dp: job mode runs on --platform nodes, fattree or flat, not a torus");
  if (spec.symmetry == sim::Symmetry::On)
    throw InputError("--symmetry: job mode (--dp > 1) simulates every ring; use auto or off");
  if (spec.recurrence == sim::Recurrence::On)
    throw InputError(
        "--recurrence on: job mode (--dp > 1) runs rings and collectives that share links; use "
        "auto or off");
  if (spec.fsdp && *spec.fsdp && w.scope != Scope::Layer)
    throw InputError("--fsdp: the FSDP flows gather a layer's weights; give --scope layer");
  // Job mode's FSDP flows gather a whole layer's weights; under EP a rank
  // holds experts / ep of them, which the flows do not model.
  if (w.ep > 1)
    throw InputError(
        "--dp: job mode's FSDP flows gather every expert of the layer; with --ep above 1 give --dp "
        "1 (ringsim plan plans a MoE model's data parallelism)");
  auto job = w;
  job.devices = w.devices * spec.dp;
  o.topology = sim::topology_options(hw, job);
  if (spec.inter_topology_given) o.topology.inter = spec.inter_topology;
  o.rings = spec.dp;
  o.fsdp = spec.fsdp.value_or(true) && w.scope == Scope::Layer;
  return o;
}

// --recurrence: a ring whose hops share no link played as arithmetic
// (sim/recurrence.hpp), unless a symmetric period was chosen (cheaper still).
void choose_recurrence(const proc::SimSpec& spec, const Workload& w, const Implementation& cm,
                       sim::SimOptions& o) {
  const bool on = spec.recurrence == sim::Recurrence::On;
  if (spec.recurrence == sim::Recurrence::Off || o.topology.devices != w.devices) return;
  if (!on && w.devices <= kAutoRecurrenceDevices) return;
  const auto why = sim::recurrence_refusal(w, cm, o.topology, o.network);
  if (on && !why.empty()) throw InputError("--recurrence on: " + why + "; use auto or off");
  o.recurrence = why.empty();
}

// The simulator's record of the run: the spec resolved, the simulated
// topology chosen (a symmetric ring's period when that is allowed and pays).
sim::SimOptions sim_options(const proc::SimSpec& spec, const Workload& w, const Hardware& hw,
                            const Implementation& cm) {
  sim::SimOptions o;
  o.workload = w;
  o.hardware = hw;
  o.compute = &cm;
  o.topology = sim::topology_options(hw, w);  // with --tp: the ring of TP groups
  if (spec.inter_topology_given) o.topology.inter = spec.inter_topology;  // else the cluster's
  if (spec.inter_topology_given && hw.platform != Platform::Nodes)
    throw InputError(fmt::format(
        "--inter-topology: only applies to --platform nodes (this run's platform is {})",
        to_string(hw.platform)));
  o.network = spec.network;
  o.faults = spec.faults;
  o.record_events = !spec.trace.empty();
  o.record_rows = !spec.csv.empty();
  o.progress = sim::progress_wanted(spec.progress);
  if (spec.dp > 1) return job_options(spec, w, hw, std::move(o));
  if (spec.symmetry == sim::Symmetry::On && spec.recurrence == sim::Recurrence::On)
    throw InputError(
        "--recurrence on: --symmetry on simulates one period instead; give one of them");
  if (spec.symmetry != sim::Symmetry::Off && spec.recurrence != sim::Recurrence::On) {
    const auto p = sim::symmetric_period(tp_rank_workload(w), o.topology, o.faults,
                                         o.network == sim::NetworkModel::Exact,
                                         o.record_events || o.record_rows, &cm);
    if (spec.symmetry == sim::Symmetry::On && p.devices == 0)
      throw InputError("--symmetry: this run is not symmetric: " + p.why_not);
    if (p.devices > 0 && (spec.symmetry == sim::Symmetry::On || w.devices > kAutoSymmetryDevices))
      o.topology = p.topology;
  }
  choose_recurrence(spec, w, cm, o);
  return o;
}

int run(const proc::RunSpec& spec) {
  // From the start, so an early Ctrl-C also ends as "interrupted"; the
  // closed forms check it at every ring step (packed documents run long).
  const StopScope stop;
  const ProgressScope bar(sim::progress_wanted(spec.sim.progress), "ringsim: packed documents");
  // Every output path is judged before seconds or minutes of simulation.
  check_outputs({{"--trace", spec.sim.trace}, {"--csv", spec.sim.csv}},
                {{"--catalog", spec.hardware.catalog},
                 {"--profile", spec.hardware.profile},
                 {"--calibration", spec.calibration}});
  // A sweep's point: the files as they were when the sweep started, or nothing.
  sweep::check_inputs_hash(spec);
  // Read before any work: a broken file fails in a moment, not after the simulation.
  const auto user = read_user_calibration(spec.calibration);
  const auto cat = proc::load_catalog(spec.hardware);
  auto hw = proc::resolve_hardware(spec.hardware, cat, spec.workload.dtype);
  // Flags that shape nodes or links the platform lacks: refused, not ignored.
  proc::refuse_flags_not_on(spec.hardware, hw.platform);
  hw.overlap = spec.sim.overlap;
  // --inter-topology overrides the cluster's; the closed forms read it too
  // (which hops cross the spine).
  if (spec.sim.inter_topology_given)
    hw.inter_fattree = spec.sim.inter_topology == sim::InterTopology::FatTree;
  const auto w = proc::resolve_workload(spec.workload, hw);
  // The torus's shape reaches both engines through the hardware (the closed
  // forms' closing hop, the simulated links): --torus-dims, else the slice.
  const bool torus = hw.platform == Platform::Torus2D || hw.platform == Platform::Torus3D;
  if (!spec.sim.torus_dims.empty()) {
    if (!torus) throw InputError("--torus-dims: only applies to --platform torus2d or torus3d");
    sim::check_torus_dims(spec.sim.torus_dims, hw.platform == Platform::Torus2D ? 2 : 3, w.devices);
    hw.torus_dims = spec.sim.torus_dims;
  } else if (torus && !hw.torus_dims.empty()) {
    std::int64_t chips = 1;
    for (int d : hw.torus_dims) chips *= d;
    if (chips != w.devices)
      throw InputError(fmt::format(
          "--devices: the cluster's slice {} holds {} chips, got {}; give --devices {} or "
          "--torus-dims",
          join(
              [&] {
                std::vector<std::string> d;
                for (int x : hw.torus_dims) d.push_back(std::to_string(x));
                return d;
              }(),
              "x"),
          chips, w.devices, chips));
  }
  const auto cm = proc::make_implementation(spec.hardware, cat, hw, w.dtype);
  // Every input is read now: hashed again, so a file swapped between the
  // first hash and its reading cannot pass as the sweep's (the two hashes
  // bracket the reads; docs/sweep.md says what this leaves).
  sweep::check_inputs_hash(spec);

  const Summary a = analyze(w, hw, *cm);
  // run's band: its validated cases are published ring speedups (ratios of
  // its times) on this device family (models/plan/error_band.hpp).
  const auto band = choose_band(band_class("run", cat.device(hw.gpu_name).family, "attention"),
                                user.get(), spec.calibration);
  const auto band_line = "  error band (time)         " + band.text() + "\n";
  if (spec.sim.engine == proc::Engine::Analytic) {
    if (spec.json) {
      auto j = summary_json(a);
      j["error_band"] = band.to_json();
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << summary_text(a) << band_line;
    }
    return 0;
  }

  const auto o = sim_options(spec.sim, w, hw, *cm);
  auto budget = sim::default_budget();
  if (spec.sim.max_activities) budget.max_activities = *spec.sim.max_activities;
  if (spec.sim.max_memory) budget.max_memory_bytes = *spec.sim.max_memory;
  auto size = o.recurrence
                  ? sim::estimate_recurrence_size(w, o.topology, o.record_events, o.record_rows)
                  : sim::estimate_size(w, o.topology, o.record_events, o.record_rows);
  if (o.rings > 1) sim::add_job_size(size, w, o.topology, o.fsdp);
  sim::check_budget(size, budget);

  const auto r = sim::simulate(o);
  if (r.interrupted) return interrupted_exit();
  auto j = sim::sim_summary(a, r, o).to_json();
  j["error_band"] = band.to_json();
  // Both outputs or neither: each is written to its temporary file, and only
  // when both are complete (and no Ctrl-C came) are they renamed into place.
  std::optional<AtomicFile> trace_file, csv_file;
  std::vector<AtomicFile*> files;
  if (!spec.sim.trace.empty()) {
    trace_file.emplace(spec.sim.trace, "--trace");
    if (!sim::write_trace(*trace_file, r, w, o.topology, j)) return interrupted_exit();
    files.push_back(&*trace_file);
  }
  if (!spec.sim.csv.empty()) {
    csv_file.emplace(spec.sim.csv, "--csv");
    if (!sim::write_csv(*csv_file, r)) return interrupted_exit();
    files.push_back(&*csv_file);
  }
  if (sim::interrupt_requested()) return interrupted_exit();
  commit_all(files);
  if (spec.json)
    std::cout << j.dump(2) << "\n";
  else
    std::cout << sim::sim_summary_text(a, r, o) << band_line;
  return 0;
}

}  // namespace

Command run_command() {
  return {"run", [](CLI::App& app, int* code) {
            auto f = std::make_shared<proc::RunFlags>();
            auto* sub = app.add_subcommand(
                "run", "Predict one ring configuration (the default subcommand)");
            proc::add_run_flags(sub, *f);
            sub->callback([f, code] { *code = run(proc::parse_run(*f)); });
            return sub;
          }};
}

}  // namespace ringsim::cli
