#pragma once
// The data files embedded in ringsim at build time (models/data/, the shipped
// profiles), as text: what a result computed from the built-in catalog
// depends on besides the code, so a sweep journal can tell two builds' rows
// apart even when their version number is the same.
#include <string_view>
#include <vector>

namespace ringsim {

std::vector<std::string_view> builtin_data();

}  // namespace ringsim
