#include "sim/sim_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "models/analytic/analytic.hpp"
#include "models/analytic/report.hpp"
#include "models/core/parse.hpp"

namespace ringsim::sim {

namespace {

bool ring_type(Layout l) {
  return l != Layout::Ulysses && l != Layout::Allgather;
}

std::string faults_text(const Faults& f) {
  std::vector<std::string> parts;
  for (const auto& s : f.stragglers)
    parts.push_back(fmt::format("device {} computes x{:g}", s.device, s.factor));
  for (const auto& d : f.degrades)
    parts.push_back(fmt::format("link {} bandwidth /{:g}", d.link, d.factor));
  if (f.jitter_sigma > 0)
    parts.push_back(
        fmt::format("compute jitter lognormal sigma {:g}, seed {}", f.jitter_sigma, f.seed));
  return join(parts, "; ");
}

// The verdict's stalled steps: "bwd 0-14", "none".
std::string stalled_text(const Verdict& v) {
  std::vector<std::string> parts;
  for (int p = 0; p < 2; ++p)
    if (!v.stalled[static_cast<std::size_t>(p)].empty())
      parts.push_back(fmt::format("{} {}", p ? "bwd" : "fwd",
                                  step_ranges(v.stalled[static_cast<std::size_t>(p)])));
  return parts.empty() ? "none" : join(parts, "; ");
}

}  // namespace

Summary simulated_summary(const Summary& a, const SimResult& r) {
  Summary s = a;
  s.engine = "simgrid";
  s.time_s = r.time_s;
  s.compute_only_s = r.compute_only_s;
  s.exposed_comm_s = std::max(0.0, r.time_s - r.compute_only_s);
  // The ideal (the same useful work at the kernel's best rate over the
  // devices) does not depend on the schedule: the closed forms'. With
  // --jitter (mean 1) a device's draws can sum below it; the busiest
  // device's own compute, a lower bound of the time too, is then the ideal.
  if (r.compute_only_s > 0 && r.compute_only_s < s.ideal_time_s) s.ideal_time_s = r.compute_only_s;
  settle_efficiency(s);
  // Every GPU counts: devices x tp (the baseline is the whole model's).
  const double gpus = static_cast<double>(a.workload.devices) * std::max(a.workload.tp, 1);
  s.efficiency_vs_single_device = efficiency_vs_one_device(s.single_device_time_s, gpus, s.time_s);
  s.compute_s_per_step = r.compute_s_per_step;
  s.collective_s = r.collective_s;
  s.other_s = r.other_s;
  s.tp_comm_s = r.tp_comm_s;
  s.ep_comm_s = r.ep_comm_s;
  // The verdict by the closed forms' rule on the simulated timeline: the
  // device that finished last and where its time went (the min block, the
  // block and the layout's facts are the analytic inputs').
  auto& in = s.verdict_inputs;
  const auto& ts = r.setter;
  in.device_time_s = ts.finish_s;
  in.device_free_s = ts.free_s;
  // The losses: this timeline's mean compute; merges and launches are the
  // closed forms' (a's), which faults do not change.
  in.mean_compute_s = r.mean_free_s;
  in.slowed_devices = r.slowed_devices;
  in.step_wait_s = ts.step_wait_s;
  in.interference_s = ts.interference_s;
  in.final_hop_s = ts.final_hop_s;
  in.collectives_s = ts.collectives_s;
  in.tp_s = ts.tp_s;
  in.ep_s = ts.ep_s;
  // Job mode: the ring's own sources do not cover the FSDP flows it waits
  // for, which run beside it on the same links.
  if (r.job.rings > 1 && r.job.fsdp_s > 0)
    in.residual_name = "the FSDP collectives the ring waits for (job mode, on the same links)";
  in.lightest_s = r.lightest_step_s;
  in.heaviest_s = r.heaviest_step_s;
  in.lightest_pass = r.lightest_pass;
  in.heaviest_pass = r.heaviest_pass;
  in.lightest_step = r.lightest_step;
  in.heaviest_step = r.heaviest_step;
  decide(s);
  return s;
}

// Job mode: why the slowest ring took longer than one ring alone (the
// closed form): a straggler in it, FSDP collectives that outlast it, or the
// busiest link on its routes, shared with other rings or FSDP flows.
std::string why_slowest(const JobResult& j, const SimOptions& o, double alone) {
  const auto first = j.slowest_ring * j.ring_size;
  for (const auto& x : o.faults.stragglers)
    if (x.device >= first && x.device < first + j.ring_size)
      return fmt::format("device {} (rank {}) computes {}x slower (--straggler)", x.device,
                         x.device - first, x.factor);
  const double t = j.ring_time_s[static_cast<std::size_t>(j.slowest_ring)];
  if (!(t > alone * (1 + 1e-9)))
    return o.fsdp ? "no slower than one ring alone: the FSDP flows and the links it shares cost "
                    "it nothing"
                  : "no slower than one ring alone: no link it uses is shared";
  if (j.fsdp_s > alone) {
    // The collectives span the job: the busiest link anywhere paces them.
    std::string by;
    if (!j.links.empty())
      by = fmt::format("; the busiest link, {}, peaks at {:.0f}% ({:.0f}% mean)", j.links[0].name,
                       100 * j.links[0].peak, 100 * j.links[0].mean);
    return fmt::format("its FSDP collectives take {}, longer than the ring alone ({}){}",
                       human_seconds(j.fsdp_s), human_seconds(alone), by);
  }
  if (!j.slowest_link.empty())
    return fmt::format(
        "{:.1f}% slower than alone: its busiest link, {}, peaks at {:.0f}%{}",
        100 * (t / alone - 1), j.slowest_link, 100 * j.slowest_link_peak,
        o.fsdp ? " (shared with other rings and the FSDP flows)" : " (shared with other rings)");
  return fmt::format("{:.1f}% slower than alone", 100 * (t / alone - 1));
}

nlohmann::json job_json(const JobResult& j, const SimOptions& o, double alone) {
  nlohmann::json links = nlohmann::json::array();
  for (const auto& l : j.links)
    links.push_back({{"link", l.name},
                     {"peak_utilisation", l.peak},
                     {"mean_utilisation", l.mean},
                     {"bytes", l.bytes}});
  const double t = j.ring_time_s[static_cast<std::size_t>(j.slowest_ring)];
  return {{"rings", j.rings},
          {"ranks_per_ring", j.ring_size},
          {"gpus", j.rings * j.ring_size * std::max(o.workload.tp, 1)},
          {"ring_time_s", j.ring_time_s},
          {"slowest_ring", j.slowest_ring},
          {"slowest_ring_time_s", t},
          {"ring_alone_s", alone},
          {"contention", alone > 0 ? t / alone : 0.0},
          {"why", why_slowest(j, o, alone)},
          {"fsdp", o.fsdp},
          {"fsdp_s", j.fsdp_s},
          {"fsdp_round_bytes", j.fsdp_bytes},
          {"hottest_links", links},
          {"slowest_ring_link", j.slowest_link},
          {"slowest_ring_link_peak", j.slowest_link_peak}};
}

// The text rows of job mode.
std::vector<std::pair<std::string, std::string>> job_rows(const JobResult& j, const SimOptions& o,
                                                          double alone) {
  std::vector<std::pair<std::string, std::string>> rows;
  const auto tp = std::max(o.workload.tp, 1);
  rows.push_back({"job", fmt::format("{} rings x {} CP ranks{} = {} GPUs; FSDP flows {}", j.rings,
                                     j.ring_size, tp > 1 ? fmt::format(" x TP {}", tp) : "",
                                     j.rings * j.ring_size * tp, o.fsdp ? "on" : "off")});
  const auto [lo, hi] = std::minmax_element(j.ring_time_s.begin(), j.ring_time_s.end());
  std::string times;
  if (j.rings <= 16)
    for (std::size_t r = 0; r < j.ring_time_s.size(); ++r)
      times += (r ? ", " : "") + human_seconds(j.ring_time_s[r]);
  else
    times = fmt::format("{} to {}", human_seconds(*lo), human_seconds(*hi));
  rows.push_back({"ring times", times});
  rows.push_back({"slowest ring",
                  fmt::format("ring {}: {} (one ring alone, closed form: {}): {}", j.slowest_ring,
                              human_seconds(*hi), human_seconds(alone), why_slowest(j, o, alone))});
  std::vector<std::string> links;
  for (std::size_t i = 0; i < j.links.size() && i < 5; ++i)
    links.push_back(fmt::format("{} {:.0f}% peak, {:.0f}% mean", j.links[i].name,
                                100 * j.links[i].peak, 100 * j.links[i].mean));
  rows.push_back({"busiest links", links.empty() ? "none" : join(links, "; ")});
  if (o.fsdp)
    rows.push_back(
        {"FSDP collectives",
         fmt::format("{} (busiest device; {} per rank per round)", human_seconds(j.fsdp_s),
                     human_bytes(static_cast<double>(j.fsdp_bytes)))});
  return rows;
}

RunSummary sim_summary(const Summary& a, const SimResult& r, const SimOptions& o) {
  auto s = RunSummary::of(simulated_summary(a, r));
  RunSummary::Simulated m;
  m.analytic_time_s = a.time_s;
  m.analytic_efficiency = a.efficiency;
  m.platform = r.platform;
  m.network_model = to_string(o.network);
  if (o.hardware.platform == Platform::Nodes) m.inter_topology = to_string(o.topology.inter);
  m.activities = r.activities;
  m.simulated_devices = r.simulated_devices;
  m.simulation_method = r.recurrence                               ? "recurrence"
                        : r.simulated_devices < o.workload.devices ? "symmetry"
                                                                   : "simgrid";
  m.stalled_fwd = r.stalled_steps[0];
  m.stalled_bwd = r.stalled_steps[1];
  m.stalled_device_steps = r.stalled_device_steps;
  m.wait_s = r.wait_s;
  m.critical_device = r.critical_device;
  m.critical_device_busy_s =
      r.device_busy_s.empty() ? 0.0 : r.device_busy_s[static_cast<std::size_t>(r.critical_device)];
  nlohmann::json f = nlohmann::json::object();
  const auto& faults = o.faults;
  if (!faults.stragglers.empty()) {
    f["straggler"] = nlohmann::json::array();
    for (const auto& x : faults.stragglers)
      f["straggler"].push_back({{"device", x.device}, {"factor", x.factor}});
  }
  if (!faults.degrades.empty()) {
    f["degrade"] = nlohmann::json::array();
    for (const auto& d : faults.degrades)
      f["degrade"].push_back({{"link", d.link}, {"factor", d.factor}});
  }
  if (faults.jitter_sigma > 0)
    f["jitter"] = {{"sigma", faults.jitter_sigma}, {"seed", faults.seed}};
  m.faults = f;
  if (o.rings > 1) m.job = job_json(r.job, o, a.time_s);
  s.sim = std::move(m);
  return s;
}

std::string sim_summary_text(const Summary& a, const SimResult& r, const SimOptions& o) {
  const auto& w = a.workload;
  const Summary s = simulated_summary(a, r);
  std::string out;
  auto row = [&](const std::string& k, const std::string& v) {
    out += fmt::format("  {:<26}{}\n", k, v);
  };
  // Two columns: a simulated value longer than its column keeps two blanks
  // before the analytic one ("fwd 21-62; bwd 11-62  none", never glued).
  auto pair = [&](const std::string& k, const std::string& sim, const std::string& ana) {
    out +=
        fmt::format("  {:<26}{:<{}}{}\n", k, sim, std::max<std::size_t>(18, sim.size() + 2), ana);
  };
  out += title_line(w);
  row("model", model_text(w));
  if (w.tp > 1) row("tensor parallel", tp_text(w));
  row("hardware", a.hardware);
  row("simulated platform", fmt::format("{}; {} network model", r.platform, to_string(o.network)));
  row("engine / compute model", "simgrid (analytic alongside) / " + a.compute_model);
  if (!a.overlap)
    row("transfer overlap", "none (--overlap none: each transfer follows its compute)");
  if (r.simulated_devices > 0 && r.simulated_devices < w.devices)
    row("symmetry",
        fmt::format("every device's timeline is the same: simulated one period of {} devices "
                    "(--symmetry off for all {})",
                    r.simulated_devices, w.devices));
  if (r.recurrence)
    row("recurrence",
        "no two ring hops share a link: the schedule played as a recurrence of SimGrid's exact "
        "timing, without its actors (--recurrence off for them)");
  if (o.faults.any()) row("faults", faults_text(o.faults));
  if (o.rings > 1)
    for (const auto& [k, v] : job_rows(r.job, o, a.time_s)) row(k, v);
  out += "\n";
  // The closed forms know no faults: say so where they are left out.
  pair("", o.rings > 1 ? "simulated (job)" : "simulated",
       o.rings > 1 ? "analytic (one ring alone)"
                   : (o.faults.any() ? "analytic (no faults)" : "analytic"));
  const auto layers = w.layers > 1 ? fmt::format(" ({} layers)", w.layers) : std::string();
  pair("time" + layers, human_seconds(s.time_s), human_seconds(a.time_s));
  pair("heaviest step compute", human_seconds(s.verdict.heaviest_step_compute_s),
       human_seconds(a.verdict.heaviest_step_compute_s));
  pair("lightest step compute", human_seconds(s.verdict.lightest_step_compute_s),
       human_seconds(a.verdict.lightest_step_compute_s));
  if (ring_type(w.layout) && a.bytes_per_step > 0)
    pair("transfer per step", "-",
         fmt::format("{} ({})", human_seconds(a.comm_s_per_step),
                     human_bytes(static_cast<double>(a.bytes_per_step))));
  if (a.collective_s > 0 || s.collective_s > 0)
    pair("collectives", human_seconds(s.collective_s), human_seconds(a.collective_s));
  if (w.scope == Scope::Layer)
    pair("projections + MLP", human_seconds(s.other_s), human_seconds(a.other_s));
  if (w.tp > 1 && w.scope == Scope::Layer)
    pair("TP collectives", human_seconds(s.tp_comm_s), human_seconds(a.tp_comm_s));
  if (a.ep_comm_s > 0)
    pair("MoE dispatch + combine", human_seconds(s.ep_comm_s), human_seconds(a.ep_comm_s));
  pair("exposed communication", human_seconds(s.exposed_comm_s), human_seconds(a.exposed_comm_s));
  pair("efficiency", fmt::format("{:.1f}%", 100 * s.efficiency),
       fmt::format("{:.1f}%", 100 * a.efficiency));
  pair("vs one device", fmt::format("{:.1f}%", 100 * s.efficiency_vs_single_device),
       fmt::format("{:.1f}%", 100 * a.efficiency_vs_single_device));
  pair("communication hidden", s.verdict.hidden ? "yes" : "no", a.verdict.hidden ? "yes" : "no");
  pair("stalled steps", stalled_text(s.verdict), stalled_text(a.verdict));
  row("verdict (simulated)", s.verdict.text);
  row("verdict (analytic)", a.verdict.text);
  out += "\n";
  for (const auto& [k, v] : cost_rows(a)) row(k, v);
  for (const auto& [k, v] : moe_rows(a)) row(k, v);
  row("simulated / analytic",
      (a.time_s > 0 ? fmt::format("{:.6f}", s.time_s / a.time_s) : "n/a") +
          (o.faults.any() ? " (the analytic column leaves out the faults)" : ""));
  // Every device's waits, the time-setting one's or not (the JSON's
  // top-level stalled_steps): a device off the critical path can wait
  // without exposing anything.
  std::vector<std::string> stalls;
  for (int p = 0; p < 2; ++p)
    if (!r.stalled_steps[p].empty())
      stalls.push_back(
          fmt::format("{} steps {}", p ? "bwd" : "fwd", step_ranges(r.stalled_steps[p])));
  row("waits on any device",
      stalls.empty() ? "none"
                     : fmt::format("{} ({} device-steps waited, {} of device time summed over "
                                   "the devices)",
                                   join(stalls, "; "), grouped_count(r.stalled_device_steps),
                                   human_seconds(r.wait_s)));
  if (!r.device_busy_s.empty())
    row("critical device",
        fmt::format("{} (busiest: {} of compute)", r.critical_device,
                    human_seconds(r.device_busy_s[static_cast<std::size_t>(r.critical_device)])));
  row("min block to hide comm",
      min_block_text(a.verdict, a.overlap, !a.workload.documents.empty()) + " (analytic)");
  row("memory per device", human_bytes(static_cast<double>(a.memory_bytes_per_device)) +
                               " (attention buffers, one layer)");
  row("simulated activities",
      r.recurrence ? fmt::format("{} computes and transfers played as a recurrence (0 in SimGrid)",
                                 r.activities)
                   : fmt::format("{}", r.activities));
  return out;
}

}  // namespace ringsim::sim
