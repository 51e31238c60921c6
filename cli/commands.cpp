#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "cli/command.hpp"
#include "cli/config_file.hpp"
#include "models/core/errors.hpp"
#include "models/core/help_format.hpp"
#include "models/core/parse.hpp"

namespace ringsim::cli {

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
      "2^30 bytes); memory prints in GiB (2^30 bytes); bandwidth is bytes/s, printed as decimal "
      "GB/s (1e9 B/s) as datasheets quote it.",
      "ringsim"};
  use_help_format(app);  // before the subcommands, which copy it
  app.set_version_flag("--version", std::string("ringsim ") + RINGSIM_VERSION);
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
  // `--config FILE` goes first, where the root app reads it (cli/config_file.hpp).
  std::size_t first = 0;
  try {
    refuse_empty_values(args);
    if (!hoist_config_flag(args).empty()) first = 2;
  } catch (const InputError& e) {
    std::cerr << "ringsim: error: " << one_line(e.what()) << "\n";
    return 2;
  }
  const bool top_flag = args.size() > first && (args[first] == "--help" || args[first] == "-h" ||
                                                args[first] == "--version");
  if (!top_flag &&
      (args.size() == first || std::find(names.begin(), names.end(), args[first]) == names.end()))
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(first), "run");
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
  } catch (const CLI::ParseError& e) {
    // One line, exit 2, whatever CLI11 would have printed.
    std::cerr << "ringsim: error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const InputError& e) {
    // Messages quote file contents (names, keys), which may hold line breaks.
    std::cerr << "ringsim: error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "ringsim: error: out of memory; reduce the sizes or use --engine analytic\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ringsim: internal error: " << e.what() << "\n";
    return 3;
  }
  return exit_code;
}

}  // namespace ringsim::cli
