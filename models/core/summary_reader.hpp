#pragma once
// Typed access to the keys of a JSON document another ringsim process wrote
// (a run's --json summary, ringsim-mpi's results): a missing key or a value
// of the wrong type becomes one InputError line naming where the document came
// from and the key. Data files (the catalog, kernels) use json_reader.hpp,
// which also checks ranges and names the entry.
#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/core/errors.hpp"

namespace ringsim {

class SummaryReader {
 public:
  using json = nlohmann::json;
  // `subject` names the document in messages: "the summary", "the JSON".
  SummaryReader(const json& j, std::string origin, std::string subject = "the summary")
      : j_(j), origin_(std::move(origin)), subject_(std::move(subject)) {
    if (!j_.is_object())
      throw InputError(fmt::format("{}: {} is not a JSON object", origin_, subject_));
  }
  const json& at(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end()) throw InputError(fmt::format("{}: {} has no '{}'", origin_, subject_, key));
    return *it;
  }
  [[noreturn]] void wrong(const char* key, const char* what) const {
    throw InputError(fmt::format("{}: {}'s '{}' is not {}", origin_, subject_, key, what));
  }
  double real(const char* key) const {
    const auto& v = at(key);
    if (!v.is_number()) wrong(key, "a number");
    return v.get<double>();
  }
  std::int64_t integer(const char* key) const {
    const auto& v = at(key);
    if (!v.is_number_integer()) wrong(key, "an integer");
    return v.get<std::int64_t>();
  }
  std::uint64_t count(const char* key) const {
    const auto& v = at(key);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
      wrong(key, "a non-negative integer");
    return v.get<std::uint64_t>();
  }
  std::string text(const char* key) const {
    const auto& v = at(key);
    if (!v.is_string()) wrong(key, "a string");
    return v.get<std::string>();
  }
  bool flag(const char* key) const {
    const auto& v = at(key);
    if (!v.is_boolean()) wrong(key, "true or false");
    return v.get<bool>();
  }
  const json& array(const char* key) const {
    const auto& v = at(key);
    if (!v.is_array()) wrong(key, "an array");
    return v;
  }
  // Present only for some runs: absent or null is nullopt.
  std::optional<std::int64_t> opt_integer(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return std::nullopt;
    return integer(key);
  }
  std::vector<std::int64_t> integers(const json& v, const char* key) const {
    if (!v.is_array()) wrong(key, "an array");
    std::vector<std::int64_t> out;
    for (const auto& x : v) {
      if (!x.is_number_integer()) wrong(key, "an array of integers");
      out.push_back(x.get<std::int64_t>());
    }
    return out;
  }
  const json& j() const { return j_; }

 private:
  const json& j_;
  std::string origin_, subject_;
};

}  // namespace ringsim
