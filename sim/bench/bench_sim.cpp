// Simulation speed of `ringsim` against the barest SimGrid program doing the
// same work (ringsim-bare-ring), measured in the same run, interleaved, each
// in its own process (one SimGrid engine per process). Workload: llama3-8b,
// block 4096, causal ring, forward, one layer, H100 roofline, on a flat ring
// of NVLink4 links (the platform the bare program can build in ten lines);
// --nodes adds ringsim on its default cluster (8-GPU nodes + rail IB).
//
// usage: ringsim-bench-sim [--devices 256,1024] [--reps 3] [--nodes] [--ringsim PATH] [--bare PATH]
// Prints a markdown table: median wall and CPU seconds, peak memory, and the
// ringsim / bare CPU ratio; checks both programs simulate the same time.
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "models/analytic.hpp"
#include "models/catalog.hpp"
#include "models/profile.hpp"
#include "models/work.hpp"

namespace {

struct Sample {
  double wall = 0, cpu = 0, rss_mb = 0;
  std::string out;
  int rc = -1;
};

Sample run(const std::string& prog, const std::vector<std::string>& args) {
  char tmpl[] = "/tmp/ringsim-bench-XXXXXX";
  const int fd = mkstemp(tmpl);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fd, 1);
    std::vector<char*> argv{const_cast<char*>(prog.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(prog.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  Sample s;
  s.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
          1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  s.rss_mb = static_cast<double>(ru.ru_maxrss) / 1024.0;
  s.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(tmpl);
  std::stringstream ss;
  ss << f.rdbuf();
  s.out = ss.str();
  close(fd);
  std::remove(tmpl);
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::string self_dir() {
  char buf[4096];
  const auto n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<std::size_t>(n));
  return p.substr(0, p.rfind('/'));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> sizes{256, 1024};
  int reps = 3;
  bool nodes = false;
  std::string ringsim = self_dir() + "/ringsim", bare = self_dir() + "/ringsim-bare-ring";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--devices") {
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
    const std::vector<std::string> sim_args{"--devices", std::to_string(n), "--block",
                                            "4096",      "--platform",      "flat",
                                            "--json",    "--max-memory",    "64G"};
    const std::vector<std::string> nodes_args{"--devices", std::to_string(n), "--block", "4096",
                                              "--json",    "--max-memory",    "64G"};
    std::vector<double> bw, bc, bm, sw, sc, sm, nc, nm;
    for (int r = 0; r < reps; ++r) {
      const auto b = run(bare, bare_args);
      const auto s = run(ringsim, sim_args);
      if (b.rc != 0 || s.rc != 0) {
        std::fprintf(stderr, "bench: a run failed (bare rc %d, ringsim rc %d)\n", b.rc, s.rc);
        return 1;
      }
      // Same work: both must simulate the same time.
      const double tb = std::stod(b.out), ts = nlohmann::json::parse(s.out).at("time_s");
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
