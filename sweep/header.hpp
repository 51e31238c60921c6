#pragma once
// What every row of a sweep depends on besides its own swept values, written
// as the first line of its journal (sweep/journal.hpp): the base flags as
// given, the catalog (the built-in data and the --catalog file), the
// --profile and --config files, and the ringsim version. A resume under
// another header is refused, naming what differs, so rows computed under
// other flags, data or code never come back as this run's answer.
#include <CLI/CLI.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "proc/run_spec.hpp"

namespace ringsim::sweep {

struct JournalHeader {
  std::string version;                      // the ringsim that computed the rows
  std::map<std::string, std::string> base;  // "--gpu" -> "h100-sxm": the flags under the axes
  // SHA-256 of the contents (hex); "" when there is no such file.
  // built-in data, then the --catalog, --calibration and --documents files if any
  std::string catalog;
  std::string profile, config;
  bool operator==(const JournalHeader&) const = default;
};

// The header of a sweep now: this ringsim's version, `base`, and the hashes
// of the files base names (--catalog, --profile) and of `config` (the
// --config file, "" for none). Throws InputError naming the flag of a file
// that cannot be read.
JournalHeader make_header(std::map<std::string, std::string> base, const std::string& config);

// The SHA-256 of the files one point reads, from its own flags: the built-in
// data and the --catalog, --calibration and --documents files (as the
// header's catalog hash), then --profile. A sweep hashes every point's at its
// start and passes it on (RunSpec::inputs_sha256); the child hashes the files
// again before it reads them and refuses to run when they differ, so a file
// replaced during a sweep fails the points left instead of mixing its rows
// with the old file's. Throws InputError naming the flag of an unreadable file.
std::string inputs_hash(const proc::RunSpec& spec);
// The child's side: InputError naming --inputs-sha256 when spec's files no
// longer hash to spec.inputs_sha256 (nothing when it is "").
void check_inputs_hash(const proc::RunSpec& spec);

// The flags given to `app` (on its command line or from a --config file), as
// "--flag" -> text (repeated values joined by commas), except those in
// `leave_out` (the axes; the sweep's own flags) and those given their default.
std::map<std::string, std::string> flags_given(const CLI::App& app,
                                               const std::set<std::string>& leave_out);

nlohmann::json to_json(const JournalHeader& h);
// Throws std::runtime_error for an object that is not a journal header.
JournalHeader header_from_json(const nlohmann::json& j);

// What differs between a journal's header and this run's, one phrase each
// ("--gpu: h100-sxm in the journal, a100-80gb now"); empty when they match.
std::vector<std::string> header_differences(const JournalHeader& journal, const JournalHeader& now);

// SHA-256 of `bytes`, as 64 hex digits (OpenSSL's libcrypto).
std::string sha256_hex(std::string_view bytes);

}  // namespace ringsim::sweep
