#include "cli/config_file.hpp"

#include <fmt/format.h>

#include <memory>

#include "models/core/errors.hpp"
#include "models/core/input_file.hpp"
#include "models/core/parse.hpp"

namespace ringsim::cli {
namespace {

// 1 MiB: a file of flags is a few hundred bytes; anything near this is not one.
constexpr std::uintmax_t kMaxConfigBytes = 1u << 20;

// CLI11's TOML reader, with every key moved under the subcommand that was
// chosen: CLI11 reads the config file on the root app only, and a key without a
// section would otherwise look for the flag on the root (which has none).
class SubcommandToml : public CLI::ConfigTOML {
 public:
  explicit SubcommandToml(const CLI::App* root) : root_(root) {}

  std::vector<CLI::ConfigItem> from_config(std::istream& in) const override {
    const std::string file = root_->get_config_ptr()->as<std::string>();
    std::vector<CLI::ConfigItem> items;
    try {
      items = CLI::ConfigTOML::from_config(in);
    } catch (const CLI::ParseError& e) {
      throw InputError(fmt::format("--config {}: not valid TOML: {}", file, e.what()));
    }
    // The deepest subcommand parsed (calibrate has none of its own today, but a
    // nested one would take the keys).
    std::vector<std::string> path;
    const CLI::App* sub = root_;
    while (!sub->get_subcommands().empty()) {
      sub = sub->get_subcommands().front();
      path.push_back(sub->get_name());
    }
    const std::string command = "ringsim " + join(path, " ");
    std::vector<CLI::ConfigItem> out;
    // Sections (CLI11 marks them with "++"/"--" items) and dotted keys: flags
    // are top-level keys. Name the first key inside one.
    for (const auto& item : items) {
      const bool marker = item.name == "++" || item.name == "--";
      if (!item.parents.empty() && !marker)
        throw InputError(
            fmt::format("--config {}: key '{}' is in a section; write each flag as a top-level key",
                        file, item.fullname()));
    }
    for (auto& item : items) {
      if (!item.parents.empty() || item.name == "++" || item.name == "--")
        throw InputError(fmt::format(
            "--config {}: a [section] holds no keys here; write each flag as a top-level key",
            file));
      const CLI::Option* op =
          item.name.size() > 1 ? sub->get_option_no_throw("--" + item.name) : nullptr;
      if (op == nullptr || item.name == "help")
        throw InputError(fmt::format(
            "--config {}: unknown key '{}' for '{}'; a key is one of its long flags without "
            "the dashes (see '{} --help')",
            file, item.name, command, command));
      item.parents = path;
      out.push_back(std::move(item));
    }
    return out;
  }

 private:
  const CLI::App* root_;
};

}  // namespace

void add_config_flag(CLI::App& root) {
  root.set_config("--config", "",
                  "TOML file of flags for the subcommand (key = long flag without dashes, e.g. "
                  "devices = 256); flags on the command line override it");
  root.config_formatter(std::make_shared<SubcommandToml>(&root));
  // Unknown keys are refused by the reader above with a line that names the key.
  root.allow_config_extras(CLI::config_extras_mode::error);
}

std::string hoist_config_flag(std::vector<std::string>& args) {
  std::string path;
  bool seen = false;
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "--") {  // everything after is positional
      rest.insert(rest.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    std::string value;
    if (a == "--config") {
      if (i + 1 >= args.size()) throw InputError("--config: 1 required FILE missing");
      value = args[++i];
    } else if (a.rfind("--config=", 0) == 0) {
      value = a.substr(9);
    } else {
      rest.push_back(a);
      continue;
    }
    if (seen) throw InputError("--config: give one file (its flags can be overridden on the line)");
    seen = true;
    path = value;
  }
  if (!seen) return "";
  // Read once here for a one-line refusal of a missing, unreadable or huge
  // file; CLI11 reads it again when it applies the keys.
  (void)read_input_file("--config", path, kMaxConfigBytes);
  rest.insert(rest.begin(), {"--config", path});
  args = std::move(rest);
  return path;
}

}  // namespace ringsim::cli
