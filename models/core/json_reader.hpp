#pragma once
// Typed access to one entry of a JSON data file (the catalog, its kernels):
// any schema problem becomes one line naming the file, the entry and the key.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "models/core/errors.hpp"

namespace ringsim {

// A data file's text as JSON, or one line naming `origin` (the project's own
// tables: calibration, error bands, validation).
inline nlohmann::json parse_json_text(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw InputError(fmt::format("{}: not valid JSON", origin));
  }
}

struct JsonReader {
  const std::string& origin;
  std::string where;
  const nlohmann::json& j;

  InputError error(const std::string& what) const {
    return InputError(fmt::format("{}: {}: {}", origin, where, what));
  }
  bool has(const char* key) const { return j.is_object() && j.contains(key); }
  const nlohmann::json& at(const char* key) const {
    if (!has(key)) throw error(fmt::format("missing key '{}'", key));
    return j.at(key);
  }
  // Names and notes are printed: text must be printable (unprintable()).
  std::string str(const char* key) const {
    const auto& v = at(key);
    if (!v.is_string() || v.get<std::string>().empty())
      throw error(fmt::format("'{}' must be a non-empty string", key));
    auto s = v.get<std::string>();
    if (const auto why = unprintable(key, s); !why.empty()) throw error(why);
    return s;
  }
  std::string str_or(const char* key, const std::string& dflt) const {
    return has(key) ? str(key) : dflt;
  }
  double num(const char* key, double lo, double hi) const { return number(at(key), key, lo, hi); }
  double num_or(const char* key, double lo, double hi, double dflt) const {
    return has(key) ? num(key, lo, hi) : dflt;
  }
  // 0 (none) or a number in [lo, hi]: a peak of 1e-300 FLOP/s is no device.
  double zero_or_num(const char* key, double lo, double hi) const {
    const auto& v = at(key);
    if (!v.is_number()) throw error(fmt::format("'{}' must be a number", key));
    const double x = v.get<double>();
    if (x != 0 && !(std::isfinite(x) && x >= lo && x <= hi))
      throw error(
          fmt::format("'{}' must be 0 (none) or in [{:g}, {:g}], got {:g}", key, lo, hi, x));
    return x;
  }
  // An integer in [lo, hi]: a fraction there is a broken file, not something to round.
  long long integer(const char* key, double lo, double hi) const {
    const double v = num(key, lo, hi);
    if (v != std::floor(v)) throw error(fmt::format("'{}' must be an integer, got {:g}", key, v));
    return static_cast<long long>(v);
  }
  double number(const nlohmann::json& v, const std::string& key, double lo, double hi) const {
    if (!v.is_number()) throw error(fmt::format("'{}' must be a number", key));
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < lo || x > hi)
      throw error(fmt::format("'{}' must be in [{:g}, {:g}], got {:g}", key, lo, hi, x));
    return x;
  }
  const nlohmann::json& array(const char* key) const {
    const auto& v = at(key);
    if (!v.is_array()) throw error(fmt::format("'{}' must be an array", key));
    return v;
  }
  const nlohmann::json& object(const char* key) const {
    const auto& v = at(key);
    if (!v.is_object()) throw error(fmt::format("'{}' must be an object", key));
    return v;
  }
};

}  // namespace ringsim
