// Simulation speed of `ringsim` against the barest SimGrid program doing the
// same work (ringsim-bare-ring), measured in the same run, interleaved, each
// in its own process (one SimGrid engine per process). Workload: llama3-8b,
// block 4096, causal ring, forward, one layer, H100 roofline (--kernel
// roofline), on a flat ring of NVLink4 links (the platform the bare program
// can build in ten lines); --nodes adds ringsim on its default cluster
// (8-GPU nodes + rail IB).
//
// usage: ringsim-bench-sim [--devices 256,1024] [--reps 3] [--nodes] [--ringsim PATH] [--bare PATH]
// Prints a markdown table: median wall and CPU seconds, peak memory, and the
// ringsim / bare CPU ratio; checks both programs simulate the same time.
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

// `ringsim run` on one ring of `n` devices, block 4096, llama3-8b, as a spec.
std::vector<std::string> ringsim_args(long n, bool flat) {
  ringsim::proc::RunSpec spec;
  spec.workload.devices = n;
  spec.workload.block = 4096;
  if (flat) spec.hardware.platform = ringsim::Platform::Flat;
  // The bare program computes at the roofline (peak x the catalog's attention
  // efficiency, no merges, launches or interference): so must ringsim, or the
  // two simulate different work (the device's default kernel model is cuDNN's
  // curves with an eager merge).
  spec.hardware.kernel = "roofline";
  spec.sim.max_memory = std::uint64_t{64} << 30;
  spec.json = true;
  return ringsim::proc::to_args(spec);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> sizes{256, 1024};
  int reps = 3;
  bool nodes = false;
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
          "usage: %s [--devices 256,1024] [--reps 3] [--nodes] [--ringsim PATH] [--bare PATH]\n"
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
      nodes = true;
    } else if (a == "--ringsim") {
      ringsim = next();
    } else if (a == "--bare") {
      bare = next();
    } else {
      std::fprintf(
          stderr,
          "usage: %s [--devices 256,1024] [--reps 3] [--nodes] [--ringsim PATH] [--bare PATH]\n",
          argv[0]);
      return 2;
    }
  }

  const auto cat = ringsim::Catalog::embedded();
  const auto& gpu = cat.device("h100-sxm");
  const auto& nvl = cat.interconnect("nvlink4");
  ringsim::RooflineModel cm(gpu.peak(ringsim::DType::BF16) * gpu.attention_efficiency);

  std::printf(
      "| devices | bare wall s | bare CPU s | bare MB | ringsim wall s | ringsim CPU s | ringsim "
      "MB | CPU ratio |%s\n",
      nodes ? " ringsim nodes CPU s | nodes MB |" : "");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|%s\n", nodes ? "---:|---:|" : "");
  int status = 0;
  for (long n : sizes) {
    ringsim::Workload w;
    w.devices = n;
    w.block = 4096;
    w.shape = ringsim::find_model("--model", "llama3-8b");
    const double diag = ringsim::step_seconds(w, cm, 0, 0, false);
    const double full = n > 1 ? ringsim::step_seconds(w, cm, 1, 1, false) : diag;
    const auto bytes = ringsim::pass_bytes(w, false).ring;
    const std::vector<std::string> bare_args{std::to_string(n),
                                             fmt::format("{:.17g}", full),
                                             fmt::format("{:.17g}", diag),
                                             std::to_string(bytes),
                                             fmt::format("{:.17g}", nvl.bandwidth),
                                             fmt::format("{:.17g}", nvl.latency)};
    const auto sim_args = ringsim_args(n, true), nodes_args = ringsim_args(n, false);
    std::vector<double> bw, bc, bm, sw, sc, sm, nc, nm;
    for (int r = 0; r < reps; ++r) {
      const auto b = run(bare, bare_args);
      const auto s = run(ringsim, sim_args);
      if (!b.ok || !s.ok) {
        std::fprintf(stderr, "bench: a run failed (bare: %s; ringsim: %s)\n", b.failure.c_str(),
                     s.failure.c_str());
        return 1;
      }
      // Same work: both must simulate the same time.
      const double tb = std::stod(b.out);
      const double ts =
          ringsim::RunSummary::from_json(nlohmann::json::parse(s.out), "ringsim").time_s;
      if (std::fabs(tb / ts - 1) > 1e-9) {
        std::fprintf(stderr, "bench: bare simulated %.12g s, ringsim %.12g s: not the same work\n",
                     tb, ts);
        status = 1;
      }
      bw.push_back(b.wall), bc.push_back(b.cpu), bm.push_back(b.rss_mb);
      sw.push_back(s.wall), sc.push_back(s.cpu), sm.push_back(s.rss_mb);
      if (nodes) {
        const auto x = run(ringsim, nodes_args);
        nc.push_back(x.cpu), nm.push_back(x.rss_mb);
      }
    }
    std::printf("| %ld | %.2f | %.2f | %.0f | %.2f | %.2f | %.0f | %.3f |", n, median(bw),
                median(bc), median(bm), median(sw), median(sc), median(sm),
                median(sc) / median(bc));
    if (nodes) std::printf(" %.2f | %.0f |", median(nc), median(nm));
    std::printf("\n");
    std::fflush(stdout);
  }
  return status;
}
