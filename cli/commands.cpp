#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <regex>

#include "cli/command.hpp"
#include "cli/complete.hpp"
#include "cli/config_file.hpp"
#include "cli/stop_scope.hpp"
#include "models/core/errors.hpp"
#include "models/core/help_format.hpp"
#include "models/core/parse.hpp"
#include "models/core/suggest.hpp"
#include "proc/unknown_flag.hpp"

namespace ringsim::cli {

namespace {

// CLI11's wording for a flag given more often than it takes values ("--devices: At
// Most 1 required but received 2") said in the project's: what happened, what to do.
std::string plain_cli11(const std::string& what) {
  static const std::regex most(R"(^(\S+): At Most (\d+) required but received (\d+)$)");
  std::smatch m;
  if (std::regex_match(what, m, most))
    return m[2].str() == "1"
               ? fmt::format("{}: given {} times; give it once", m[1].str(), m[3].str())
               : fmt::format("{}: given {} values; it takes at most {}", m[1].str(), m[3].str(),
                             m[2].str());
  // A flag at the end of the line, its value missing: "--devices: 1 required
  // INT missing".
  static const std::regex missing(R"(^(\S+): (\d+) required (.+) missing$)");
  if (std::regex_match(what, m, missing))
    return fmt::format("{}: needs a value ({}) after it; none was given", m[1].str(), m[3].str());
  return what;
}

// CLI11's "arguments were not expected" as one line that names the first
// unknown flag, its subcommand and the flag it was probably meant to be.
std::string unknown_flag(const CLI::App& app, const CLI::ExtrasError& e) {
  const auto subs = app.get_subcommands();
  const CLI::App* sub = subs.empty() ? nullptr : subs.front();
  const auto where = sub ? "ringsim " + sub->get_name() : std::string("ringsim");
  const auto line =
      proc::unknown_flag_line(sub ? sub->remaining() : app.remaining(), {&app, sub}, where);
  return line.empty() ? one_line(e.what()) : line;
}

// `ringsim help [CMD]` as `ringsim [CMD] --help`: the same text, by the same
// parser. An unknown CMD is bad input (exit 2) with the likely one named.
bool help_to_flag(std::vector<std::string>& args, std::size_t at,
                  const std::vector<std::string>& names) {
  if (args.size() <= at + 1) {
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(at), args.end());
    args.push_back("--help");
    return true;
  }
  const auto cmd = args[at + 1];
  if (std::find(names.begin(), names.end(), cmd) == names.end()) {
    std::cerr << fmt::format(
        "ringsim: error: help: '{}' is not a subcommand;{} choose one of: {}\n", cmd,
        did_you_mean(cmd, names), join(names, ", "));
    return false;
  }
  args.erase(args.begin() + static_cast<std::ptrdiff_t>(at), args.end());
  args.insert(args.end(), {cmd, "--help"});
  return true;
}

}  // namespace

const std::vector<Command>& commands() {
  // The order `ringsim --help` lists them in.
  static const std::vector<Command> all{
      run_command(),        minblock_command(),  hardware_command(), plan_command(),
      infer_command(),      sweep_command(),     verify_command(),   profile_command(),
      experiment_command(), calibrate_command(), validate_command()};
  return all;
}

int run_cli(int argc, const char* const* argv) {
  CLI::App app{
      "ringsim: how ring attention (context parallelism) behaves on a cluster, before you rent "
      "it.\n"
      "`ringsim --devices 256 --block 4096` is `ringsim run --devices 256 --block 4096`.\n"
      "Units, in and out: K, M, G are binary (128K = 131072 tokens, 1M = 1048576, 95G = 95 x "
      "2^30 bytes); memory prints in GiB (2^30 bytes); bandwidth is bytes/s (or 50GB/s, or bits: "
      "400Gbps = 50e9), printed as decimal GB/s (1e9 B/s) as datasheets quote it; token totals of "
      "a training run and money are "
      "decimal, as they are quoted (plan --train-tokens 15T = 15e12).",
      "ringsim"};
  use_help_format(app);  // before the subcommands, which copy it
  app.set_version_flag("-V,--version", std::string("ringsim ") + RINGSIM_VERSION);
  app.require_subcommand(0, 1);
  int exit_code = 0;
  std::vector<std::string> names;
  for (const auto& c : commands()) {
    c.setup(app, &exit_code);
    names.push_back(c.name);
  }
  add_config_flag(app);

  // `run` is the default subcommand: insert it when the first argument is not
  // a subcommand or a top-level flag.
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  // Shell completion asks for words (cli/complete.hpp); not listed in --help.
  if (!args.empty() && args[0] == "__complete") {
    for (const auto& w : completion_words(app, names, {args.begin() + 1, args.end()}))
      std::cout << w << "\n";
    return 0;
  }
  // `--config FILE` goes first, where the root app reads it (cli/config_file.hpp).
  std::size_t first = 0;
  try {
    refuse_empty_values(args);
    if (!hoist_config_flag(args).empty()) first = 2;
  } catch (const InputError& e) {
    std::cerr << "ringsim: error: " << one_line(e.what()) << "\n";
    return 2;
  }
  if (args.size() > first && args[first] == "help" && !help_to_flag(args, first, names)) return 2;
  const bool top_flag = args.size() > first && (args[first] == "--help" || args[first] == "-h" ||
                                                args[first] == "--version" || args[first] == "-V");
  const bool named =
      args.size() > first && std::find(names.begin(), names.end(), args[first]) != names.end();
  // A first word that is neither a flag nor a subcommand is a mistyped
  // subcommand (run takes no positional arguments): name the likely one.
  if (args.size() > first && !named && !top_flag && !args[first].empty() && args[first][0] != '-') {
    std::cerr << fmt::format(
        "ringsim: error: '{}' is not a subcommand;{} choose one of: {} (or give run's flags: "
        "ringsim --help)\n",
        args[first], did_you_mean(args[first], names), join(names, ", "));
    return 2;
  }
  if (!top_flag && !named) args.insert(args.begin() + static_cast<std::ptrdiff_t>(first), "run");
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    // The default subcommand's flags are what most people look for.
    std::cout << app.help() << "\n" << app.get_subcommand("run")->help();
    return 0;
  }
  std::vector<const char*> cargs{"ringsim"};
  for (const auto& a : args) cargs.push_back(a.c_str());

  try {
    refuse_empty_values(args);
    app.parse(static_cast<int>(cargs.size()), cargs.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    std::cerr << "ringsim: error: " << unknown_flag(app, e) << "\n";
    return 2;
  } catch (const CLI::ParseError& e) {
    // One line, exit 2, whatever CLI11 would have printed.
    std::cerr << "ringsim: error: " << one_line(plain_cli11(e.what())) << "\n";
    return 2;
  } catch (const Cancelled&) {
    return interrupted_exit();
  } catch (const InputError& e) {
    // A child stopped by the same signal fails its caller: the signal is the news.
    if (sim::interrupt_requested()) return interrupted_exit();
    // Messages quote file contents (names, keys), which may hold line breaks.
    std::cerr << "ringsim: error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    // Not "use --engine analytic": the closed forms may be what ran out.
    std::cerr << "ringsim: error: out of memory; reduce the sizes (devices, context, block)\n";
    return 2;
  } catch (const std::exception& e) {
    if (sim::interrupt_requested()) return interrupted_exit();
    std::cerr << "ringsim: internal error: " << e.what() << "\n";
    return 3;
  }
  return exit_code;
}

}  // namespace ringsim::cli
