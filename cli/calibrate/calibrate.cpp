// `ringsim calibrate`: is the simulator right about this machine? Measures it
// (the CPU kernel profile; MPI ping-pongs: the ring step's transfer and
// whether it overlaps with compute), runs the real ring (`mpirun -n R
// ringsim-mpi ...`) on fixed configurations, several launches each, every
// launch right after its own ping-pong, then simulates every launch on the
// link it had (`ringsim run --engine simgrid --platform flat ... --profile`)
// and reports predicted against measured total and per-step time.
//
// Nothing is fitted per experiment: the platform and compute model come only
// from the ping-pongs and the profile. Each simulation runs in its own process
// (SimGrid allows one engine per process). Children are handed typed specs
// (proc::RunSpec, mpi::RingOptions) and read back as typed results
// (RunSummary, mpi::RingSummary, mpi::PingPongResult).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "cli/calibrate/noise.hpp"
#include "cli/calibrate/workdir.hpp"
#include "cli/command.hpp"
#include "cli/stop_scope.hpp"
#include "cli/validate_case.hpp"
#include "kernels/profile_run.hpp"
#include "models/analytic/report.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"
#include "models/core/flag_types.hpp"
#include "models/core/parse.hpp"
#include "models/core/profile.hpp"
#include "models/core/schema.hpp"
#include "mpi/options.hpp"
#include "mpi/results.hpp"
#include "proc/child.hpp"
#include "proc/run_spec.hpp"
#include "sim/progress.hpp"

namespace ringsim::cli {
namespace {

namespace fs = std::filesystem;

using nlohmann::json;

struct CalibrateFlags {
  std::string ranks = "2", repeat, timeout = "600", retries = "3", launches;
  bool oversubscribe = false;  // --oversubscribe: more than kRanksPerCore ranks per core
  bool json = false, quick = false, keep_files = false;
  std::string mpirun = "mpirun", mpi_bin, ringsim_bin, profile, workdir, max_noise;
  std::vector<std::string> mpirun_args;
  // --runs FILE --out FILE: fit the framework factors to the user's measured
  // runs instead (docs/own-cluster.md), no machine measured.
  std::string runs, out;
};

// Only --workdir itself is created: a typo in a parent must not leave a tree
// of new folders behind, so a missing parent is refused before any work.

// ---- tools ------------------------------------------------------------------

struct Tools {
  std::string ringsim, mpi_bin;
  std::vector<std::string> mpirun;  // launcher and its fixed flags, before `-n R`
  std::vector<std::string> env;     // extra environment for the launcher
  std::string mpi_version;
  double timeout_s = 600;
};

proc::Command command(std::vector<std::string> argv, const Tools& t,
                      std::vector<std::string> env = {}) {
  proc::Command c;
  c.argv = std::move(argv);
  c.env = std::move(env);
  c.timeout_s = t.timeout_s;
  return c;
}

// A directory or a device given as a program is refused by name now, not
// after an MPI launch fails on it with a banner.
void refuse_non_program(const char* flag, const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || ::access(path.c_str(), X_OK) != 0)
    throw InputError(fmt::format("{}: '{}' is not an executable file", flag, path));
}

Tools find_tools(const CalibrateFlags& f) {
  Tools t;
  t.timeout_s = parse_real("--timeout", f.timeout, 1, 86400);
  std::string why;
  t.ringsim = f.ringsim_bin.empty() ? proc::ringsim_exe(&why) : f.ringsim_bin;
  if (t.ringsim.empty() || !fs::exists(t.ringsim))
    throw InputError(fmt::format("--ringsim: {} not found; give the path of the ringsim program",
                                 t.ringsim.empty() ? why : t.ringsim));
  refuse_non_program("--ringsim", t.ringsim);
  t.mpi_bin = f.mpi_bin.empty() ? proc::sibling_exe("ringsim-mpi") : f.mpi_bin;
  if (t.mpi_bin.empty() || !fs::exists(t.mpi_bin))
    throw InputError(
        fmt::format("--mpi-bin: {} not found; build ringsim-mpi (CMake finds MPI: RINGSIM_MPI) or "
                    "give its path",
                    t.mpi_bin.empty() ? "ringsim-mpi next to this program" : t.mpi_bin));
  refuse_non_program("--mpi-bin", t.mpi_bin);

  const auto v = proc::run(command({f.mpirun, "--version"}, t));
  if (!v.ok())
    throw InputError(fmt::format("--mpirun: cannot run '{} --version' ({}); give the MPI launcher",
                                 f.mpirun, v.failure()));
  t.mpi_version = v.out.substr(0, v.out.find('\n'));
  t.mpirun = {f.mpirun};
  if (v.out.find("Open MPI") != std::string::npos || v.out.find("OpenRTE") != std::string::npos) {
    // More ranks than cores is allowed here (this is a measurement, not production), and
    // OpenMPI refuses root without these (containers).
    t.mpirun.push_back("--oversubscribe");
    if (::geteuid() == 0) t.env = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"};
  }
  t.mpirun.insert(t.mpirun.end(), f.mpirun_args.begin(), f.mpirun_args.end());
  return t;
}

// `mpirun ... -n R ringsim-mpi FLAGS`, the flags from typed options.
proc::Command mpirun_cmd(const Tools& t, int ranks, const mpi::RingOptions& o) {
  auto argv = t.mpirun;
  argv.insert(argv.end(), {"-n", std::to_string(ranks), t.mpi_bin});
  for (const auto& a : mpi::to_args(o)) argv.push_back(a);
  return command(std::move(argv), t, t.env);
}

// A child's stdout as JSON; InputError naming `what` if it failed or printed none.
json child_json(const proc::Result& r, const std::string& what) {
  // A stop signal reached the child too (proc::run forwards it): the
  // calibration ends here, exit 130, the temporary folder removed.
  throw_if_cancelled();
  if (!r.ok())
    throw InputError(fmt::format("calibrate: {} failed ({}) [{}]", what, r.failure(), r.command));
  try {
    return json::parse(r.out);
  } catch (const json::exception&) {
    throw InputError(fmt::format("calibrate: {} printed no JSON [{}]", what, r.command));
  }
}

// ---- configurations ---------------------------------------------------------

struct Config {
  std::string name, why;
  std::int64_t block = 0;
  int heads = 0, kv_heads = 0, head_dim = 0;
  std::string layout = "ring", pass = "fwd";
  bool causal = false;

  // The real ring's options for this configuration.
  mpi::RingOptions ring() const {
    mpi::RingOptions o;
    o.block = block;
    o.heads = heads;
    o.kv_heads = kv_heads;
    o.head_dim = head_dim;
    o.layout = parse_layout("layout", layout);
    o.pass = parse_pass("pass", pass);
    o.causal = causal;
    return o;
  }
  // The same configuration for the simulator: `ranks` devices, fp32 (what the
  // CPU kernels compute and the ring carries).
  proc::WorkloadSpec workload(int ranks) const {
    proc::WorkloadSpec w;
    w.devices = ranks;
    w.block = block;
    w.heads = heads;
    w.kv_heads = kv_heads;
    w.head_dim = head_dim;
    w.layout = parse_layout("layout", layout);
    w.pass = parse_pass("pass", pass);
    w.causal = causal;
    w.dtype = DType::FP32;
    return w;
  }
  std::string describe() const {
    return fmt::format("{} {} {}, block {}, heads {}/{} kv, head dim {}", layout,
                       causal ? "causal" : "full", pass, block, heads, kv_heads, head_dim);
  }
  json to_json() const {
    return {{"name", name},         {"layout", layout},     {"causal", causal},
            {"pass", pass},         {"block", block},       {"heads", heads},
            {"kv_heads", kv_heads}, {"head_dim", head_dim}, {"why", why}};
  }
};

// Fixed configurations (chosen once, never tuned to a result). On one machine
// MPI moves data through shared memory at ~15 GB/s while one core computes
// ~1e10-1e11 FLOP/s, so a step's compute/transfer ratio, 2 c heads B /
// (kv_heads b F) (Ring Attention sec. 3 with GQA, b bytes per element), stays
// far above 1 at any usual block: the communication-bound cases need tiny
// blocks and MHA, where a transfer is mostly MPI's handshakes (~3.5 us). heads
// = kv_heads = 1 there also matches the profile's one-head calls, so no
// per-call overhead is spread over heads the profile never ran.
std::vector<Config> default_configs(bool quick) {
  const std::int64_t big = quick ? 512 : 1024;
  std::vector<Config> c;
  c.push_back({"compute-bound", "GQA makes K/V small; compute is ~1000x the transfer", big, 8, 2,
               64, "ring", "fwd", false});
  c.push_back({"causal-zigzag", "causal, balanced by zigzag: half the pairs of each step", big, 8,
               2, 64, "zigzag", "fwd", true});
  if (!quick)
    c.push_back({"backward", "backward: K, V, then dK, dV travel; 2.5x forward FLOPs", big / 2, 8,
                 2, 64, "ring", "bwd", false});
  c.push_back({"comm-heavy", "tiny block, MHA: the transfer is comparable to the compute", 16, 1, 1,
               128, "ring", "fwd", false});
  c.push_back({"comm-bound", "smaller still: the transfer outlasts the compute", 8, 1, 1, 128,
               "ring", "fwd", false});
  return c;
}

std::vector<std::int64_t> profile_blocks(const std::vector<Config>& configs) {
  std::set<std::int64_t> b;
  for (const auto& c : configs) {
    b.insert(c.block);
    // Zigzag's diagonal chunks are half blocks, timed at their own size.
    if (c.layout == "zigzag" && c.causal) b.insert(c.block / 2);
  }
  return {b.begin(), b.end()};
}

// ---- the run ----------------------------------------------------------------

// The 1-minute load average and the core count: other work on the cores shows
// up in every measured time, so the report says how busy the machine was.
json machine_load() {
  double l1 = -1;
  std::ifstream f("/proc/loadavg");
  f >> l1;
  return {{"cores", std::thread::hardware_concurrency()}, {"load_1min", l1}};
}

struct Measured {
  double latency = 0, bandwidth = 0, measured_overlap = 1;
  std::string overlap = "full";
  std::string profile_path;
  Profile profile;
};

// The measured machine as the simulator's flat platform.
proc::HardwareSpec platform(const Measured& m) {
  proc::HardwareSpec h;
  h.platform = Platform::Flat;
  h.bandwidth = m.bandwidth;
  h.latency = m.latency;
  h.profile = m.profile_path;
  return h;
}

// The simulator flags of that platform, for the report.
std::string platform_flags(const Measured& m) {
  auto a = proc::to_args(platform(m));
  a.insert(a.end(), {"--overlap", m.overlap});
  return proc::shell_line(a);
}

// Wall over CPU time of the ranks over a timed run: 1 when they had their
// cores to themselves, more when other processes took time slices (the
// measured times then show the machine's load, not the ring).
double contention(const mpi::RingSummary& m) {
  return m.contention;
}

// A run counts as undisturbed below this contention (10% of the time lost to
// other processes).
constexpr double kQuiet = 1.10;

// The simulator's side of one configuration: `ringsim run` on a measured
// platform, in a child process (one SimGrid engine per process). `trace`
// empty: no trace.
json predict(const Tools& t, const Measured& m, const Config& c, int ranks,
             const std::string& trace) {
  proc::RunSpec spec;
  spec.workload = c.workload(ranks);
  spec.hardware = platform(m);
  spec.sim.engine = proc::Engine::SimGrid;
  spec.sim.overlap = m.overlap == "full";
  spec.sim.trace = trace;
  spec.json = true;
  auto argv = proc::to_args(spec);
  json r;
  // The same prediction as one command to paste (the report's paths exist
  // after calibrate ends: see workdir.hpp).
  {
    auto shown = argv;
    shown.erase(std::remove(shown.begin(), shown.end(), "--json"), shown.end());
    shown.insert(shown.begin(), "ringsim");
    r["rerun_command"] = proc::shell_line(shown);
  }
  argv.insert(argv.begin(), t.ringsim);
  const auto res = proc::run(command(argv, t));
  throw_if_cancelled();
  if (!res.ok()) {
    // One configuration the simulator refuses (e.g. outside the profile) does not
    // hide the others: its row says why.
    r["predicted_s"] = nullptr;
    r["note"] = proc::error_line(res.err);
    r.erase("rerun_command");
    return r;
  }
  const auto s = RunSummary::from_json(child_json(res, "ringsim run"), "ringsim run --json");
  r["predicted_s"] = s.time_s;
  r["predicted_compute_s_per_step"] = s.compute_s_per_step;
  r["predicted_merge_s_per_step"] = s.merge_s_per_step;
  r["predicted_comm_s_per_step"] = s.comm_s_per_step;
  r["bytes_per_step"] = s.bytes_per_step;
  return r;
}

// One ping-pong run (ranks 0 and 1): one-way, exchange and ring-step lines
// and the overlap probe (mpi/pingpong.hpp).
mpi::PingPongResult pingpong(const Tools& t, const CalibrateFlags& f) {
  mpi::RingOptions o;
  o.pingpong = true;
  o.json = true;
  o.pp_max_bytes = 4 << 20;
  o.pp_iters = f.quick ? 20 : 50;
  return mpi::PingPongResult::from_json(
      child_json(proc::run(mpirun_cmd(t, 2, o)), "ringsim-mpi --pingpong"),
      "ringsim-mpi --pingpong --json");
}

// One launch of the real ring (`mpirun ... ringsim-mpi`). Three warm-up runs
// first: the first two runs of a fresh launch are slower (page faults, the
// MPI's first rendezvous with each peer), by 40% at tiny blocks. A launch
// disturbed by other processes (wall/cpu above kQuiet) is measured again, up
// to `retries` times, and the least disturbed kept; every attempt is listed.
mpi::RingSummary measure_launch(const Tools& t, const Config& c, int ranks, int repeat, int retries,
                                const std::string& trace, json& attempts) {
  auto o = c.ring();
  o.repeat = repeat;
  o.warmup = 3;
  o.json = true;
  o.trace = trace;
  std::optional<mpi::RingSummary> best;
  for (int a = 0; a <= retries; ++a) {
    const auto what = "ringsim-mpi (" + c.name + ")";
    auto x =
        mpi::RingSummary::from_json(child_json(proc::run(mpirun_cmd(t, ranks, o)), what), what);
    attempts.push_back({{"measured_s", x.time_s}, {"contention", contention(x)}});
    if (!best || contention(x) < contention(*best)) best = std::move(x);
    if (contention(*best) <= kQuiet) break;
  }
  return *best;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

// The transport a ping-pong saw: the line through the ring step's own pattern
// (K and V as two messages each way, posted with Isend/Irecv, then Waitall),
// that is the ring's transfer as this MPI performs it, handshakes and posting
// included. The overlap mode is set apart, once, from every probe.
Measured with_link(Measured m, double latency, double bandwidth) {
  m.latency = latency;
  m.bandwidth = bandwidth;
  if (!(m.bandwidth > 0) || !(m.latency >= 0))
    throw InputError(
        "calibrate: the ping-pong measured no usable bandwidth (a busy machine?); "
        "run it again");
  return m;
}
Measured with_link(const Measured& m, const mpi::PingPongResult& pp) {
  return with_link(m, pp.ring_latency_s, pp.ring_bandwidth_Bps);
}
Measured with_profile(Measured m, const std::string& path) {
  m.profile_path = path;
  return m;
}

// The kernel profile of one configuration, measured right before one of its
// launches, at exactly its blocks and head dim (fp32, quick): on a shared
// machine the cores' speed drifts by up to 20% over minutes, so a profile
// measured once at the start mispredicts the compute-bound rows of later
// launches. Each launch is then predicted on its own link and its own kernel
// speed, both probed just before it, at the configuration's heads and KV heads.
std::string probe_profile(const fs::path& dir, const Config& c, int launch) {
  kernels::CpuProfileOptions o;
  o.quick = true;
  o.blocks = profile_blocks({c});
  o.head_dims = {c.head_dim};
  // The configuration's own heads: GQA changes how the backward's dK/dV
  // accumulate (a KV head's gradient gathers over its query heads).
  o.heads = c.heads;
  o.kv_heads = c.kv_heads;
  o.dtypes = {"fp32"};
  o.backward = c.pass != "fwd";
  o.tool_version = RINGSIM_VERSION;
  const auto path = (dir / fmt::format("profile-{}-{}.json", c.name, launch)).string();
  AtomicFile file(path, "--workdir");
  file.write(kernels::cpu_profile_json(o));
  file.commit();
  return path;
}

// A --profile given: every launch is predicted with it. Otherwise each launch
// gets its own, probed just before it (probe_profile).
Measured given_profile(const CalibrateFlags& f) {
  Measured m;
  if (!f.profile.empty()) {
    m.profile_path = f.profile;
    m.profile = read_profile(m.profile_path);
  }
  return m;
}

// One configuration's launches, each paired with the ping-pong run just
// before it, and predicted on that link: the simulator gets the machine as it
// was when the ring ran (a shared machine's links slow down in bursts, 2x
// here, for seconds at a time). The row reports the launch whose error is the
// median of all launches' (the fair summary of independent pairs; every pair
// is listed), and for it the prediction with the other --overlap, for context.
json config_row(const Tools& t, const Measured& base, const Config& c, int ranks,
                const std::vector<mpi::RingSummary>& launched,
                const std::vector<mpi::PingPongResult>& pps,
                const std::vector<std::string>& profiles, const json& attempts, const fs::path& dir,
                bool kept) {
  json r;
  r["config"] = c.to_json();
  r["description"] = c.describe();
  r["attempts"] = attempts;
  r["launches"] = json::array();
  std::vector<std::pair<double, std::size_t>> errors;
  std::vector<json> preds;
  for (std::size_t l = 0; l < launched.size(); ++l) {
    auto p = predict(t, with_profile(with_link(base, pps[l]), profiles[l]), c, ranks, "");
    const double meas = launched[l].time_s;
    json row = {{"ring_step_latency_s", pps[l].ring_latency_s},
                {"ring_step_bandwidth_Bps", pps[l].ring_bandwidth_Bps},
                {"profile", profiles[l]},
                {"predicted_s", p["predicted_s"]},
                {"measured_s", meas},
                {"contention", contention(launched[l])}};
    if (!p["predicted_s"].is_null()) {
      row["error"] = p["predicted_s"].get<double>() / meas - 1.0;
      errors.emplace_back(row["error"].get<double>(), l);
    }
    r["launches"].push_back(row);
    preds.push_back(std::move(p));
  }
  std::size_t pick = 0;
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end());
    pick = errors[(errors.size() - 1) / 2].second;
  }
  const auto m = with_profile(with_link(base, pps[pick]), profiles[pick]);
  // The chosen launch's prediction; simulated again only to write its trace
  // (the simulation is deterministic, so the numbers are the same).
  const auto sim_trace = (dir / (c.name + ".sim.json")).string();
  const auto chosen = kept ? predict(t, m, c, ranks, sim_trace) : preds[pick];
  for (const auto& [k, v] : chosen.items()) r[k] = v;
  const std::int64_t steps = ranks * (c.pass == "fwdbwd" ? 2 : 1);
  if (!r["predicted_s"].is_null()) {
    r["predicted_step_s"] = r["predicted_s"].get<double>() / static_cast<double>(steps);
    auto other = m;
    other.overlap = m.overlap == "none" ? "full" : "none";
    const auto o = predict(t, other, c, ranks, "");
    r["predicted_other_overlap"] = other.overlap;
    r["predicted_other_overlap_s"] = o["predicted_s"];
  }
  r["platform_flags"] = platform_flags(m);
  r["launch"] = pick;
  const auto& mj = launched[pick];
  r["measured_s"] = mj.time_s;
  r["measured_runs_s"] = mj.times_s;
  r["measured_step_s"] = mj.time_s / static_cast<double>(steps);
  r["measured_compute_s_per_step"] = mj.compute_s_per_step;
  r["measured_wait_s_per_step"] = mj.wait_s_per_step;
  r["contention"] = contention(mj);
  double max_step = 0;
  for (const auto& st : mj.steps) max_step = std::max(max_step, st.time_s);
  r["measured_max_step_s"] = max_step;
  if (!r["predicted_s"].is_null())
    r["error"] = r["predicted_s"].get<double>() / r["measured_s"].get<double>() - 1.0;
  if (kept) r["traces"] = {sim_trace, (dir / fmt::format("{}.mpi.{}.json", c.name, pick)).string()};
  return r;
}

std::string pct(const json& r) {
  return r.contains("error") ? fmt::format("{:+.1f}%", 100 * r["error"].get<double>()) : "n/a";
}

std::string text_report(const json& j) {
  const auto& pl = j["platform"];
  std::string out = fmt::format(
      "ringsim calibrate: {} ranks on this machine ({})\n"
      "MPI ping-pong: latency {}, bandwidth {:.3f} GB/s per direction (one message each way)\n"
      "ring step (K and V, two messages each way, Isend/Irecv/Waitall): latency {} (range {} - "
      "{} over {} ping-pongs, one before each launch), bandwidth {:.3f} GB/s\n"
      "overlap probe: {:.2f} of a transfer moves while the rank computes -> --overlap {}\n"
      "kernel profile: {}\n"
      "simulator platform (median link; each launch is predicted on its own ping-pong's):\n"
      "  ringsim run --engine simgrid {}{}\n\n",
      j["ranks"].get<int>(), j["mpi"].get<std::string>(),
      human_seconds(j["pingpong"]["latency_s"].get<double>()),
      j["pingpong"]["bandwidth_Bps"].get<double>() / 1e9,
      human_seconds(pl["latency_s"].get<double>()),
      human_seconds(pl["latency_range_s"][0].get<double>()),
      human_seconds(pl["latency_range_s"][1].get<double>()), j["pingpongs"].size(),
      pl["bandwidth_Bps"].get<double>() / 1e9, pl["measured_overlap"].get<double>(),
      pl["overlap"].get<std::string>(), j["profile"].get<std::string>(),
      pl["flags"].get<std::string>(),
      j["profile"].get<std::string>().rfind("measured", 0) == 0
          ? "\n  plus each configuration's own measured --profile: its full command is below"
          : "");
  const std::string other = pl["overlap"].get<std::string>() == "none" ? "if full" : "if none";
  out += fmt::format("{:<14} {:>11} {:>11} {:>8} {:>15} {:>11} {:>11} {:>11} {:>11} {:>6}\n",
                     "config", "predicted", "measured", "error", "launch errors", "pred comp",
                     "meas comp", "pred comm", other, "wall/cpu");
  for (const auto& r : j["runs"]) {
    const bool p = !r["predicted_s"].is_null();
    double lo = 0, hi = 0;
    bool any = false;
    for (const auto& l : r["launches"])
      if (l.contains("error")) {
        const double e = l["error"].get<double>();
        lo = any ? std::min(lo, e) : e;
        hi = any ? std::max(hi, e) : e;
        any = true;
      }
    out += fmt::format(
        "{:<14} {:>11} {:>11} {:>8} {:>15} {:>11} {:>11} {:>11} {:>11} {:>6.2f}\n",
        r["config"]["name"].get<std::string>(),
        p ? human_seconds(r["predicted_s"].get<double>()) : "-",
        human_seconds(r["measured_s"].get<double>()), pct(r),
        any ? fmt::format("{:+.0f}..{:+.0f}%", 100 * lo, 100 * hi) : "-",
        p ? human_seconds(r["predicted_compute_s_per_step"].get<double>()) : "-",
        human_seconds(r["measured_compute_s_per_step"].get<double>()),
        p ? human_seconds(r["predicted_comm_s_per_step"].get<double>()) : "-",
        r.contains("predicted_other_overlap_s") && r["predicted_other_overlap_s"].is_number()
            ? human_seconds(r["predicted_other_overlap_s"].get<double>())
            : "-",
        r["contention"].get<double>());
  }
  out += "\n";
  for (const auto& r : j["runs"]) {
    out += fmt::format("  {}: {}", r["config"]["name"].get<std::string>(),
                       r["description"].get<std::string>());
    if (r.contains("note"))
      out += fmt::format(" (not simulated: {})", r["note"].get<std::string>());
    out += "\n";
    if (r.contains("rerun_command"))
      out += fmt::format("    {}\n", r["rerun_command"].get<std::string>());
  }
  if (j.contains("workdir_note")) out += j["workdir_note"].get<std::string>();
  const auto& mb = j["machine"]["before"];
  const double load =
      std::max(mb["load_1min"].get<double>(), j["machine"]["after"]["load_1min"].get<double>());
  const int cores = mb["cores"].get<int>();
  // Noise the measurement carries itself: a configuration whose best of its
  // attempts still lost more than 10% of its wall time to other processes.
  const auto& nz = j["noise"];
  const double spread = nz["spread"].get<double>(), wall_cpu = nz["contention"].get<double>();
  out += fmt::format(
      "\nmachine noise, measured first: the same {} of arithmetic timed {} times spreads {:.1f}% "
      "(p90 - p10 over the median), wall/cpu {:.2f}; a model error much smaller than that is not "
      "resolved on this machine\n",
      human_seconds(nz["sample_s"].get<double>()), nz["samples"].get<int>(), 100 * spread,
      wall_cpu);
  if (spread > kQuiet - 1 || wall_cpu > kQuiet)
    out += fmt::format(
        "warning: that noise is above {:.0f}%: other work shares the cores, and the errors below "
        "measure it as much as the model (--max-noise F refuses such a machine)\n",
        100 * (kQuiet - 1));
  std::vector<std::string> disturbed;
  for (const auto& r : j["runs"])
    if (r["contention"].get<double>() > kQuiet)
      disturbed.push_back(r["config"]["name"].get<std::string>());
  if (!disturbed.empty())
    out += fmt::format(
        "\nwarning: {} of {} configurations ran disturbed (wall/cpu above {:.2f}: {}): their "
        "errors measure this machine's load as much as the model; rerun them on idle cores\n",
        disturbed.size(), j["runs"].size(), kQuiet, join(disturbed, ", "));
  if (load > 0.5 * cores)
    out += fmt::format(
        "\nwarning: load average {:.1f} on {} cores: other processes share the CPUs, so the "
        "measured times include their time slices (wall/cpu: the ranks' wall time over "
        "their CPU time; 1.00 is an undisturbed run)\n",
        load, cores);
  out += fmt::format(
      "\nEach of {} launches per configuration (the median of {} runs after three warm-up runs) is "
      "predicted on the ping-pong just before it; error = predicted / measured - 1 of the launch "
      "with the median error (launch errors: all of them). Compute per step: the slowest rank's "
      "(measured) or the model's, merge included; pred comm: one ring step's transfer; {} = the "
      "prediction with the other --overlap, for context.\n",
      j["launches"].get<int>(), j["repeat"].get<int>(), other);
  return out;
}

// Ranks per core calibrate starts without --oversubscribe: the 2-core CI
// machine runs its 4-rank checks, and no more.
constexpr unsigned kRanksPerCore = 4;

int run(const CalibrateFlags& f) {
  // SIGINT, SIGTERM or SIGHUP: passed on to the child running (mpirun tears
  // its ranks down), which is waited for; then exit 130 and nothing left.
  const StopScope stop;
  const int ranks = static_cast<int>(parse_count("--ranks", f.ranks, 2, 1024));
  // Each rank spins a core while it computes: more than kRanksPerCore per
  // core measures the scheduler, not the ring, and a thousand ranks on two
  // cores is a process bomb. --oversubscribe says the user means it.
  const auto cores = std::max(1u, std::thread::hardware_concurrency());
  if (!f.oversubscribe && ranks > static_cast<int>(kRanksPerCore * cores))
    throw InputError(fmt::format(
        "--ranks: {} ranks on {} cores is more than {} per core (they would time the scheduler, "
        "not the ring); give at most {}, or --oversubscribe",
        ranks, cores, kRanksPerCore, kRanksPerCore * cores));
  const int retries = static_cast<int>(parse_count("--retries", f.retries, 0, 100));
  const int launches = static_cast<int>(
      f.launches.empty() ? (f.quick ? 3 : 5) : parse_count("--launches", f.launches, 1, 100));
  const int repeat = static_cast<int>(
      f.repeat.empty() ? (f.quick ? 3 : 7) : parse_count("--repeat", f.repeat, 1, 1000));
  if (!f.profile.empty()) (void)read_profile(f.profile);  // a bad file fails before measuring
  std::optional<double> max_noise;
  if (!f.max_noise.empty()) max_noise = parse_real("--max-noise", f.max_noise, 0, 1);
  check_folder_parent("--workdir", f.workdir);
  const auto tools = find_tools(f);

  fs::path dir;
  const bool temp = f.workdir.empty();
  if (temp) {
    // $TMPDIR (or /tmp), where mpirun keeps its own session files too.
    std::error_code ec;
    const auto base = fs::temp_directory_path(ec);
    auto name = ((ec ? fs::path("/tmp") : base) / "ringsim-calibrate-dir-XXXXXX").string();
    if (!::mkdtemp(name.data()))
      throw InputError(fmt::format("calibrate: cannot create a folder in {}",
                                   fs::path(name).parent_path().string()));
    dir = name;
  } else {
    dir = f.workdir;
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
      throw InputError(fmt::format("--workdir {}: exists and is not a folder", f.workdir));
    fs::create_directory(dir, ec);
    if (ec) throw InputError(fmt::format("--workdir {}: {}", f.workdir, ec.message()));
  }
  // A temporary folder the report will not point into is removed; so is one
  // it would have, when no report comes (a stop signal, a failed launch).
  struct Cleanup {
    fs::path d;
    bool on;
    bool temporary;
    bool reported = false;
    ~Cleanup() {
      std::error_code ec;
      if (on || (temporary && !reported)) fs::remove_all(d, ec);
    }
  } cleanup{dir, calibrate::WorkdirPolicy{temp, f.keep_files, f.profile.empty()}.remove(), temp};

  const auto configs = default_configs(f.quick);
  const auto load_before = machine_load();
  // The machine's own noise first: what the comparison below can resolve.
  const auto noise = calibrate::measure_noise();
  if (max_noise) {
    const double limit = *max_noise;
    if (noise.spread > limit || noise.contention - 1 > limit)
      throw InputError(fmt::format(
          "--max-noise {}: this machine's timing noise is {:.0f}% (spread of a {} probe; "
          "wall/cpu {:.2f}) before anything is measured; free the cores or raise the limit",
          f.max_noise, 100 * noise.spread, human_seconds(noise.median_s), noise.contention));
  }
  auto m = given_profile(f);
  // Launches go round the configurations (round l launches each once), each
  // right after its own ping-pong: drift on a shared machine then spreads
  // over all rows, and every launch is predicted on the link it had.
  std::vector<std::vector<mpi::RingSummary>> launched(configs.size());
  std::vector<std::vector<mpi::PingPongResult>> pps(configs.size());
  std::vector<std::vector<std::string>> profiles(configs.size());
  std::vector<json> attempts(configs.size(), json::array());
  json pingpongs = json::array();
  std::vector<double> overlaps;
  // Minutes of measuring: a bar with ETA on a terminal (none when piped).
  sim::Progress bar(sim::progress_wanted(false),
                    static_cast<std::uint64_t>(launches) * configs.size(), "ringsim calibrate");
  for (int l = 0; l < launches; ++l)
    for (std::size_t i = 0; i < configs.size(); ++i) {
      throw_if_cancelled();
      auto pp = pingpong(tools, f);
      overlaps.push_back(pp.overlap);
      pingpongs.push_back({{"latency_s", pp.latency_s},
                           {"bandwidth_Bps", pp.bandwidth_Bps},
                           {"ring_step_latency_s", pp.ring_latency_s},
                           {"ring_step_bandwidth_Bps", pp.ring_bandwidth_Bps},
                           {"overlap", pp.overlap}});
      profiles[i].push_back(f.profile.empty() ? probe_profile(dir, configs[i], l) : m.profile_path);
      const auto trace = (dir / fmt::format("{}.mpi.{}.json", configs[i].name, l)).string();
      launched[i].push_back(
          measure_launch(tools, configs[i], ranks, repeat, retries, trace, attempts[i]));
      pps[i].push_back(std::move(pp));
      bar.tick();
    }
  bar.finish();
  // Whether the transport overlaps is one property of it: the median of every
  // probe, with the rule of mpi/pingpong.hpp.
  m.measured_overlap = median_of(overlaps);
  m.overlap = m.measured_overlap < 0.5 ? "none" : "full";
  std::vector<double> lat, bw;
  for (const auto& p : pingpongs) {
    lat.push_back(p["ring_step_latency_s"].get<double>());
    bw.push_back(p["ring_step_bandwidth_Bps"].get<double>());
  }

  json j;
  j["command"] = "calibrate";
  j["ranks"] = ranks;
  j["repeat"] = repeat;
  j["launches"] = launches;
  j["mpi"] = tools.mpi_version;
  j["pingpong"] = pps[0][0].to_json();
  j["pingpongs"] = pingpongs;
  j["profile"] = m.profile_path.empty()
                     ? "measured before each launch (profile-CONFIG-LAUNCH.json in the workdir)"
                     : m.profile_path;
  j["profile_device"] = m.profile_path.empty() ? kernels::cpu_model_name() : m.profile.device_name;
  const calibrate::WorkdirPolicy policy{temp, f.keep_files, f.profile.empty()};
  const bool kept = policy.kept();
  // The platform of the median ping-pong, for the header; each launch used its own.
  const auto mid = with_link(m, median_of(lat), median_of(bw));
  const auto flags = platform_flags(mid);
  j["platform"] = {
      {"kind", "flat"},
      {"latency_s", mid.latency},
      {"bandwidth_Bps", mid.bandwidth},
      {"latency_range_s",
       {*std::min_element(lat.begin(), lat.end()), *std::max_element(lat.begin(), lat.end())}},
      {"overlap", m.overlap},
      {"measured_overlap", m.measured_overlap},
      {"flags", flags}};
  j["runs"] = json::array();
  for (std::size_t i = 0; i < configs.size(); ++i)
    j["runs"].push_back(config_row(tools, m, configs[i], ranks, launched[i], pps[i], profiles[i],
                                   attempts[i], dir, kept));
  if (kept) j["workdir"] = dir.string();
  if (const auto note = policy.note(dir.string()); !note.empty()) j["workdir_note"] = note;
  j["machine"] = {{"before", load_before}, {"after", machine_load()}};
  j["noise"] = noise.to_json();

  j["schema_version"] = kJsonSchemaVersion;
  throw_if_cancelled();  // a signal during the predictions: no report, no folder
  cleanup.reported = true;
  if (f.json)
    std::cout << j.dump(2) << "\n";
  else
    std::cout << text_report(j);
  return 0;
}

}  // namespace

Command calibrate_command() {
  return {
      "calibrate", [](CLI::App& app, int* code) {
        auto f = std::make_shared<CalibrateFlags>();
        auto* sub = app.add_subcommand("calibrate",
                                       "Measure this machine (MPI ping-pong, CPU kernel profile), "
                                       "then run ringsim-mpi and the "
                                       "SimGrid model on the same configurations and compare");
        sub->add_option("--ranks", f->ranks, "MPI ranks of the real ring (and devices simulated)")
            ->capture_default_str()
            ->type_name(flag_type::kInt);
        sub->add_flag("--oversubscribe", f->oversubscribe,
                      "Allow more than 4 ranks per core (refused otherwise)");
        sub->add_flag("--quick", f->quick,
                      "Quick profile, fewer configurations and repeats (~1 min)");
        sub->add_option("--repeat", f->repeat, "Timed runs per configuration (default 7, quick 3)")
            ->type_name(flag_type::kInt);
        sub->add_option(
               "--profile", f->profile,
               "Use this CPU profile instead of measuring one (`ringsim profile --device cpu`)")
            ->type_name(flag_type::kFile);
        sub->add_option("--mpirun", f->mpirun, "MPI launcher")
            ->capture_default_str()
            ->type_name(flag_type::kFile);
        sub->add_option("--mpirun-arg", f->mpirun_args,
                        "Extra launcher argument (repeatable), e.g. --mpirun-arg=--bind-to "
                        "--mpirun-arg=core")
            ->type_name(flag_type::kArg);
        sub->add_option("--mpi-bin", f->mpi_bin, "ringsim-mpi (default: next to this program)")
            ->type_name(flag_type::kFile);
        sub->add_option("--ringsim", f->ringsim_bin,
                        "ringsim for the child runs (default: this program)")
            ->type_name(flag_type::kFile);
        sub->add_option(
               "--workdir", f->workdir,
               "Keep the profile and both traces of every configuration here "
               "(default: a temporary folder, removed unless the printed commands read the "
               "profiles measured there)")
            ->type_name(flag_type::kDir);
        sub->add_flag("--keep", f->keep_files, "Keep the temporary folder");
        sub->add_option("--max-noise", f->max_noise,
                        "Refuse (exit 2) when the machine's timing noise, measured first, is "
                        "above this fraction (0.1 = 10%); default: report it and warn above 10%")
            ->type_name(flag_type::kFraction);
        sub->add_option("--launches", f->launches,
                        "Separate mpirun launches per configuration; the median launch is "
                        "reported (default 5, quick 3)")
            ->type_name(flag_type::kInt);
        sub->add_option("--retries", f->retries,
                        "Measure a configuration again when other processes took more than 10% "
                        "of its compute time (wall/cpu > 1.10); the least disturbed run is kept")
            ->capture_default_str()
            ->type_name(flag_type::kInt);
        sub->add_option("--timeout", f->timeout, "Seconds any one child run may take")
            ->capture_default_str()
            ->type_name(flag_type::kSeconds);
        sub->add_flag(
            "--json", f->json,
            "One JSON object: platform, pingpong, runs: [{config, predicted_s, measured_s, ...}]");
        sub->add_option("--runs", f->runs,
                        "Instead of measuring this machine: fit the framework-level factors to "
                        "your own measured runs (CSV: id,command,args,metric,value; "
                        "docs/own-cluster.md) and write them to --out")
            ->type_name("FILE");
        sub->add_option("--out", f->out,
                        "With --runs: the calibration file to write (then --calibration FILE on "
                        "plan and validate)")
            ->type_name("FILE");
        sub->callback([f, code] {
          if (!f->runs.empty()) {
            *code = calibrate_runs(f->runs, f->out, f->json);
            return;
          }
          if (!f->out.empty()) throw InputError("--out: only with --runs FILE");
          *code = run(*f);
        });
        return sub;
      }};
}

}  // namespace ringsim::cli
