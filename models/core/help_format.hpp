#pragma once
// The --help layout every ringsim program uses (header-only; include it only
// from code that links CLI11). CLI11 2.1 prints a negatable flag as
// `--causal,--no-causal{false}`: the `{false}` is the value --no-causal
// stores, which reads as if the default were off. This formatter prints the
// names alone and the flag's default from its option_text, e.g.
// `--causal,--no-causal [default: --causal]`.
#include <CLI/CLI.hpp>

namespace ringsim {

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    // A flag takes no value (CLI11's own test in Option::get_name).
    if (is_positional || opt->get_items_expected() != 0)
      return CLI::Formatter::make_option_name(opt, is_positional);
    std::string out;
    for (const auto& s : opt->get_snames()) out += (out.empty() ? "-" : ",-") + s;
    for (const auto& l : opt->get_lnames()) out += (out.empty() ? "--" : ",--") + l;
    return out;
  }
};

// Installs the formatter on `app`; call before adding subcommands, which copy it.
inline void use_help_format(CLI::App& app) {
  app.formatter(std::make_shared<HelpFormatter>());
}

}  // namespace ringsim
