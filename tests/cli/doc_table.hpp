#pragma once
// Reads the tables of docs/bad-input.md, so every row of the doc is a test and
// the doc cannot drift from what ringsim prints.
//
// A table is any markdown table whose header names the columns `kind` (or
// `probe`), `command` and `exit` (the `stderr` column is optional). Cells:
//   command  `ringsim ARG ...`: words split at spaces; 'single quotes' keep
//            spaces (and '' is an empty argument)
//   exit     the exit code, a number
//   stderr   `the exact line`; a final `...` makes it a prefix; `\|` is `|`
#include <algorithm>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

namespace ringsim::testing {

struct DocRow {
  int line = 0;  // line in the doc, for failure messages and test names
  std::string kind, command;
  std::vector<std::string> args;  // after "ringsim"
  int exit_code = -1;
  std::string stderr_line;  // without the trailing newline; empty = nothing on stderr
  bool prefix = false;
};

// GoogleTest prints a failing row by this.
inline void PrintTo(const DocRow& r, std::ostream* os) {
  *os << "docs/bad-input.md:" << r.line << " `" << r.command << "`";
}

namespace detail {

inline std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

// Cells of "| a | b \| c |" -> {"a", "b | c"}.
inline std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cur += '|';
      ++i;
    } else if (line[i] == '|') {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += line[i];
    }
  }
  return out;
}

inline std::string unquote_code(const std::string& cell) {
  if (cell.size() >= 2 && cell.front() == '`' && cell.back() == '`')
    return cell.substr(1, cell.size() - 2);
  return "";
}

inline std::vector<std::string> split_args(const std::string& cmd) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false, have = false;
  for (char c : cmd) {
    if (c == '\'') {
      quoted = !quoted;
      have = true;
    } else if (c == ' ' && !quoted) {
      if (have) out.push_back(cur);
      cur.clear();
      have = false;
    } else {
      cur += c;
      have = true;
    }
  }
  if (have) out.push_back(cur);
  return out;
}

}  // namespace detail

// Every row of every matching table; a malformed row comes back with
// exit_code -1 so the test fails on it instead of skipping it. `kind_column`:
// the header of the first column ("kind" for the tables of bad inputs run as
// children, "probe" for the probe table run in-process).
inline std::vector<DocRow> read_doc_rows(const std::string& path,
                                         const std::string& kind_column = "kind") {
  std::vector<DocRow> rows;
  std::ifstream in(path);
  std::string line;
  int n = 0, c_kind = -1, c_cmd = -1, c_exit = -1, c_err = -1;
  bool in_table = false;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] != '|') {
      in_table = false;
      c_kind = c_cmd = c_exit = c_err = -1;
      continue;
    }
    const auto cs = detail::cells(line);
    if (!in_table) {  // header row
      in_table = true;
      for (int i = 0; i < static_cast<int>(cs.size()); ++i) {
        if (cs[i] == kind_column) c_kind = i;
        if (cs[i] == "command") c_cmd = i;
        if (cs[i] == "exit") c_exit = i;
        if (cs[i].rfind("stderr", 0) == 0) c_err = i;
      }
      continue;
    }
    if (c_cmd < 0 || c_exit < 0 || c_kind < 0) continue;  // another kind of table
    // The separator under the header: nothing but pipes, dashes, colons and
    // spaces (a row may start with "| --flag").
    if (line.find_first_not_of("|-: ") == std::string::npos) continue;
    DocRow r;
    r.line = n;
    if (static_cast<int>(cs.size()) <= std::max({c_kind, c_cmd, c_exit, c_err})) {
      rows.push_back(r);
      continue;
    }
    r.kind = cs[static_cast<std::size_t>(c_kind)];
    r.command = detail::unquote_code(cs[static_cast<std::size_t>(c_cmd)]);
    auto args = detail::split_args(r.command);
    if (args.empty() || args[0] != "ringsim") {
      rows.push_back(r);
      continue;
    }
    r.args.assign(args.begin() + 1, args.end());
    try {
      r.exit_code = std::stoi(cs[static_cast<std::size_t>(c_exit)]);
    } catch (...) {
      r.exit_code = -1;
    }
    if (c_err >= 0) {
      r.stderr_line = detail::unquote_code(cs[static_cast<std::size_t>(c_err)]);
      if (r.stderr_line.size() >= 3 &&
          r.stderr_line.compare(r.stderr_line.size() - 3, 3, "...") == 0) {
        r.prefix = true;
        r.stderr_line.resize(r.stderr_line.size() - 3);
      }
    }
    rows.push_back(r);
  }
  return rows;
}

}  // namespace ringsim::testing
