#pragma once
// The one line every parser of ringsim's flags gives for a flag it does not
// know (the CLI, a run spec parsed from text, the Python module's sweep base):
// "--devcies: unknown flag of ringsim run; did you mean '--devices'? ringsim
// run --help lists them". Header-only: CLI11 is header-only too.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "models/core/suggest.hpp"

namespace ringsim::proc {

// Every long and short flag of the apps ("--devices", "-j"); null ones skipped.
inline std::vector<std::string> flag_names(const std::vector<const CLI::App*>& apps) {
  std::vector<std::string> names;
  for (const auto* a : apps) {
    if (!a) continue;
    for (const auto* o : a->get_options()) {
      for (const auto& l : o->get_lnames()) names.push_back("--" + l);
      for (const auto& s : o->get_snames()) names.push_back("-" + s);
    }
  }
  return names;
}

// The line for the first unknown flag among `extras` (what the parser left
// over), naming `where` ("ringsim run") and the flag of `apps` it probably
// meant; "" when no extra is a flag.
inline std::string unknown_flag_line(const std::vector<std::string>& extras,
                                     const std::vector<const CLI::App*>& apps,
                                     const std::string& where) {
  for (const auto& x : extras) {
    if (x.size() < 2 || x[0] != '-') continue;
    const auto flag = x.substr(0, x.find('='));
    const auto names = flag_names(apps);
    // A flag of an enclosing app (ringsim's own --version) given after the
    // subcommand: suggesting itself would not help.
    if (std::find(names.begin(), names.end(), flag) != names.end())
      return fmt::format("{}: not a flag of {}; it belongs before the subcommand (ringsim {})",
                         flag, where, flag);
    return fmt::format("{}: unknown flag of {};{} {} --help lists them", flag, where,
                       did_you_mean(flag, names), where);
  }
  // A word no flag takes (a second value, a stray file name): every value
  // follows its own flag.
  if (!extras.empty())
    return fmt::format(
        "'{}': {} takes no positional arguments; give each value after its own flag, one value "
        "per flag (lists are comma-separated); {} --help lists them",
        extras.front(), where, where);
  return "";
}

}  // namespace ringsim::proc
