#pragma once
// The rules every trace ringsim writes follows (docs/trace-format.md, "Rules"):
// what Perfetto and chrome://tracing need to draw it right. Returns one line
// per violation (empty: the trace follows them). For tests and for checking a
// file by hand; it holds the whole file as a DOM, so it is not the GUI's reader.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ringsim::trace {

// At most this many violations are listed (then one line says how many more).
inline constexpr std::size_t kMaxViolations = 50;

std::vector<std::string> check_rules(const nlohmann::json& trace);
// The same on the file's text; invalid JSON is one violation.
std::vector<std::string> check_rules_text(std::string_view json);

}  // namespace ringsim::trace
