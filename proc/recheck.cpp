#include "proc/recheck.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "models/analytic/report.hpp"
#include "models/core/errors.hpp"
#include "proc/child.hpp"
#include "proc/resolve.hpp"
#include "sim/progress.hpp"

namespace ringsim::proc {

const char* Recheck::status_name() const {
  switch (status) {
    case Status::Off:
      return "off";
    case Status::Ok:
      return "ok";
    case Status::Partial:
      return "partial";
    case Status::Failed:
      return "failed";
    case Status::Unavailable:
      return "unavailable";
  }
  return "";
}

RunSpec recheck_spec(const PlanRequest& r, const PlanConfig& c, const Hardware& hw,
                     const HardwareSpec& hardware, Pass pass) {
  const auto w = attention_workload(r, c);
  const auto g = group_hardware(hw, c.tp);
  RunSpec s;
  auto& ws = s.workload;
  ws.devices = w.devices;
  ws.block = w.block;
  ws.layout = w.layout;
  ws.causal = r.causal;
  ws.pass = pass;
  ws.dtype = w.dtype;
  ws.d_model = w.shape.d_model;
  ws.heads = w.shape.heads;
  ws.kv_heads = w.shape.kv_heads;
  ws.head_dim = w.shape.head_dim;
  ws.ffn = w.shape.ffn;
  ws.layers = 1;
  if (w.layout == Layout::Hybrid) ws.ulysses_degree = w.ulysses_degree;
  auto& h = s.hardware;
  h = hardware;
  h.cluster.clear();  // everything it set is spelled out below
  h.gpu = hw.gpu_name;
  h.platform = g.platform;
  // Only what the platform has (`ringsim run` refuses the rest).
  const auto has = platform_flags(g.platform);
  h.gpus_per_node.reset();
  h.intra.clear();
  h.inter.clear();
  if (has.gpus_per_node) h.gpus_per_node = g.gpus_per_node;
  if (has.intra) h.intra = hw.intra_name;
  if (has.inter) h.inter = hw.inter_name;
  // The cluster's shape, which the cleared --cluster carried.
  h.nics_per_node.reset();
  h.nvlink_domain.reset();
  h.oversubscription.reset();
  if (has.nics && g.nics_per_node > 0 && g.gpus_per_node % g.nics_per_node == 0)
    h.nics_per_node = g.nics_per_node;
  if (has.nvlink_domain && g.nvlink_domain > g.gpus_per_node &&
      g.nvlink_domain % g.gpus_per_node == 0)
    h.nvlink_domain = g.nvlink_domain;
  if (has.oversubscription && g.oversubscription != 1) h.oversubscription = g.oversubscription;
  if (g.platform == Platform::Nodes && g.inter_fattree && !s.sim.inter_topology_given) {
    s.sim.inter_topology = sim::InterTopology::FatTree;
    s.sim.inter_topology_given = true;
  }
  s.sim.engine = Engine::SimGrid;
  s.json = true;
  return s;
}

namespace {

// A child's summary, or why there is none.
std::optional<RunSummary> summary_of(const Result& res, std::string* error) {
  if (!res.ok()) {
    *error = fmt::format("`ringsim run --engine simgrid` {}", res.failure());
    return std::nullopt;
  }
  try {
    auto s = RunSummary::from_json(nlohmann::json::parse(res.out), "ringsim run --json");
    if (s.engine != "simgrid") {
      *error = fmt::format("the child ran engine '{}', not simgrid", s.engine);
      return std::nullopt;
    }
    return s;
  } catch (const nlohmann::json::exception& e) {
    *error = std::string("the child printed no JSON summary: ") + e.what();
  } catch (const InputError& e) {
    *error = e.what();
  }
  return std::nullopt;
}

}  // namespace

Recheck recheck_top(int n, const std::vector<PlanConfig>& configs, const PlanRequest& r,
                    const Hardware& hw, const HardwareSpec& hardware, const Implementation& cm,
                    double timeout_s) {
  Recheck rc;
  if (n <= 0) return rc;
  std::string why;
  const auto exe = ringsim_exe(&why);
  if (exe.empty()) {
    rc.status = Recheck::Status::Unavailable;
    rc.message = why;
    return rc;
  }
  std::vector<const PlanConfig*> chosen;
  std::vector<Command> cmds;
  for (const auto& c : configs) {
    if (!c.feasible || static_cast<int>(chosen.size()) >= n) continue;
    chosen.push_back(&c);
    for (Pass p : {Pass::Fwd, Pass::FwdBwd}) {
      Command cmd;
      cmd.argv = to_args(recheck_spec(r, c, hw, hardware, p));
      cmd.argv.insert(cmd.argv.begin(), exe);
      cmd.timeout_s = timeout_s;
      cmds.push_back(std::move(cmd));
    }
  }
  // Each child simulates one layer of a top config: seconds to minutes at
  // large rings, so a bar with ETA on a terminal (none when piped).
  sim::Progress bar(sim::progress_wanted(false), cmds.size(), "ringsim plan: SimGrid re-check");
  const auto results = run_many(cmds, 2, [&bar] { bar.tick(); });
  bar.finish();
  int failed = 0;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const auto& c = *chosen[i];
    RecheckRow row;
    row.config = c.label();
    row.analytic_attention_s = c.time.attention_s;
    row.analytic_step_s = c.time.step_time_s;
    const auto f = summary_of(results[2 * i], &row.error);
    const auto fb = f ? summary_of(results[2 * i + 1], &row.error) : std::nullopt;
    if (!f || !fb) {
      ++failed;
      rc.rows.push_back(std::move(row));
      continue;
    }
    row.fwd_layer_s = f->time_s;
    row.fwdbwd_layer_s = fb->time_s;
    row.fwdbwd_layer_analytic_s = fb->sim->analytic_time_s;
    // The same config (pipeline included) with the simulated attention times.
    row.with_simgrid = evaluate(r, hw, cm, c, AttentionOverride{f->time_s, fb->time_s, "simgrid"});
    rc.rows.push_back(std::move(row));
  }
  const int done = static_cast<int>(chosen.size());
  rc.status = failed == 0     ? Recheck::Status::Ok
              : failed < done ? Recheck::Status::Partial
                              : Recheck::Status::Failed;
  rc.message = fmt::format(
      "attention of the top {} config(s) re-run by the SimGrid engine in child processes (one "
      "layer, x layers){}",
      done, failed ? fmt::format("; {} failed", failed) : "");
  return rc;
}

}  // namespace ringsim::proc
