#pragma once
// The subcommands of `ringsim`, listed once in cli/commands.cpp in the order
// `--help` shows them. Each cmd_*.cpp defines one and exports its factory.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace ringsim::cli {

// Exit codes: 0 ok, 1 a check failed (verify, experiment), 2 bad input.
struct Command {
  std::string name;
  // Adds the subcommand to `app`; returns it. The callback it installs runs the
  // command and stores its exit code in `*exit_code`.
  std::function<CLI::App*(CLI::App& app, int* exit_code)> setup;
};

Command run_command();
Command minblock_command();
Command hardware_command();
Command verify_command();
Command plan_command();
Command infer_command();
Command sweep_command();
Command profile_command();
Command experiment_command();
Command calibrate_command();
Command validate_command();

// Every subcommand, in --help order; `run` is the default.
const std::vector<Command>& commands();

// Runs the whole command line as `ringsim argv...` would; used by main and by
// the CLI tests (which capture stdout/stderr). Returns the exit code.
int run_cli(int argc, const char* const* argv);

}  // namespace ringsim::cli
