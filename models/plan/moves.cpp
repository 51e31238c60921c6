#include "models/plan/moves.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/core/suggest.hpp"
#include "models/plan/framework.hpp"

namespace ringsim {

bool FrameworkMoves::moved(const std::string& field) const {
  return std::any_of(keys.begin(), keys.end(), [&](const std::string& k) {
    return k.size() > field.size() &&
           k.compare(k.size() - field.size(), field.size(), field) == 0 &&
           k[k.size() - field.size() - 1] == '.';
  });
}

const std::vector<std::pair<std::string, std::string>>& framework_fields() {
  static const std::vector<std::pair<std::string, std::string>> f{
      {"dispatch_s", "host seconds to issue one kernel"},
      {"gap_s", "device seconds between two dependent kernels"},
      {"kernels_fwd", "kernels one layer issues in the forward pass"},
      {"kernels_bwd", "kernels one layer issues in the backward pass"},
      {"layouts", "the CP layouts it implements, as ring+zigzag (or ring;zigzag)"},
      {"calibration", "the framework-level factor on the step time (1: first principles)"},
      {"allocator_reserve", "the caching allocator's reserve, a fraction of the tensors' peak"}};
  return f;
}

namespace {

std::vector<Layout> layouts_of(const std::string& flag, const std::string& text) {
  std::vector<Layout> v;
  for (std::size_t at = 0; at <= text.size();) {
    const auto end = std::min(text.find_first_of("+;,", at), text.size());
    const auto l = parse_layout(flag, text.substr(at, end - at));
    if (std::find(v.begin(), v.end(), l) == v.end()) v.push_back(l);
    at = end + 1;
  }
  return v;
}

void apply(FrameworkMoves& m, const std::string& field, const std::string& flag,
           const std::string& v) {
  if (field == "dispatch_s") m.dispatch_s = parse_real(flag, v, 0, 1e-2);
  if (field == "gap_s") m.gap_s = parse_real(flag, v, 0, 1e-3);
  if (field == "calibration") m.calibration = parse_real(flag, v, 0.1, 10);
  if (field == "allocator_reserve") m.allocator_reserve = parse_real(flag, v, 0, 1);
  if (field == "kernels_fwd") m.kernels_fwd = static_cast<int>(parse_count(flag, v, 1, 100000));
  if (field == "kernels_bwd") m.kernels_bwd = static_cast<int>(parse_count(flag, v, 1, 100000));
  if (field == "layouts") m.layouts = layouts_of(flag, v);
}

}  // namespace

FrameworkMoves parse_framework_moves(const std::vector<std::pair<std::string, std::string>>& sets,
                                     Framework f) {
  FrameworkMoves m;
  for (const auto& [key, value] : sets) {
    if (key.rfind("frameworks.", 0) != 0) continue;
    const auto flag = "--set " + key;
    const auto dot = key.find('.', 11);
    const auto name = key.substr(11, dot == std::string::npos ? std::string::npos : dot - 11);
    const auto& names = framework_names();
    if (std::find(names.begin(), names.end(), name) == names.end() || dot == std::string::npos)
      throw InputError(fmt::format("{}: a key is frameworks.NAME.FIELD, NAME one of: {}", flag,
                                   join(names, ", ")));
    if (name != to_string(f))
      throw InputError(fmt::format(
          "{}: the plan's framework is {} (--framework); move its keys (frameworks.{}.FIELD)", flag,
          to_string(f), to_string(f)));
    const auto field = key.substr(dot + 1);
    std::vector<std::string> fields;
    for (const auto& [n, _] : framework_fields()) fields.push_back(n);
    if (std::find(fields.begin(), fields.end(), field) == fields.end())
      throw InputError(fmt::format("{}: no field '{}';{} fields: {}", flag, field,
                                   did_you_mean(field, fields), join(fields, ", ")));
    apply(m, field, flag, value);
    m.keys.push_back(key);
  }
  return m;
}

}  // namespace ringsim
