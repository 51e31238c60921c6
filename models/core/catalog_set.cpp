// --set SECTION.NAME.FIELD=VALUE: one catalog field moved from the command
// line (docs/models.md, "Moving an assumption").
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "models/core/catalog.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/core/suggest.hpp"

namespace ringsim {

using nlohmann::json;

namespace {

// Optional fields a --set may add where the entry does not spell them out
// (each has a default the catalog reader documents).
const std::vector<std::string>& optional_fields(const std::string& section) {
  static const std::map<std::string, std::vector<std::string>> f{
      {"devices",
       {"gemm_efficiency", "fp8_gemm_efficiency", "hbm_efficiency", "default_power_w",
        "context_bytes", "blas_workspace_bytes", "hbm_driver_reserved_bytes"}},
      {"interconnects", {"p2p_efficiency", "collective_efficiency"}},
      {"clusters", {"nics_per_node", "oversubscription", "nvlink_domain", "wraparound"}},
      {"kernels", {"rate_scale"}},
      {"comm_libraries", {}}};
  return f.at(section);
}

std::vector<std::string> split_dots(const std::string& key) {
  std::vector<std::string> parts;
  std::size_t a = 0;
  for (std::size_t b; (b = key.find('.', a)) != std::string::npos; a = b + 1)
    parts.push_back(key.substr(a, b - a));
  parts.push_back(key.substr(a));
  return parts;
}

// The element of an array that `part` names: its "name" field, else an index.
json& element(json& a, const std::string& part, const std::string& flag) {
  std::vector<std::string> names;
  for (auto& x : a)
    if (x.is_object() && x.contains("name") && x["name"].is_string()) {
      if (x["name"] == part) return x;
      names.push_back(x["name"].get<std::string>());
    }
  if (!part.empty() && part.find_first_not_of("0123456789") == std::string::npos &&
      part.size() < 7 && std::stoul(part) < a.size())
    return a[std::stoul(part)];
  throw InputError(fmt::format("{}: no element '{}' in a list of {};{} name one{}", flag, part,
                               a.size(), did_you_mean(part, names),
                               names.empty() ? " by index" : ": " + join(names, ", ")));
}

// The value as JSON (a number, true/false, a list), else as a string; it
// must keep the kind of value it replaces.
json value_of(const std::string& text, const json& old, const std::string& flag) {
  json v;
  try {
    v = json::parse(text);
  } catch (const json::exception&) {
    v = text;
  }
  if (old.is_number() && !v.is_number())
    throw InputError(fmt::format("{}: expected a number (1.5e-6, 0.7), got '{}'", flag, text));
  if (old.is_boolean() && !v.is_boolean())
    throw InputError(fmt::format("{}: expected true or false, got '{}'", flag, text));
  if (old.is_string() && !v.is_string()) v = text;
  return v;
}

}  // namespace

bool Catalog::moved(const std::string& key) const {
  return std::find(moved_.begin(), moved_.end(), key) != moved_.end();
}

void Catalog::set(const std::string& key, const std::string& value) {
  const auto flag = "--set " + key;
  const auto parts = split_dots(key);
  const auto& sections = catalog_sections();
  if (parts.size() < 3 || std::find(sections.begin(), sections.end(), parts[0]) == sections.end())
    throw InputError(fmt::format(
        "{}: a key is SECTION.NAME.FIELD (as devices.h100-sxm.gemm_efficiency);{} sections: {}",
        flag, did_you_mean(parts[0], sections), join(sections, ", ")));
  const auto& section = parts[0];
  const auto raw = raw_.find(section + "/" + parts[1]);
  if (raw == raw_.end()) {
    std::vector<std::string> names;
    for (const auto& [k, _] : raw_)
      if (k.rfind(section + "/", 0) == 0) names.push_back(k.substr(section.size() + 1));
    throw InputError(fmt::format("{}: no {} entry '{}';{} choose one of: {}", flag, section,
                                 parts[1], did_you_mean(parts[1], names), join(names, ", ")));
  }
  if (parts.size() == 3 && parts[2] == "name")
    throw InputError(fmt::format(
        "{}: an entry's name is how it is found; add a renamed copy in a --catalog file", flag));
  json entry = json::parse(raw->second);
  json* at = &entry;
  for (std::size_t i = 2; i < parts.size(); ++i) {
    const auto& p = parts[i];
    const bool last = i + 1 == parts.size();
    if (at->is_array()) {
      at = &element(*at, p, flag);
    } else if (at->is_object()) {
      const auto& opt = optional_fields(section);
      if (!at->contains(p) &&
          !(last && i == 2 && std::find(opt.begin(), opt.end(), p) != opt.end())) {
        std::vector<std::string> keys;
        for (const auto& [k, _] : at->items()) keys.push_back(k);
        if (i == 2)
          for (const auto& o : opt)
            if (std::find(keys.begin(), keys.end(), o) == keys.end()) keys.push_back(o);
        throw InputError(fmt::format("{}: no field '{}' here;{} fields: {}", flag, p,
                                     did_you_mean(p, keys), join(keys, ", ")));
      }
      if (last) {
        const json old = at->contains(p) ? (*at)[p] : json(1.0);
        (*at)[p] = value_of(value, old, flag);
        at->erase(p + "_range");  // the user's value, not an assumption in a range
        at->erase(p + "_range_source");
        break;
      }
      at = &(*at)[p];
    } else {
      throw InputError(fmt::format("{}: '{}' is a value; the key ends before it", flag, p));
    }
    if (last) *at = value_of(value, *at, flag);
  }
  merge_json_text(json{{section, json::array({entry})}}.dump(), flag);
  if (!moved(key)) moved_.push_back(key);
}

}  // namespace ringsim
