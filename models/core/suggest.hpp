#pragma once
// "Did you mean ...?" for a mistyped flag, subcommand or catalog name, as
// git and cargo answer one: the closest choice when it is close enough to be
// a typo, nothing otherwise.
#include <string>
#include <vector>

namespace ringsim {

// Edits between a and b (insert, delete, substitute, swap two neighbours:
// the optimal string alignment distance), ignoring case.
int edit_distance(const std::string& a, const std::string& b);

// The choice `word` most likely meant: the only choice it is a prefix of
// (h100 -> h100-sxm), else the nearest within 2 edits and under half the
// word's length (--devcies -> --devices, plna -> plan); the first of equals.
// "" when none is that close.
std::string closest_choice(const std::string& word, const std::vector<std::string>& choices);

// " did you mean 'X'?" (with its leading blank) or "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& choices);

}  // namespace ringsim
