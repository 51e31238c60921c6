// The bad-input table (docs/bad-input.md): each row runs the ringsim binary
// in tests/cli/data and checks the exit code and the exact stderr line. Rows
// with exit 2 must print nothing on stdout (no number computed from garbage);
// rows with exit 0 (size extremes) must print finite numbers only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "doc_table.hpp"
#include "models/core/errors.hpp"
#include "proc/child.hpp"
#include "trace/reader.hpp"

using ringsim::testing::DocRow;

namespace {

const std::vector<DocRow>& rows() {
  static const auto r = ringsim::testing::read_doc_rows(RINGSIM_BAD_INPUT_DOC);
  return r;
}

// Every number in a JSON value, with its path, for the finiteness check.
void numbers(const nlohmann::json& j, const std::string& path,
             std::vector<std::pair<std::string, double>>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) numbers(v, path + "." + k, out);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i)
      numbers(j[i], path + "[" + std::to_string(i) + "]", out);
  } else if (j.is_number()) {
    out.emplace_back(path, j.get<double>());
  }
}

class BadInput : public ::testing::TestWithParam<DocRow> {};

TEST_P(BadInput, ExitCodeAndMessage) {
  const DocRow& r = GetParam();
  ASSERT_GE(r.exit_code, 0) << "docs/bad-input.md:" << r.line << ": malformed row";
  // A child, not run_cli in-process: SimGrid allows one engine per process, and a
  // crash or sanitizer abort must show as what the user sees (a signal).
  ringsim::proc::Command cmd;
  cmd.argv = {RINGSIM_BIN};
  cmd.argv.insert(cmd.argv.end(), r.args.begin(), r.args.end());
  cmd.cwd = RINGSIM_CLI_DATA;
  cmd.timeout_s = 110;
  const auto c = ringsim::proc::run(cmd);
  const std::string where = "docs/bad-input.md:" + std::to_string(r.line) + ": `" + r.command + "`";
  ASSERT_EQ(c.signal, 0) << where << " was killed by signal " << c.signal << "\n" << c.err;
  EXPECT_EQ(c.exit_code, r.exit_code) << where << "\nstderr: " << c.err;
  if (r.stderr_line.empty()) {
    EXPECT_EQ(c.err, "") << where;
  } else {
    // Exactly one line, ending in a newline.
    ASSERT_FALSE(c.err.empty()) << where;
    EXPECT_EQ(c.err.find('\n'), c.err.size() - 1) << where << ": not one line:\n" << c.err;
    const std::string got = c.err.substr(0, c.err.size() - 1);
    if (r.prefix)
      EXPECT_EQ(got.substr(0, r.stderr_line.size()), r.stderr_line) << where;
    else
      EXPECT_EQ(got, r.stderr_line) << where;
  }
  if (r.exit_code == 2) {
    EXPECT_EQ(c.out, "") << where << ": a refused input printed on stdout";
    return;
  }
  // Accepted extremes: one JSON object, every number finite, and the sequence
  // is exactly devices x block (64-bit, not wrapped).
  const auto j = nlohmann::json::parse(c.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << where << ": stdout is not one JSON object:\n" << c.out;
  std::vector<std::pair<std::string, double>> nums;
  numbers(j, "", nums);
  for (const auto& [path, v] : nums) EXPECT_TRUE(std::isfinite(v)) << where << ": " << path;
  if (j.contains("devices") && j.contains("block") && j.contains("seq_len")) {
    const auto n = j["devices"].get<std::uint64_t>(), b = j["block"].get<std::uint64_t>();
    EXPECT_EQ(j["seq_len"].get<std::uint64_t>(), n * b) << where;
  }
  if (j.contains("time_s") && j.contains("ideal_time_s")) {
    EXPECT_GT(j["time_s"].get<double>(), 0) << where;
    // Bit for bit: time never below the ideal, efficiency never above 1.
    EXPECT_GE(j["time_s"].get<double>(), j["ideal_time_s"].get<double>()) << where;
    if (j.contains("efficiency")) {
      EXPECT_LE(j["efficiency"].get<double>(), 1.0) << where;
    }
    if (j.contains("analytic_efficiency")) {  // simulated: the closed forms' own, too
      EXPECT_LE(j["analytic_efficiency"].get<double>(), 1.0) << where;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Doc, BadInput, ::testing::ValuesIn(rows()),
                         [](const ::testing::TestParamInfo<DocRow>& info) {
                           return "line_" + std::to_string(info.param.line);
                         });

TEST(BadInputDoc, CoversEveryKindOfBadInput) {
  // Every kind of bad input a reader meets; each must have at least one refused row.
  const std::vector<std::string> kinds = {"missing",
                                          "truncated",
                                          "wrong type",
                                          "NaN/Inf",
                                          "out of range",
                                          "inconsistent shapes",
                                          "absurd size",
                                          "unknown name",
                                          "malformed JSON",
                                          "malformed .npy",
                                          "two outputs on one path",
                                          "output is an input",
                                          "flag that does not apply",
                                          "repeated fault flags",
                                          "empty value",
                                          "fraction",
                                          "line break",
                                          "terminal escape"};
  std::set<std::string> seen;
  for (const auto& r : rows())
    for (const auto& k : kinds)
      if (r.exit_code == 2 && r.kind.find(k) != std::string::npos) seen.insert(k);
  for (const auto& k : kinds)
    EXPECT_TRUE(seen.count(k)) << "docs/bad-input.md has no '" << k << "' row";
  EXPECT_GE(rows().size(), 40u);
}

// The trace table: trace::read_trace_file (what ringsim-gui opens) on each file.
struct TraceRow {
  int line = 0;
  std::string file, message;
  bool prefix = false;
};

std::vector<TraceRow> trace_rows() {
  std::vector<TraceRow> out;
  std::ifstream in(RINGSIM_BAD_INPUT_DOC);
  std::string line;
  int n = 0, c_file = -1, c_msg = -1;
  bool header = true;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] != '|') {
      header = true;
      c_file = c_msg = -1;
      continue;
    }
    const auto cs = ringsim::testing::detail::cells(line);
    if (header) {
      header = false;
      for (int i = 0; i < static_cast<int>(cs.size()); ++i) {
        if (cs[i] == "trace file") c_file = i;
        if (cs[i] == "message") c_msg = i;
      }
      continue;
    }
    if (c_file < 0 || c_msg < 0 || line.rfind("|-", 0) == 0) continue;
    TraceRow r;
    r.line = n;
    if (static_cast<int>(cs.size()) > std::max(c_file, c_msg)) {
      r.file = ringsim::testing::detail::unquote_code(cs[static_cast<std::size_t>(c_file)]);
      r.message = ringsim::testing::detail::unquote_code(cs[static_cast<std::size_t>(c_msg)]);
      if (r.message.size() >= 3 && r.message.compare(r.message.size() - 3, 3, "...") == 0) {
        r.prefix = true;
        r.message.resize(r.message.size() - 3);
      }
    }
    out.push_back(r);
  }
  return out;
}

TEST(BadTrace, EveryRowRefusedWithItsLine) {
  const auto rs = trace_rows();
  EXPECT_GE(rs.size(), 8u);
  for (const auto& r : rs) {
    const std::string where = "docs/bad-input.md:" + std::to_string(r.line);
    ASSERT_FALSE(r.file.empty() || r.message.empty()) << where << ": malformed row";
    std::string got;
    try {
      ringsim::trace::read_trace_file(std::string(RINGSIM_CLI_DATA) + "/" + r.file);
      ADD_FAILURE() << where << ": " << r.file << " was accepted";
      continue;
    } catch (const ringsim::InputError& e) {
      got = e.what();
    }
    // The doc shows the name as given on the command line, relative to tests/cli/data.
    const std::string dir = std::string(RINGSIM_CLI_DATA) + "/";
    for (auto p = got.find(dir); p != std::string::npos; p = got.find(dir))
      got.erase(p, dir.size());
    EXPECT_EQ(got.find('\n'), std::string::npos) << where;
    if (r.prefix)
      EXPECT_EQ(got.substr(0, r.message.size()), r.message) << where;
    else
      EXPECT_EQ(got, r.message) << where;
  }
}

}  // namespace
