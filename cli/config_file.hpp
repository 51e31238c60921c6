#pragma once
// `--config FILE`: a TOML file of flags for any subcommand, read by CLI11's own
// config support (App::set_config on the root app). A key is a long flag of the
// chosen subcommand without its dashes (`devices = 256`, `block = "4K"`,
// `causal = false`); flags on the command line override the file's.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ringsim::cli {

// Adds --config to the root app and installs the reader that hands the file's
// keys to the subcommand that was chosen. Call once, after the subcommands.
void add_config_flag(CLI::App& root);

// Moves every `--config FILE` / `--config=FILE` after the subcommand's name to
// the front of `args` (where the root app reads it), and checks the file can be
// read (InputError naming --config and the file otherwise). Returns the path,
// "" when there is none; a second --config is refused.
std::string hoist_config_flag(std::vector<std::string>& args);

}  // namespace ringsim::cli
