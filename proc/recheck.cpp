#include "proc/recheck.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "models/analytic/report.hpp"
#include "models/core/errors.hpp"
#include "proc/child.hpp"
#include "proc/resolve.hpp"
#include "sim/faults.hpp"
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

namespace {

// The cluster `shape` describes (a TP group's view of it, or the whole
// cluster) as flags of `h`, which starts as the plan's overrides; only what
// the platform has (`ringsim run` refuses the rest).
void set_platform(HardwareSpec& h, SimSpec& sim, const Hardware& hw, const Hardware& shape) {
  h.cluster.clear();  // everything it set is spelled out below
  h.gpu = hw.gpu_name;
  h.platform = shape.platform;
  const auto has = platform_flags(shape.platform);
  h.gpus_per_node.reset();
  h.intra.clear();
  h.inter.clear();
  if (has.gpus_per_node) h.gpus_per_node = shape.gpus_per_node;
  if (has.intra) h.intra = hw.intra_name;
  if (has.inter) h.inter = hw.inter_name;
  // The cluster's shape, which the cleared --cluster carried.
  h.nics_per_node.reset();
  h.nvlink_domain.reset();
  h.oversubscription.reset();
  if (has.nics && shape.nics_per_node > 0 && shape.gpus_per_node % shape.nics_per_node == 0)
    h.nics_per_node = shape.nics_per_node;
  if (has.nvlink_domain && shape.nvlink_domain > shape.gpus_per_node &&
      shape.nvlink_domain % shape.gpus_per_node == 0)
    h.nvlink_domain = shape.nvlink_domain;
  if (has.oversubscription && shape.oversubscription != 1)
    h.oversubscription = shape.oversubscription;
  if (shape.platform == Platform::Nodes && shape.inter_fattree && !sim.inter_topology_given) {
    sim.inter_topology = sim::InterTopology::FatTree;
    sim.inter_topology_given = true;
  }
}

// The workload flags of the config's attention `w` (one TP rank's share).
void set_workload(WorkloadSpec& ws, const PlanRequest& r, const Workload& w, Pass pass) {
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
  ws.mlp = w.shape.mlp;
  ws.layers = 1;
  if (w.layout == Layout::Hybrid) ws.ulysses_degree = w.ulysses_degree;
}

// The faults as a child of `ranks` devices numbers them: a GPU of the job is
// in TP group gpu / tp, and the child's devices are the TP groups of one
// stage (CP innermost, then DP), so it is device (gpu / tp) mod ranks.
sim::Faults child_faults(const PlanFaults& f, const PlanConfig& c, std::int64_t ranks) {
  sim::Faults out;
  for (const auto& [gpu, factor] : f.stragglers)
    out.stragglers.push_back({(gpu / std::max<std::int64_t>(1, c.tp)) % ranks, factor});
  for (const auto& d : f.degrades) out.degrades.push_back(sim::parse_degrade(d));
  out.jitter_sigma = f.jitter;
  out.seed = f.seed;
  return out;
}

// The device `factor` times slower at everything it computes: its peak, its
// kernels' rates (the clock) and its streaming rate.
Hardware slowed(Hardware hw, double factor) {
  hw.flops /= factor;
  hw.clock_scale /= factor;
  hw.hbm_bandwidth /= factor;
  return hw;
}

}  // namespace

double PlanFaults::worst() const {
  double w = 1;
  for (const auto& [gpu, factor] : stragglers) w = std::max(w, factor);
  return w;
}

std::string PlanFaults::describe() const {
  std::string out;
  for (const auto& [gpu, factor] : stragglers)
    out += fmt::format("{}--straggler {}:{:g}", out.empty() ? "" : " ", gpu, factor);
  for (const auto& d : degrades) out += fmt::format("{}--degrade {}", out.empty() ? "" : " ", d);
  if (jitter > 0)
    out += fmt::format("{}--jitter {:g} --seed {}", out.empty() ? "" : " ", jitter, seed);
  return out;
}

RunSpec recheck_spec(const PlanRequest& r, const PlanConfig& c, const Hardware& hw,
                     const HardwareSpec& hardware, Pass pass, const PlanFaults& faults) {
  RunSpec s;
  set_workload(s.workload, r, attention_workload(r, c), pass);
  s.hardware = hardware;
  set_platform(s.hardware, s.sim, hw, group_hardware(hw, c.tp));
  if (faults.any()) {
    s.sim.faults = child_faults(faults, c, c.cp);
    s.workload.documents_seed = s.sim.faults.seed;  // one --seed for both, as run reads it
  }
  s.sim.engine = Engine::SimGrid;
  s.json = true;
  return s;
}

namespace {

// Whether `run --scope layer` can play a MoE model's layer as the config
// runs it (docs/models.md, "Mixture of experts in `run`"); if not, why.
bool moe_job_runs(const PlanRequest& r, const PlanConfig& c, std::string* why) {
  const auto& s = r.shape;
  if (s.attention_chunk > 0) {
    *why = fmt::format(
        "job mode runs `run --scope layer` over one layer kind (--layer-kind), where {} "
        "has both: global and chunked attention",
        s.name);
    return false;
  }
  if (!is_moe(s)) return true;
  if (c.ep > 1 && (c.dp > 1 || c.cp % c.ep != 0)) {
    *why = fmt::format(
        "job mode groups expert parallelism over one ring's CP ranks; ep {} spans {}", c.ep,
        c.dp > 1 ? "data-parallel replicas, whose FSDP flows would gather every expert"
                 : fmt::format("more than the ring's {} CP ranks", c.cp));
    return false;
  }
  if (c.etp > 0 && c.etp != c.tp) {
    *why = fmt::format("`run` splits each expert over its TP group ({}), not expert TP {}", c.tp,
                       c.etp);
    return false;
  }
  if (r.capacity_factor > 0) {
    *why = "`run` draws the routing without a capacity factor (--capacity-factor)";
    return false;
  }
  return true;
}

}  // namespace

bool wants_job(const PlanRequest& r, const PlanConfig& c, std::string* why) {
  if (c.tp <= 1 && c.dp <= 1) {
    *why = "tp 1, dp 1: the attention re-check is the whole layer's ring";
    return false;
  }
  if (c.cp > 1 && c.layout != Layout::Ring && c.layout != Layout::Striped &&
      c.layout != Layout::Zigzag) {
    *why = fmt::format("job mode simulates ring layouts, not {}", to_string(c.layout));
    return false;
  }
  return moe_job_runs(r, c, why);
}

RunSpec job_spec(const PlanRequest& r, const PlanConfig& c, const Hardware& hw,
                 const HardwareSpec& hardware, const PlanFaults& faults) {
  RunSpec s;
  auto w = attention_workload(r, c);
  // The child splits the heads, KV heads and MLP by --tp itself.
  const auto tp = static_cast<int>(c.tp);
  w.shape.heads *= tp;
  w.shape.kv_heads *= tp;
  w.shape.ffn *= tp;
  set_workload(s.workload, r, w, Pass::FwdBwd);
  if (is_moe(r.shape)) {
    // The model itself, not a dense stand-in of its width: `run` charges
    // its experts, their routing and their dispatch (wants_job: the
    // configs whose MoE layer it can play).
    s.workload.model = r.shape.name;
    s.workload.d_model = s.workload.heads = s.workload.kv_heads = std::nullopt;
    s.workload.head_dim = s.workload.ffn = std::nullopt;
    s.workload.mlp = std::nullopt;
    s.workload.ep = c.ep;
    s.workload.routing_seed = r.routing_seed;
  }
  s.workload.scope = Scope::Layer;
  s.workload.tp = tp;
  s.workload.sequence_parallel = r.sequence_parallel;
  s.hardware = hardware;
  set_platform(s.hardware, s.sim, hw, hw);
  s.sim.engine = Engine::SimGrid;
  s.sim.dp = c.dp;
  // FSDP's per-layer gathers under pytorch-fsdp; the other frameworks
  // all-reduce gradients once per step, not per layer.
  if (c.dp > 1) s.sim.fsdp = r.framework == Framework::PytorchFsdp;
  if (faults.any()) {
    s.sim.faults = child_faults(faults, c, c.cp * c.dp);
    s.workload.documents_seed = s.sim.faults.seed;
  }
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

// A job run's layer: the slowest ring against one ring alone, and why. A
// run with --dp reports its rings (`job`); one with --tp alone is one ring.
RecheckJob job_of(const Result& res) {
  RecheckJob j;
  const auto s = summary_of(res, &j.error);
  if (!s) return j;
  if (!s->sim) {
    j.error = "the job run's summary has no simulated part";
    return j;
  }
  try {
    const auto out = nlohmann::json::parse(res.out);
    j.layer_s = s->time_s;
    j.alone_s = s->sim->analytic_time_s;
    j.gpus = s->devices * std::max(s->tp, 1);
    if (out.contains("job")) {
      const auto& job = out.at("job");
      j.gpus = job.at("gpus").get<std::int64_t>();
      j.fsdp = job.at("fsdp").get<bool>();
      j.alone_s = job.at("ring_alone_s").get<double>();
      j.why = job.at("why").get<std::string>();
      const auto& links = job.at("hottest_links");
      if (!links.empty()) {
        j.hottest_link = links[0].at("link").get<std::string>();
        j.hottest_peak = links[0].at("peak_utilisation").get<double>();
        j.hottest_mean = links[0].at("mean_utilisation").get<double>();
      }
    }
    j.contention = j.alone_s > 0 ? j.layer_s / j.alone_s : 0;
  } catch (const nlohmann::json::exception& e) {
    j.error = std::string("the job run's summary lacks a key: ") + e.what();
  }
  return j;
}

}  // namespace

Recheck recheck_top(int n, const std::vector<PlanConfig>& configs, const PlanRequest& r,
                    const Hardware& hw, const HardwareSpec& hardware, const Implementation& cm,
                    const PlanFaults& faults, double timeout_s) {
  Recheck rc;
  rc.faults = faults.describe();
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
  // Per chosen config: its first run's index in cmds, its job run's (or -1).
  std::vector<std::size_t> first;
  std::vector<int> job_cmd;
  std::vector<std::string> job_skipped;
  auto add = [&](const RunSpec& spec) {
    Command cmd;
    cmd.argv = to_args(spec);
    cmd.argv.insert(cmd.argv.begin(), exe);
    cmd.timeout_s = timeout_s;
    cmds.push_back(std::move(cmd));
  };
  for (const auto& c : configs) {
    if (!c.feasible || static_cast<int>(chosen.size()) >= n) continue;
    chosen.push_back(&c);
    first.push_back(cmds.size());
    for (Pass p : {Pass::Fwd, Pass::FwdBwd}) add(recheck_spec(r, c, hw, hardware, p, faults));
    std::string why;
    job_cmd.push_back(wants_job(r, c, &why) ? static_cast<int>(cmds.size()) : -1);
    job_skipped.push_back(why);
    if (job_cmd.back() >= 0) add(job_spec(r, c, hw, hardware, faults));
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
    if (job_cmd[i] >= 0)
      row.job = job_of(results[static_cast<std::size_t>(job_cmd[i])]);
    else
      row.job.skipped = job_skipped[i];
    const auto f = summary_of(results[first[i]], &row.error);
    const auto fb = f ? summary_of(results[first[i] + 1], &row.error) : std::nullopt;
    if (!f || !fb) {
      ++failed;
      rc.rows.push_back(std::move(row));
      continue;
    }
    row.fwd_layer_s = f->time_s;
    row.fwdbwd_layer_s = fb->time_s;
    row.fwdbwd_layer_analytic_s = fb->sim->analytic_time_s;
    // The same config (pipeline included) with the simulated attention times.
    // With a straggler, every other compute of the step at its pace too.
    row.compute_slowdown = faults.worst();
    row.with_simgrid = evaluate(r, slowed(hw, row.compute_slowdown), cm, c,
                                AttentionOverride{f->time_s, fb->time_s, "simgrid"});
    // MFU against the device's own peak, not the straggler's.
    row.with_simgrid.mfu /= row.compute_slowdown;
    row.with_simgrid.mfu_palm /= row.compute_slowdown;
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
