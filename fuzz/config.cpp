// Fuzz target: `--config FILE`, the TOML file of flags (cli/config_file.cpp:
// CLI11's TOML reader, every key handed to the chosen subcommand). The input
// is the file; the first byte picks the subcommand (run, minblock or
// hardware), the rest is written to a file in a sandbox and read with
// `ringsim --config FILE SUB --json`. Every run must keep the command line's
// contract (fuzz/cli_contract.hpp): a bad key, value or line is one error
// line and exit 2, an accepted file gives finite results.
//
// Fuzz-only limits: `run` is forced to --engine analytic by the command line
// (which wins over the file: SimGrid allows one engine per process), and a
// file naming another file or an output (a '/', trace, csv, out, catalog,
// profile, config) is skipped, so runs read and write nothing else.
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fuzz/cli_contract.hpp"
#include "fuzz/target.hpp"

namespace ringsim::fuzz {

namespace {

std::string& config_path() {
  static std::string path;
  return path;
}

void remove_config() {
  std::error_code ec;
  std::filesystem::remove_all(std::filesystem::path(config_path()).parent_path(), ec);
}

const std::string& sandboxed_config() {
  if (config_path().empty()) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("ringsim-fuzz-config-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    config_path() = (dir / "c.toml").string();
    std::atexit(remove_config);
  }
  return config_path();
}

// `word` as a whole key (not inside `layout` or `timeout`).
bool names_word(const std::string& text, const std::string& word) {
  auto ident = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  };
  for (auto p = text.find(word); p != std::string::npos; p = text.find(word, p + 1)) {
    const auto e = p + word.size();
    if ((p == 0 || !ident(text[p - 1])) && (e == text.size() || !ident(text[e]))) return true;
  }
  return false;
}

}  // namespace

int config(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 4096) return 0;
  static const char* const subs[] = {"run", "minblock", "hardware"};
  const std::string sub = subs[data[0] % 3];
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (const char* word : {"/", "trace", "csv", "catalog", "profile", "config"})
    if (text.find(word) != std::string::npos) return 0;
  if (names_word(text, "out")) return 0;  // --out, but not `layout`
  const auto& path = sandboxed_config();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  std::vector<std::string> args{"--config", path, sub};
  if (sub == "run") args.insert(args.end(), {"--engine", "analytic"});
  args.push_back("--json");
  check_cli_contract("config", run_captured(args), args, sub);
  return 0;
}

}  // namespace ringsim::fuzz

RINGSIM_FUZZ_ENTRY(config)
