// Job-mode scale: one fwd+bwd layer of TP8 x CP16 x DP (default DP 128:
// 16,384 GPUs), llama3-70b, 128K tokens, default H100 nodes, simulated whole
// by `ringsim run --dp` in a child process, rail-optimised and with 2:1
// oversubscribed spine cables. Targets (docs/sim.md, "Job mode"): under 5
// minutes and 8 GiB each, and the oversubscribed step slower than the
// rail-optimised one, the links that slow it named.
//
// usage: ringsim-bench-job [--dp 128] [--ringsim PATH]
// Prints a markdown table per variant: wall and CPU seconds, peak resident
// memory, activities, the simulated layer, the slowest ring against one ring
// alone, the FSDP collectives and the hottest link directions. Exits 1 if a
// run fails or the oversubscribed step is not slower.
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "proc/child.hpp"
#include "proc/run_spec.hpp"

namespace {

std::vector<std::string> job_args(long dp, double oversubscription) {
  ringsim::proc::RunSpec spec;
  auto& w = spec.workload;
  w.model = "llama3-70b";
  w.devices = 16;
  w.block = 8192;  // 16 x 8K = 128K tokens
  w.tp = 8;
  w.scope = ringsim::Scope::Layer;
  w.pass = ringsim::Pass::FwdBwd;
  spec.sim.dp = dp;
  if (oversubscription != 1) spec.hardware.oversubscription = oversubscription;
  spec.sim.max_memory = std::uint64_t{64} << 30;
  spec.json = true;
  return ringsim::proc::to_args(spec);
}

std::string hottest(const nlohmann::json& job, std::size_t k) {
  std::string s;
  const auto& links = job.at("hottest_links");
  for (std::size_t i = 0; i < links.size() && i < k; ++i)
    s += fmt::format("{}{} {:.0f}%/{:.0f}%", i ? ", " : "", links[i].at("link").get<std::string>(),
                     100 * links[i].at("peak_utilisation").get<double>(),
                     100 * links[i].at("mean_utilisation").get<double>());
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  long dp = 128;
  std::string ringsim = ringsim::proc::sibling_exe("ringsim");
  const char* usage = "usage: %s [--dp 128] [--ringsim PATH]\n";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--version" || a == "-V") {
      std::printf("ringsim-bench-job %s\n", RINGSIM_VERSION);
      return 0;
    } else if (a == "--help" || a == "-h") {
      std::printf(usage, argv[0]);
      std::printf(
          "Simulates one fwd+bwd layer of TP8 x CP16 x DP (llama3-70b, 128K tokens) whole, "
          "rail-optimised and 2:1 oversubscribed (docs/sim.md).\n");
      return 0;
    } else if (a == "--dp") {
      dp = std::stol(next());
    } else if (a == "--ringsim") {
      ringsim = next();
    } else {
      std::fprintf(stderr, usage, argv[0]);
      return 2;
    }
  }
  std::printf(
      "| GPUs | spine | wall s | CPU s | peak MiB | activities | layer | slowest ring / alone | "
      "FSDP | hottest links (peak/mean) |\n");
  std::printf("|---:|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
  double times[2] = {0, 0};
  int i = 0;
  for (double over : {1.0, 2.0}) {
    auto args = job_args(dp, over);
    args.insert(args.begin(), ringsim);
    const auto r = ringsim::proc::run(args);
    if (!r.ok()) {
      std::fprintf(stderr, "bench: %s: %s\n", r.command.c_str(), r.failure().c_str());
      return 1;
    }
    const auto j = nlohmann::json::parse(r.out);
    const auto& job = j.at("job");
    times[i++] = j.at("time_s").get<double>();
    std::printf("| %ld | %s | %.1f | %.1f | %.0f | %.3g | %.3f ms | %.3f | %.3f ms | %s |\n",
                job.at("gpus").get<long>(), over == 1 ? "1:1" : fmt::format("{:g}:1", over).c_str(),
                r.wall_s, r.cpu_s, r.max_rss_bytes / (1024.0 * 1024.0),
                j.at("activities").get<double>(), 1e3 * times[i - 1],
                job.at("contention").get<double>(), 1e3 * job.at("fsdp_s").get<double>(),
                hottest(job, 3).c_str());
    std::printf("|  | why | %s |||||||\n", job.at("why").get<std::string>().c_str());
    std::fflush(stdout);
  }
  if (!(times[1] > times[0])) {
    std::fprintf(stderr, "bench: the oversubscribed layer (%.6g s) is not slower than %.6g s\n",
                 times[1], times[0]);
    return 1;
  }
  return 0;
}
