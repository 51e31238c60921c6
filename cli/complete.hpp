#pragma once
// Shell completion's one source of words: `ringsim __complete [CMD [FLAG]]`
// prints the subcommands, CMD's flags, or FLAG's values (catalog names and
// fixed choices), one per line. The bash, zsh and fish scripts in
// cli/completion/ ask it, so they cannot drift from the program.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ringsim::cli {

// An app's long flags with their dashes ("--devices"), sorted: what completion
// offers, and (without the dashes) the keys a --config file may hold.
std::vector<std::string> flags_of(const CLI::App& a);

// The words for `ringsim __complete ARGS...` (ARGS after __complete).
std::vector<std::string> completion_words(const CLI::App& app,
                                          const std::vector<std::string>& names,
                                          const std::vector<std::string>& args);

}  // namespace ringsim::cli
