#include "cli/config_file.hpp"

#include <fmt/format.h>

#include <memory>
#include <set>

#include "cli/complete.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"
#include "models/core/input_file.hpp"
#include "models/core/parse.hpp"
#include "models/core/suggest.hpp"

namespace ringsim::cli {
namespace {

// The keys a config file may hold for `app`: its long flags without the
// dashes, help aside (what did_you_mean offers for a mistyped key).
std::vector<std::string> config_keys(const CLI::App& app) {
  std::vector<std::string> keys;
  for (const auto& flag : flags_of(app))
    if (flag != "--help") keys.push_back(flag.substr(2));
  return keys;
}

// 1 MiB: a file of flags is a few hundred bytes; anything near this is not one.
constexpr std::uintmax_t kMaxConfigBytes = 1u << 20;

// CLI11's TOML reader, with every key moved under the subcommand that was
// chosen: CLI11 reads the config file on the root app only, and a key without a
// section would otherwise look for the flag on the root (which has none).
// A key or value from the file as a message can show it: a NUL byte would
// end the message where it stands (what() is a C string), and other control
// bytes would reach the terminal.
std::string shown(const std::string& text) {
  return one_line(text).substr(0, 80);
}

// What CLI11's lenient reader lets through but a flag cannot take: a
// fragment of bad syntax (`devices = = 8`, an unterminated string), an array
// for a flag that takes one value, a word for a switch. Named by file and key,
// not reported later as a command-line error that never was on the line.
void check_values(const std::string& file, const CLI::ConfigItem& item, const CLI::Option& op) {
  for (const auto& v : item.inputs) {
    if (!v.empty() && (v.front() == '=' || v.front() == '"' || v.front() == '\''))
      throw InputError(
          fmt::format("--config {}: key '{}': '{}' is not a TOML value (a stray '=' "
                      "or an unterminated string)",
                      file, shown(item.name), shown(v)));
  }
  if (op.get_expected_min() == 0) {  // a switch: --causal / --no-causal
    static const std::set<std::string> yes_no = {"true", "false", "on", "off", "1", "0"};
    if (item.inputs.size() != 1 || !yes_no.count(item.inputs.front()))
      throw InputError(fmt::format("--config {}: key '{}' is a switch: true or false, got '{}'",
                                   file, shown(item.name), shown(join(item.inputs, ", "))));
    return;
  }
  if (op.get_items_expected_max() == 1 && item.inputs.size() > 1)
    throw InputError(fmt::format(
        "--config {}: key '{}' has {} values (an array, or the key given twice); it takes one",
        file, shown(item.name), item.inputs.size()));
}

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
    std::set<std::string> seen;
    // Sections (CLI11 marks them with "++"/"--" items) and dotted keys: flags
    // are top-level keys. Name the first key inside one.
    for (const auto& item : items) {
      const bool marker = item.name == "++" || item.name == "--";
      if (!item.parents.empty() && !marker)
        throw InputError(
            fmt::format("--config {}: key '{}' is in a section; write each flag as a top-level key",
                        file, shown(item.fullname())));
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
            "--config {}: unknown key '{}' for '{}';{} a key is one of its long flags without "
            "the dashes (see '{} --help')",
            file, shown(item.name), command, did_you_mean(item.name, config_keys(*sub)), command));
      check_values(file, item, *op);
      if (!seen.insert(item.name).second)
        throw InputError(fmt::format("--config {}: key '{}' is given twice; give it once", file,
                                     shown(item.name)));
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
  register_input("--config", path);  // no output of the command may replace it
  rest.insert(rest.begin(), {"--config", path});
  args = std::move(rest);
  return path;
}

}  // namespace ringsim::cli
