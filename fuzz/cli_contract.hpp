#pragma once
// What every run of the command line must do, whatever the input (the cli
// and config fuzz targets; docs/bad-input.md):
//   exit 2 -> stderr is exactly one line "ringsim: error: ...", stdout empty;
//   exit 0 (or 1 from verify) -> stdout holds no NaN/Inf, and --json prints
//   one JSON object whose run times are numbers;
//   anything else (an internal error, exit 3) is a finding.
#include <algorithm>
#include <cctype>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "fuzz/target.hpp"

namespace ringsim::fuzz {

struct CliRun {
  int rc = 0;
  std::string out, err;
};

// `ringsim args...` through the CLI's own entry point, stdout and stderr captured.
inline CliRun run_captured(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"ringsim"};
  for (const auto& t : args) argv.push_back(t.c_str());
  std::ostringstream out, err;
  auto* old_out = std::cout.rdbuf(out.rdbuf());
  auto* old_err = std::cerr.rdbuf(err.rdbuf());
  CliRun r;
  r.rc = cli::run_cli(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

inline bool has_word(const std::string& text, const std::string& word) {
  for (auto p = text.find(word); p != std::string::npos; p = text.find(word, p + 1)) {
    const bool left = p == 0 || !std::isalpha(static_cast<unsigned char>(text[p - 1]));
    const auto e = p + word.size();
    const bool right = e == text.size() || !std::isalpha(static_cast<unsigned char>(text[e]));
    if (left && right) return true;
  }
  return false;
}

// `target` names the fuzz target in a finding; `sub` is the subcommand run.
inline void check_cli_contract(const std::string& target, const CliRun& r,
                               const std::vector<std::string>& args, const std::string& sub) {
  std::string shown;
  for (const auto& t : args) shown += " '" + t + "'";
  const auto& o = r.out;
  const auto& e = r.err;
  if (r.rc == 2) {
    if (e.rfind("ringsim: error: ", 0) != 0 || e.size() <= 17 || e.back() != '\n' ||
        e.find('\n') != e.size() - 1)
      finding(target + ": exit 2 without exactly one 'ringsim: error:' line:" + shown + "\n" + e);
    if (!o.empty()) finding(target + ": exit 2 but stdout not empty:" + shown + "\n" + o);
    return;
  }
  if (r.rc != 0 && !(r.rc == 1 && sub == "verify"))
    finding(target + ": exit " + std::to_string(r.rc) + ":" + shown + "\n" + e);
  // Help (also as a short-flag cluster such as "-hx") and --version print text,
  // not results.
  const bool help = o.find("Usage: ") != std::string::npos ||
                    std::any_of(args.begin(), args.end(), [](const std::string& t) {
                      return t == "--help-all" || t == "--version";
                    });
  // fmt, printf and to_string print non-finite numbers as lowercase inf/nan
  // (JSON output turns them into null, caught by the readers of --json).
  if (!help && (has_word(o, "nan") || has_word(o, "inf")))
    finding(target + ": NaN/Inf printed:" + shown + "\n" + o);
  if (!help && std::find(args.begin(), args.end(), "--json") != args.end()) {
    const auto j = nlohmann::json::parse(o, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      finding(target + ": --json did not print one object:" + shown);
    // nlohmann prints NaN/Inf as null: the run summary's times must be numbers.
    if (sub == "run")
      for (const char* k : {"time_s", "ideal_time_s", "efficiency", "compute_s_per_step"})
        if (j.contains(k) && !j[k].is_number())
          finding(target + ": run --json: '" + k + "' is not a number:" + shown);
  }
}

}  // namespace ringsim::fuzz
