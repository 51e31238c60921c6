#pragma once
// Subcommand registry. Each cmd_*.cpp defines one subcommand and registers it
// with a static `CommandRegistrar`, so adding a subcommand touches no other file.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace ringsim::cli {

// Exit codes: 0 ok, 1 a check failed (verify), 2 bad input.
struct Command {
  std::string name;
  int order = 50;  // position in --help
  // Adds the subcommand to `app`; returns it. The callback it installs runs the
  // command and stores its exit code in `*exit_code`.
  std::function<CLI::App*(CLI::App& app, int* exit_code)> setup;
};

void register_command(Command c);
const std::vector<Command>& commands();

struct CommandRegistrar {
  explicit CommandRegistrar(Command c) { register_command(std::move(c)); }
};

// Runs the whole command line as `ringsim argv...` would; used by main and by
// the CLI tests (which capture stdout/stderr). Returns the exit code.
int run_cli(int argc, const char* const* argv);

}  // namespace ringsim::cli
