// Fuzz target: the command line (ringsim::cli::run_cli). The input is split
// into argv tokens at '\n' and NUL; every run must keep the command line's
// contract (fuzz/cli_contract.hpp: one error line and exit 2, or finite
// results), and a crash or a sanitizer report is a finding.
//
// Fuzz-only limits, so every input finishes in milliseconds and the process
// can run millions of them (they live here, not in ringsim):
// - subcommands: run and infer (forced to --engine analytic: SimGrid allows
//   one engine per process and a simulation is seconds), minblock, hardware,
//   verify and plan; infer and plan --inference with every number <= 256; verify only with every
//   number <= 16 (the emulator and the float64 reference stay tiny), plan with every number <= 4096
//   and no --recheck (which runs SimGrid in child processes). Subcommands that time kernels or run
//   experiments (profile, experiment, calibrate) are not fuzzed here.
// - files: tokens containing '/' are refused, so a run cannot read /dev/zero
//   or anything outside the working directory; a token naming one of the seed
//   files (c.json, p.json, q.npy, ...) is replaced by its path in a sandbox
//   directory; output flags (--out, --lse-out, --trace, --csv, ...) are
//   refused, so runs write nothing and stay independent.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "fuzz/cli_contract.hpp"
#include "fuzz/target.hpp"
#include "models/core/npy.hpp"

namespace ringsim::fuzz {

namespace {

const std::vector<std::string> kSeedFiles = {"c.json", "b.json", "p.json", "q.npy", "k.npy",
                                             "v.npy",  "s.npy",  "n.npy",  "t.npy"};

std::string& sandbox() {
  static std::string dir;
  return dir;
}

void remove_sandbox() {
  std::error_code ec;
  std::filesystem::remove_all(sandbox(), ec);
}

void write_file(const std::string& name, const std::string& bytes) {
  std::ofstream(sandbox() + "/" + name, std::ios::binary) << bytes;
}

// Seed files the fuzzer can name (see fuzz/corpus/cli for inputs using them).
void make_sandbox() {
  if (!sandbox().empty()) return;
  sandbox() =
      (std::filesystem::temp_directory_path() / ("ringsim-fuzz-cli-" + std::to_string(::getpid())))
          .string();
  std::filesystem::create_directories(sandbox());
  std::atexit(remove_sandbox);
  write_file("c.json",
             R"({"devices": [{"name": "fz", "peak_flops": {"bf16": 1e15, "fp16": 1e15, "fp32": 0},
    "hbm_bytes": 8e10, "hbm_bandwidth": 3e12, "attention_efficiency": 0.5, "default_intra": "fzl",
    "default_inter": "fzl", "source": "fuzz", "efficiency_source": "fuzz"}],
    "interconnects": [{"name": "fzl", "bandwidth": 1e11, "latency": 1e-6, "source": "fuzz",
    "latency_source": "fuzz"}]})");
  write_file("b.json", R"({"devices": [{"name": "fz", "peak_flops": {"bf16": -1)");
  write_file("p.json", R"({"schema": "ringsim-profile-1", "device": {"kind": "cpu", "name": "fz"},
    "date": "2024-01-01", "kernel_version": "1", "points": [
    {"kernel": "fwd", "dtype": "bf16", "head_dim": 128, "block": 256, "mask": "full",
     "median_s": 1e-4, "min_s": 1e-4, "max_s": 2e-4, "repeats": 5, "entries": 2097152},
    {"kernel": "fwd", "dtype": "bf16", "head_dim": 128, "block": 4096, "mask": "full",
     "median_s": 1e-2, "min_s": 1e-2, "max_s": 2e-2, "repeats": 5, "entries": 536870912},
    {"kernel": "bwd", "dtype": "bf16", "head_dim": 128, "block": 256, "mask": "full",
     "median_s": 3e-4, "min_s": 3e-4, "max_s": 4e-4, "repeats": 5, "entries": 2097152}]})");
  std::vector<double> q(32 * 16), kv(32 * 16);
  for (std::size_t i = 0; i < q.size(); ++i) {
    q[i] = static_cast<double>(i % 7) / 8 - 0.375;
    kv[i] = static_cast<double>(i % 5) / 4 - 0.5;
  }
  write_file("q.npy", encode_npy({32, 1, 16}, NpyDType::F32, q));
  write_file("k.npy", encode_npy({32, 1, 16}, NpyDType::F32, kv));
  write_file("v.npy", encode_npy({32, 1, 16}, NpyDType::F16, kv));
  write_file("s.npy", encode_npy({16, 1, 16}, NpyDType::F32,
                                 std::vector<double>(kv.begin(), kv.begin() + 256)));
  std::string nan = encode_npy({32, 1, 16}, NpyDType::F32, kv);
  std::fill(nan.end() - 4, nan.end(), '\xff');  // the last float32 becomes a NaN
  write_file("n.npy", nan);
  write_file("t.npy", encode_npy({32, 1, 16}, NpyDType::F32, q).substr(0, 100));
}

// The value of a token as a count, or -1 when it is not one ("--x=16K" -> 16384).
long long count_value(std::string t) {
  if (t.rfind("--", 0) == 0) {
    const auto eq = t.find('=');
    if (eq == std::string::npos) return -1;
    t = t.substr(eq + 1);
  }
  if (t.empty() || t.size() > 18) return t.empty() ? -1 : (1LL << 62);
  long long mult = 1;
  const char last = static_cast<char>(t.back() | 0x20);
  if (last == 'k') mult = 1 << 10;
  if (last == 'm') mult = 1 << 20;
  if (last == 'g') mult = 1 << 30;
  if (last == 't') mult = 1LL << 40;
  if (mult != 1) t.pop_back();
  if (t.empty() || !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoll(t) * mult;
}

std::string sandbox_path(const std::string& name) {
  make_sandbox();
  return sandbox() + "/" + name;
}

}  // namespace

int cli(const std::uint8_t* data, std::size_t size) {
  if (size > 1024) return 0;
  std::vector<std::string> args;
  std::string cur;
  for (std::size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\n' || c == '\0') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty() || args.empty()) args.push_back(cur);
  if (args.size() > 32) return 0;

  std::vector<std::string> names;
  for (const auto& c : cli::commands()) names.push_back(c.name);
  const bool named = std::find(names.begin(), names.end(), args[0]) != names.end();
  const std::string sub = named ? args[0] : "run";
  static const std::vector<std::string> allowed = {"run",    "minblock", "hardware",
                                                   "verify", "plan",     "infer"};
  if (std::find(allowed.begin(), allowed.end(), sub) == allowed.end()) return 0;
  // verify runs the emulator and a float64 reference; plan sweeps configs
  // with the analytic model, O(context-parallel degree) each.
  // infer (and plan --inference) evaluate every rank's every ring step: O(cp^2).
  const bool inference =
      sub == "infer" || std::find(args.begin(), args.end(), "--inference") != args.end();
  const long long max_number = sub == "verify" ? 16 : inference ? 256 : sub == "plan" ? 4096 : -1;
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& t = args[i];
    if (t.find('/') != std::string::npos) return 0;
    if (t.rfind("--", 0) == 0 &&
        (t.find("-out") != std::string::npos || t.find("trace") != std::string::npos ||
         t.find("save") != std::string::npos || t.find("write") != std::string::npos ||
         t.find("csv") != std::string::npos))
      return 0;
    if (i > 0 && std::find(names.begin(), names.end(), t) != names.end() &&
        std::find(allowed.begin(), allowed.end(), t) == allowed.end())
      return 0;
    if (max_number >= 0 && count_value(t) > max_number) return 0;
    if (t.find("recheck") != std::string::npos) return 0;  // plan: SimGrid in child processes
    if (t == "--engine") {  // dropped with its value: run is forced to analytic below
      ++i;
      continue;
    }
    if (t.rfind("--engine=", 0) == 0) continue;
    kept.push_back(t);
    if (std::find(kSeedFiles.begin(), kSeedFiles.end(), t) != kSeedFiles.end())
      kept.back() = sandbox_path(t);
  }
  if (sub == "run" || sub == "infer") {
    kept.push_back("--engine");
    kept.push_back("analytic");
  }

  check_cli_contract("cli", run_captured(kept), kept, sub);
  return 0;
}

}  // namespace ringsim::fuzz

RINGSIM_FUZZ_ENTRY(cli)
