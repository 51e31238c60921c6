// Simulation speed of `ringsim` against the barest SimGrid program doing the
// same work (ringsim-bare-ring), measured in the same run, interleaved, each
// in its own process (one SimGrid engine per process). Workload: llama3-8b,
// block 4096, causal ring, forward, one layer, H100 roofline (--kernel
// roofline), on a flat ring of NVLink4 links (the platform the bare program
// can build in ten lines), on ringsim's default cluster (8-GPU nodes + rail
// IB), and that cluster with device 1 a 2x straggler (a ring no symmetry
// reduces). Those runs use SimGrid's actors (--recurrence off), so their ratio
// to the bare program measures how ringsim uses SimGrid. Beside them, the
// path a run past 1024 devices takes by default: the straggler ring (the flat
// ring with --flat-only) played as a recurrence (--recurrence on), no SimGrid
// activities, checked to simulate the same time as the actors.
//
// usage: ringsim-bench-sim [--devices 1024,4096] [--reps 1] [--flat-only] [--recurrence-only]
//                          [--ringsim PATH] [--bare PATH]
// Prints a markdown table: median CPU seconds, peak memory, each ringsim run's
// CPU over the bare program's of the same repetition, and device-steps per
// CPU second; checks the bare program and the flat ring simulate the same time.
// The recurrence's columns: CPU s, its ratio to the bare run, device-steps/s.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "models/analytic/analytic.hpp"
#include "models/analytic/report.hpp"
#include "models/core/catalog.hpp"
#include "models/core/profile.hpp"
#include "models/core/work.hpp"
#include "proc/child.hpp"
#include "proc/run_spec.hpp"

namespace {

struct Sample {
  double wall = 0, cpu = 0, rss_mb = 0;
  std::string out;
  bool ok = false;
  std::string failure;
};

Sample run(const std::string& prog, const std::vector<std::string>& args) {
  ringsim::proc::Command c;
  c.argv = {prog};
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  const auto r = ringsim::proc::run(c);
  return {r.wall_s, r.cpu_s, r.max_rss_bytes / (1024.0 * 1024.0), r.out, r.ok(), r.failure()};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// `ringsim run` on one ring of `n` devices, block 4096, llama3-8b, as a spec:
// on a flat ring, or the default cluster with device 1 a 2x straggler or not.
enum class Variant { Flat, Nodes, Straggler };
std::vector<std::string> ringsim_args(long n, Variant v, bool recurrence = false) {
  ringsim::proc::RunSpec spec;
  spec.workload.devices = n;
  spec.workload.block = 4096;
  if (v == Variant::Flat) spec.hardware.platform = ringsim::Platform::Flat;
  if (v == Variant::Straggler) spec.sim.faults.stragglers.push_back({1, 2.0});
  // The bare program computes at the roofline (peak x the catalog's attention
  // efficiency, no merges, launches or interference): so must ringsim, or the
  // two simulate different work (the device's default kernel model is cuDNN's
  // curves with an eager merge).
  spec.hardware.kernel = "roofline";
  spec.sim.max_memory = std::uint64_t{64} << 30;
  spec.sim.recurrence = recurrence ? ringsim::sim::Recurrence::On : ringsim::sim::Recurrence::Off;
  spec.json = true;
  return ringsim::proc::to_args(spec);
}

// Simulated seconds from ringsim's JSON summary.
double simulated(const Sample& s) {
  return ringsim::RunSummary::from_json(nlohmann::json::parse(s.out), "ringsim").time_s;
}

// The bare program's arguments for the same ring: devices, a full step's and
// the diagonal step's compute at the H100 roofline, the block's bytes, and
// NVLink4's bandwidth and latency.
std::vector<std::string> bare_ring_args(long n) {
  const auto cat = ringsim::Catalog::embedded();
  const auto& gpu = cat.device("h100-sxm");
  const auto& nvl = cat.interconnect("nvlink4");
  ringsim::RooflineModel cm(gpu.peak(ringsim::DType::BF16) * gpu.attention_efficiency);
  ringsim::Workload w;
  w.devices = n;
  w.block = 4096;
  w.shape = ringsim::find_model("--model", "llama3-8b");
  const double diag = ringsim::step_seconds(w, cm, 0, 0, false);
  const double full = n > 1 ? ringsim::step_seconds(w, cm, 1, 1, false) : diag;
  const auto bytes = ringsim::pass_bytes(w, false).ring;
  return {std::to_string(n),
          fmt::format("{:.17g}", full),
          fmt::format("{:.17g}", diag),
          std::to_string(bytes),
          fmt::format("{:.17g}", nvl.bandwidth),
          fmt::format("{:.17g}", nvl.latency)};
}

// --recurrence-only: the bare program against the default path past 1024
// devices, without the actors' runs (at 4096 each takes minutes): the flat
// ring as a recurrence (checked to simulate the bare program's time) and the
// straggler ring on the default cluster as a recurrence.
int recurrence_only(const std::vector<long>& sizes, int reps, const std::string& ringsim,
                    const std::string& bare) {
  std::printf(
      "| devices | bare CPU s | flat, recurrence CPU s | / bare | straggler, recurrence CPU s | / "
      "bare | device-steps/s | straggler MB |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  int status = 0;
  for (long n : sizes) {
    std::vector<double> bc, fc, fr, sc, sr, sm;
    for (int r = 0; r < reps; ++r) {
      const auto b = run(bare, bare_ring_args(n));
      const auto f = run(ringsim, ringsim_args(n, Variant::Flat, true));
      const auto s = run(ringsim, ringsim_args(n, Variant::Straggler, true));
      if (!b.ok || !f.ok || !s.ok) {
        std::fprintf(stderr, "bench: a run failed (bare: %s; flat: %s; straggler: %s)\n",
                     b.failure.c_str(), f.failure.c_str(), s.failure.c_str());
        return 1;
      }
      if (std::fabs(std::stod(b.out) / simulated(f) - 1) > 1e-9) {
        std::fprintf(stderr, "bench: bare simulated %s s, the recurrence %.12g s\n", b.out.c_str(),
                     simulated(f));
        status = 1;
      }
      bc.push_back(b.cpu), fc.push_back(f.cpu), fr.push_back(f.cpu / b.cpu);
      sc.push_back(s.cpu), sr.push_back(s.cpu / b.cpu), sm.push_back(s.rss_mb);
    }
    const double device_steps = static_cast<double>(n) * static_cast<double>(n);
    std::printf("| %ld | %.2f | %.2f | %.4f | %.2f | %.4f | %.0f | %.0f |\n", n, median(bc),
                median(fc), median(fr), median(sc), median(sr), device_steps / median(sc),
                median(sm));
    std::fflush(stdout);
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> sizes{1024, 4096};
  int reps = 1;
  bool nodes = true, rec_only = false;
  std::string ringsim = ringsim::proc::sibling_exe("ringsim"),
              bare = ringsim::proc::sibling_exe("ringsim-bare-ring");
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--version" || a == "-V") {
      std::printf("ringsim-bench-sim %s\n", RINGSIM_VERSION);
      return 0;
    } else if (a == "--help" || a == "-h") {
      std::printf(
          "usage: %s [--devices 1024,4096] [--reps 1] [--flat-only] [--recurrence-only] "
          "[--ringsim PATH] [--bare PATH]\n"
          "Times ringsim against ringsim-bare-ring (the barest SimGrid ring) on the same work "
          "(docs/sim.md).\n",
          argv[0]);
      return 0;
    } else if (a == "--devices") {
      sizes.clear();
      std::stringstream s(next());
      for (std::string x; std::getline(s, x, ',');) sizes.push_back(std::stol(x));
    } else if (a == "--reps") {
      reps = std::max(1, std::stoi(next()));
    } else if (a == "--nodes") {
      nodes = true;  // the default; kept for older scripts
    } else if (a == "--flat-only") {
      nodes = false;
    } else if (a == "--recurrence-only") {
      rec_only = true;
    } else if (a == "--ringsim") {
      ringsim = next();
    } else if (a == "--bare") {
      bare = next();
    } else {
      std::fprintf(stderr,
                   "usage: %s [--devices 1024,4096] [--reps 1] [--flat-only] [--recurrence-only] "
                   "[--ringsim PATH] [--bare PATH]\n",
                   argv[0]);
      return 2;
    }
  }

  if (rec_only) return recurrence_only(sizes, reps, ringsim, bare);
  std::printf(
      "| devices | bare CPU s | flat CPU s | flat / bare | flat device-steps/s | flat MB |%s%s\n",
      nodes ? " nodes CPU s | nodes / bare | straggler CPU s | straggler / bare | nodes MB |" : "",
      nodes ? " straggler, recurrence CPU s | / bare | device-steps/s |"
            : " flat, recurrence CPU s | / bare | device-steps/s |");
  std::printf("|---:|---:|---:|---:|---:|---:|%s---:|---:|---:|\n",
              nodes ? "---:|---:|---:|---:|---:|" : "");
  int status = 0;
  for (long n : sizes) {
    const auto bare_args = bare_ring_args(n);
    // Per repetition: bare CPU, then each ringsim run's CPU and its ratio to
    // that bare run (contention on a shared machine moves both alike).
    std::vector<double> bc, fc, fr, fm, nc, nr, sc, sr, nm, rc, rr;
    for (int r = 0; r < reps; ++r) {
      const auto b = run(bare, bare_args);
      const auto f = run(ringsim, ringsim_args(n, Variant::Flat));
      if (!b.ok || !f.ok) {
        std::fprintf(stderr, "bench: a run failed (bare: %s; ringsim: %s)\n", b.failure.c_str(),
                     f.failure.c_str());
        return 1;
      }
      // Same work: both must simulate the same time.
      const double tb = std::stod(b.out), tf = simulated(f);
      if (std::fabs(tb / tf - 1) > 1e-9) {
        std::fprintf(stderr, "bench: bare simulated %.12g s, ringsim %.12g s: not the same work\n",
                     tb, tf);
        status = 1;
      }
      bc.push_back(b.cpu), fc.push_back(f.cpu), fr.push_back(f.cpu / b.cpu), fm.push_back(f.rss_mb);
      double actors = tf;  // the ring the recurrence plays, on the actors
      if (nodes) {
        const auto x = run(ringsim, ringsim_args(n, Variant::Nodes));
        const auto y = run(ringsim, ringsim_args(n, Variant::Straggler));
        if (!x.ok || !y.ok) {
          std::fprintf(stderr, "bench: a run failed (nodes: %s; straggler: %s)\n",
                       x.failure.c_str(), y.failure.c_str());
          return 1;
        }
        nc.push_back(x.cpu), nr.push_back(x.cpu / b.cpu), nm.push_back(x.rss_mb);
        sc.push_back(y.cpu), sr.push_back(y.cpu / b.cpu);
        actors = simulated(y);
      }
      // The recurrence plays the same ring as the actors just did.
      const auto rec =
          run(ringsim, ringsim_args(n, nodes ? Variant::Straggler : Variant::Flat, true));
      if (!rec.ok) {
        std::fprintf(stderr, "bench: the recurrence run failed: %s\n", rec.failure.c_str());
        return 1;
      }
      if (std::fabs(simulated(rec) / actors - 1) > 1e-9) {
        std::fprintf(stderr, "bench: the recurrence simulated %.12g s, the actors %.12g s\n",
                     simulated(rec), actors);
        status = 1;
      }
      rc.push_back(rec.cpu), rr.push_back(rec.cpu / b.cpu);
    }
    const double device_steps = static_cast<double>(n) * static_cast<double>(n);
    std::printf("| %ld | %.2f | %.2f | %.3f | %.0f | %.0f |", n, median(bc), median(fc), median(fr),
                device_steps / median(fc), median(fm));
    if (nodes)
      std::printf(" %.2f | %.3f | %.2f | %.3f | %.0f |", median(nc), median(nr), median(sc),
                  median(sr), median(nm));
    std::printf(" %.2f | %.4f | %.0f |\n", median(rc), median(rr), device_steps / median(rc));
    std::fflush(stdout);
  }
  return status;
}
