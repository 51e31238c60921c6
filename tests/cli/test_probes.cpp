// The probe table of docs/bad-input.md ("Probes: every flag of every
// subcommand"), written by tests/cli/make_probes.py: every row runs in this
// process through the CLI's own entry point, in a scratch copy of
// tests/cli/data, and must exit 2 with exactly its line (or the line's
// prefix), print nothing on stdout, name the probed flag, and write nothing.
// In-process keeps the ~950 rows to seconds; none of them may start a
// simulation (each refuses before any work), which the row's exit code checks.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "doc_table.hpp"
#include "tests/run_cli.hpp"

namespace {

namespace fs = std::filesystem;

// Every file under `dir` with its size: what a refused input must not change.
std::map<std::string, std::uintmax_t> listing(const fs::path& dir) {
  std::map<std::string, std::uintmax_t> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    out[fs::relative(e.path(), dir).string()] = e.is_regular_file() ? e.file_size() : 0;
  return out;
}

// The flag a probe is about: the first --word of its probe column.
std::string probed_flag(const std::string& probe) {
  const auto at = probe.find("--");
  if (at == std::string::npos) return {};
  const auto end = probe.find_first_of(" :", at);
  return probe.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

TEST(Probes, EveryRowIsRefusedWithItsLineAndWritesNothing) {
  const auto rows = ringsim::testing::read_doc_rows(RINGSIM_BAD_INPUT_DOC, "probe");
  ASSERT_GE(rows.size(), 500u) << "docs/bad-input.md lost its probe table";
  const auto scratch =
      fs::path(::testing::TempDir()) / ("ringsim-probes-" + std::to_string(::getpid()));
  fs::remove_all(scratch);
  fs::copy(RINGSIM_CLI_DATA, scratch, fs::copy_options::recursive);
  const auto before = listing(scratch);
  const auto home = fs::current_path();
  fs::current_path(scratch);
  int failed = 0;
  for (const auto& r : rows) {
    const std::string where =
        "docs/bad-input.md:" + std::to_string(r.line) + ": `" + r.command + "`";
    ASSERT_EQ(r.exit_code, 2) << where << ": a probe must be refused (malformed row?)";
    const auto got = ringsim::cli_testing::run_cli(r.args);
    const bool one = !got.err.empty() && got.err.find('\n') == got.err.size() - 1;
    const auto line = one ? got.err.substr(0, got.err.size() - 1) : got.err;
    const bool same = r.prefix ? line.rfind(r.stderr_line, 0) == 0 : line == r.stderr_line;
    const auto flag = probed_flag(r.kind);
    const bool named = flag.empty() || line.find(flag) != std::string::npos;
    if (got.code != 2 || !one || !same || !got.out.empty() || !named) {
      ADD_FAILURE() << where << "\n  exit " << got.code << "\n  stderr: " << got.err
                    << "\n  expected: " << r.stderr_line << (r.prefix ? "..." : "")
                    << "\n  stdout: " << got.out << (named ? "" : "\n  does not name " + flag);
      if (++failed == 10) break;  // the first ten say enough
    }
  }
  fs::current_path(home);
  EXPECT_EQ(listing(scratch), before) << "a refused probe wrote or removed a file";
  fs::remove_all(scratch);
  std::cout << rows.size() << " probes run\n";
}

}  // namespace
