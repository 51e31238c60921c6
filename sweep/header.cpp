#include "sweep/header.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <stdexcept>

#include "models/core/builtin_data.hpp"
#include "models/core/documents.hpp"
#include "models/core/errors.hpp"
#include "models/core/input_file.hpp"

namespace ringsim::sweep {

namespace {

// The key that marks a journal's first line, and the format it names.
constexpr const char* kFormat = "ringsim-sweep-journal-1";
// A catalog, profile or config file is small; this is the readers' own limit.
constexpr std::uintmax_t kMaxInputBytes = 64u << 20;

std::string file_hash(const std::string& flag, const std::string& path) {
  if (path.empty()) return {};
  return sha256_hex(read_input_file(flag, path, kMaxInputBytes));
}

std::string text_or_none(const std::map<std::string, std::string>& m, const std::string& k) {
  const auto it = m.find(k);
  return it == m.end() ? std::string() : it->second;
}

std::string shown(const std::string& hash) {
  return hash.empty() ? "none" : hash.substr(0, 12);
}

std::string catalog_hash(const std::string& file, const std::string& calibration,
                         const std::string& documents) {
  // The built-in data first: two builds of one version may ship other numbers.
  std::string catalog;
  for (const auto& text : builtin_data()) catalog += sha256_hex(text);
  if (!file.empty()) catalog += file_hash("--catalog", file);
  // A calibration file moves each row's error band: part of the data too.
  if (!calibration.empty()) catalog += file_hash("--calibration", calibration);
  // So does a --documents file of lengths or cu_seqlens (not a list or a
  // distribution, which the flags hold whole): its rows are drawn from it.
  if (names_documents_file(documents)) catalog += file_hash("--documents", documents);
  return sha256_hex(catalog);
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256 failed (OpenSSL)");
  std::string hex;
  for (unsigned int i = 0; i < n; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

std::string inputs_hash(const proc::RunSpec& spec) {
  return sha256_hex(catalog_hash(spec.hardware.catalog, spec.calibration, spec.workload.documents) +
                    file_hash("--profile", spec.hardware.profile));
}

void check_inputs_hash(const proc::RunSpec& spec) {
  if (spec.inputs_sha256.empty()) return;
  const auto now = inputs_hash(spec);
  if (now != spec.inputs_sha256)
    throw InputError(fmt::format(
        "--inputs-sha256: the catalog, --calibration, --documents or --profile files changed "
        "since the sweep started ({} then, {} now); rerun the sweep on the files as they are",
        shown(spec.inputs_sha256), shown(now)));
}

JournalHeader make_header(std::map<std::string, std::string> base, const std::string& config) {
  JournalHeader h;
  h.version = RINGSIM_VERSION;
  h.catalog = catalog_hash(text_or_none(base, "--catalog"), text_or_none(base, "--calibration"),
                           text_or_none(base, "--documents"));
  h.profile = file_hash("--profile", text_or_none(base, "--profile"));
  h.config = file_hash("--config", config);
  h.base = std::move(base);
  return h;
}

std::map<std::string, std::string> flags_given(const CLI::App& app,
                                               const std::set<std::string>& leave_out) {
  std::map<std::string, std::string> out;
  for (const auto* opt : app.get_options()) {
    if (opt->count() == 0 || opt->get_lnames().empty()) continue;
    const auto flag = fmt::format("--{}", opt->get_lnames().front());
    if (leave_out.count(flag)) continue;
    std::string text;
    for (const auto& v : opt->results()) {
      if (!text.empty()) text += ',';
      text += v;
    }
    if (text == opt->get_default_str()) continue;  // `--engine simgrid` is no flag at all
    out[flag] = text;
  }
  return out;
}

nlohmann::json to_json(const JournalHeader& h) {
  return {
      {"journal", kFormat},          {"ringsim_version", h.version}, {"base", h.base},
      {"catalog_sha256", h.catalog}, {"profile_sha256", h.profile},  {"config_sha256", h.config}};
}

JournalHeader header_from_json(const nlohmann::json& j) {
  if (!j.is_object() || j.value("journal", "") != kFormat)
    throw std::runtime_error("not a journal header");
  JournalHeader h;
  try {
    h.version = j.at("ringsim_version").get<std::string>();
    h.base = j.at("base").get<std::map<std::string, std::string>>();
    h.catalog = j.at("catalog_sha256").get<std::string>();
    h.profile = j.at("profile_sha256").get<std::string>();
    h.config = j.at("config_sha256").get<std::string>();
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error("a journal header with a missing or mistyped key");
  }
  return h;
}

std::vector<std::string> header_differences(const JournalHeader& journal,
                                            const JournalHeader& now) {
  std::vector<std::string> d;
  if (journal.version != now.version)
    d.push_back(
        fmt::format("ringsim {} wrote it, this is ringsim {}", journal.version, now.version));
  std::set<std::string> flags;
  for (const auto& [k, v] : journal.base) flags.insert(k);
  for (const auto& [k, v] : now.base) flags.insert(k);
  for (const auto& f : flags) {
    const auto a = journal.base.find(f), b = now.base.find(f);
    if (a != journal.base.end() && b != now.base.end() && a->second == b->second) continue;
    d.push_back(fmt::format("{}: {} in the journal, {} now", f,
                            a == journal.base.end() ? "not given" : a->second,
                            b == now.base.end() ? "not given" : b->second));
  }
  auto file = [&](const char* what, const std::string& x, const std::string& y) {
    if (x != y)
      d.push_back(
          fmt::format("{} differs (SHA-256 {} in the journal, {} now)", what, shown(x), shown(y)));
  };
  file("the catalog (built-in data and --catalog file)", journal.catalog, now.catalog);
  file("the --profile file", journal.profile, now.profile);
  file("the --config file", journal.config, now.config);
  return d;
}

}  // namespace ringsim::sweep
