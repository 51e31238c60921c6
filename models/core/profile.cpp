#include "models/core/profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "models/core/errors.hpp"
#include "models/core/input_file.hpp"
#include "models/core/parse.hpp"

namespace ringsim {

using nlohmann::json;

double flops_per_entry(int head_dim, bool backward) {
  return 4.0 * head_dim * (backward ? 2.5 : 1.0);
}

double ComputeModel::achieved_flops(std::int64_t block, int head_dim, bool backward,
                                    bool partial_mask) const {
  const auto entries = static_cast<std::uint64_t>(block) * static_cast<std::uint64_t>(block);
  return flops_per_entry(head_dim, backward) * static_cast<double>(entries) /
         seconds(entries, block, head_dim, backward, partial_mask);
}

double ComputeModel::launch_seconds(const std::vector<KernelCall>& calls, int head_dim,
                                    bool backward) const {
  double t = 0;
  for (const auto& c : calls) t += call_seconds(c, head_dim, backward);
  return t;
}

double ComputeModel::call_seconds(const KernelCall& c, int head_dim, bool backward) const {
  const auto parts = split_call(c);
  double t = 0;
  if (const auto e = call_pairs(parts.full); e > 0)
    t += seconds(e, std::max(parts.full.q, parts.full.k), head_dim, backward, false);
  if (const auto e = call_pairs(parts.causal); e > 0)
    t += seconds(e, parts.causal.q, head_dim, backward, true);
  return t;
}

double ComputeModel::nominal_flops(std::int64_t length, int head_dim, bool backward) const {
  // Measured rates are flat far below 2^20 tokens (profiles clamp at their
  // largest block); a square of 2^20 keeps the pair count inside 64 bits.
  const auto L = std::max(std::min(length, std::int64_t{1} << 20), min_block());
  return achieved_flops(L, head_dim, backward, false);
}

double RooflineModel::seconds(std::uint64_t entries, std::int64_t, int head_dim, bool backward,
                              bool) const {
  return static_cast<double>(entries) * flops_per_entry(head_dim, backward) / flops_;
}

nlohmann::json profile_point_json(const ProfilePoint& p, int heads) {
  return {{"kernel", p.kernel},   {"dtype", p.dtype}, {"head_dim", p.head_dim},
          {"block", p.block},     {"mask", p.mask},   {"median_s", p.median_s},
          {"min_s", p.min_s},     {"max_s", p.max_s}, {"repeats", p.repeats},
          {"entries", p.entries}, {"heads", heads}};
}

Profile read_profile(const std::string& path) {
  // 64 MiB: a profile of thousands of points is a few hundred KB.
  return parse_profile(read_input_file("--profile", path, 64u << 20), "--profile " + path);
}

Profile parse_profile(const std::string& text, const std::string& origin) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON (byte {})", origin, e.byte));
  } catch (const json::out_of_range&) {
    // nlohmann reports a number beyond double's range (1e999) this way, not as a parse error.
    throw InputError(
        fmt::format("{}: not valid JSON (a number is beyond the range of a double)", origin));
  }
  auto fail = [&](const std::string& what) { return InputError(origin + ": " + what); };
  auto str = [&](const json& o, const char* k) {
    if (!o.is_object() || !o.contains(k) || !o[k].is_string())
      throw fail(fmt::format("'{}' must be a string", k));
    auto v = o[k].get<std::string>();
    // Printed by ringsim: no line breaks or terminal escapes (as in the catalog).
    if (const auto why = unprintable(k, v); !why.empty()) throw fail(why);
    return v;
  };
  auto num = [&](const json& o, const char* k, double lo, double hi) {
    if (!o.is_object() || !o.contains(k) || !o[k].is_number())
      throw fail(fmt::format("'{}' must be a number", k));
    const double v = o[k].get<double>();
    if (!std::isfinite(v) || v < lo || v > hi)
      throw fail(fmt::format("'{}' must be in [{:g}, {:g}], got {:g}", k, lo, hi, v));
    return v;
  };
  // Sizes and counts: a fraction there is a broken file, not something to round.
  auto count = [&](const json& o, const char* k, double lo, double hi) {
    const double v = num(o, k, lo, hi);
    if (v != std::floor(v)) throw fail(fmt::format("'{}' must be an integer, got {:g}", k, v));
    return v;
  };
  if (!j.is_object()) throw fail("top level must be a JSON object");
  Profile p;
  p.schema = str(j, "schema");
  if (p.schema != "ringsim-profile-1")
    throw fail("'schema' must be \"ringsim-profile-1\", got \"" + p.schema + "\"");
  if (!j.contains("device") || !j["device"].is_object()) throw fail("'device' must be an object");
  p.device_kind = str(j["device"], "kind");
  p.device_name = str(j["device"], "name");
  p.driver = j["device"].contains("driver") && j["device"]["driver"].is_string()
                 ? j["device"]["driver"].get<std::string>()
                 : "";
  p.date = str(j, "date");
  p.kernel_version = str(j, "kernel_version");
  if (!j.contains("points") || !j["points"].is_array() || j["points"].empty())
    throw fail("'points' must be a non-empty array");
  for (const auto& e : j["points"]) {
    ProfilePoint pt;
    pt.kernel = str(e, "kernel");
    if (pt.kernel != "fwd" && pt.kernel != "bwd" && pt.kernel != "merge")
      throw fail("point 'kernel' must be fwd, bwd or merge");
    pt.dtype = str(e, "dtype");
    if (pt.dtype != "fp32" && pt.dtype != "fp64" && pt.dtype != "bf16" && pt.dtype != "fp16")
      throw fail("point 'dtype' must be fp32, fp64, bf16 or fp16, got \"" + pt.dtype + "\"");
    pt.head_dim = static_cast<int>(count(e, "head_dim", 1, 4096));
    pt.block = static_cast<std::int64_t>(count(e, "block", 1, 1 << 24));
    pt.mask = str(e, "mask");
    if (pt.mask != "full" && pt.mask != "causal_diagonal")
      throw fail("point 'mask' must be full or causal_diagonal");
    if (pt.kernel == "merge" && pt.mask != "full")
      throw fail("a merge point's 'mask' must be full");
    pt.median_s = num(e, "median_s", 1e-12, 1e6);
    pt.min_s = num(e, "min_s", 0, 1e6);
    pt.max_s = num(e, "max_s", 0, 1e6);
    if (pt.min_s > pt.median_s || pt.median_s > pt.max_s)
      throw fail("point needs min_s <= median_s <= max_s");
    pt.repeats = static_cast<int>(count(e, "repeats", 1, 1e6));
    pt.entries = static_cast<std::uint64_t>(count(e, "entries", 1, 1e18));
    // The entries a call covers follow from its block and heads (a full block
    // x block x heads; the diagonal block's lower triangle; a merge's rows):
    // any other count would scale every predicted step by the mismatch.
    {
      const double b = static_cast<double>(pt.block);
      const bool has_heads = e.is_object() && e.contains("heads");
      const double h = has_heads ? count(e, "heads", 1, 4096) : 0;
      const double per_head = pt.kernel == "merge"           ? b
                              : pt.mask == "causal_diagonal" ? b * (b + 1) / 2
                                                             : b * b;
      const double want = per_head * h;
      if (has_heads && static_cast<double>(pt.entries) != want)
        throw fail(fmt::format("a {} {} point of block {} and {} heads covers {:g} entries, got {}",
                               pt.kernel, pt.mask, pt.block, h, want, pt.entries));
      if (!has_heads && static_cast<double>(pt.entries) > per_head * 4096)
        throw fail(
            fmt::format("a {} {} point of block {} covers at most {:g} entries (4096 heads), "
                        "got {}",
                        pt.kernel, pt.mask, pt.block, per_head * 4096, pt.entries));
    }
    p.points.push_back(pt);
  }
  return p;
}

ProfileModel::ProfileModel(Profile p, const std::string& dtype, const std::string& origin,
                           const std::string& choose)
    : profile_(std::move(p)), origin_(origin) {
  std::set<std::string> dtypes;
  for (const auto& pt : profile_.points) {
    dtypes.insert(pt.dtype);
    if (pt.dtype != dtype) continue;
    curves_[{pt.kernel, pt.head_dim, pt.mask}].emplace_back(
        pt.block, pt.median_s / static_cast<double>(pt.entries));
  }
  if (curves_.empty())
    throw InputError(fmt::format("{}: has no {} points (it has: {}); {}", origin, dtype,
                                 join({dtypes.begin(), dtypes.end()}, ", "), choose));
  for (auto& [k, v] : curves_) {
    std::sort(v.begin(), v.end());
    // Duplicate sizes: keep the first after sorting (deterministic).
    v.erase(std::unique(v.begin(), v.end(), [](auto& a, auto& b) { return a.first == b.first; }),
            v.end());
  }
}

std::int64_t ProfileModel::min_block() const {
  std::int64_t m = INT64_MAX;
  for (const auto& [k, v] : curves_)
    if (std::get<0>(k) != "merge") m = std::min(m, v.front().first);
  return m;
}
std::int64_t ProfileModel::max_block() const {
  std::int64_t m = 0;
  for (const auto& [k, v] : curves_)
    if (std::get<0>(k) != "merge") m = std::max(m, v.back().first);
  return m;
}

// Rule outside the measured range (stated in models/profiles/README.md):
// below the smallest block -> error (small blocks run far below peak, and no
// extrapolation of that drop is safe); above the largest -> the largest
// block's per-entry time (kernels reach their steady rate at large blocks).
double ProfileModel::per_entry(const Key& key, std::int64_t block) const {
  auto it = curves_.find(key);
  if (it == curves_.end()) {
    // A causal-diagonal curve may be missing: fall back to the full-block one
    // only if the profile has no diagonal points at all for this kernel.
    if (std::get<2>(key) == "causal_diagonal") {
      Key full{std::get<0>(key), std::get<1>(key), "full"};
      bool any_diag = false;
      for (const auto& [k, v] : curves_)
        if (std::get<0>(k) == std::get<0>(key) && std::get<2>(k) == "causal_diagonal")
          any_diag = true;
      if (!any_diag && curves_.count(full)) return per_entry(full, block);
    }
    // Name what the profile has, so the fix (another head dim, unmasked
    // calls) is in the message.
    std::vector<std::string> has;
    for (const auto& [k, v] : curves_)
      if (std::get<0>(k) != "merge")
        has.push_back(fmt::format("{} d {} {}", std::get<0>(k), std::get<1>(k), std::get<2>(k)));
    const bool full = std::get<2>(key) == "full";
    throw InputError(fmt::format(
        "{}: no {} points for head dim {} with mask {} (it has: {}){}", origin_, std::get<0>(key),
        std::get<1>(key), std::get<2>(key), join(has, ", "),
        full ? "; a ring's off-diagonal steps and the ideal time need unmasked (full) calls: "
               "measure some with is_causal=False"
             : ""));
  }
  const auto& v = it->second;
  if (block < v.front().first)
    throw InputError(fmt::format(
        "{}: block {} is below the smallest measured block {} (no extrapolation below the profile)",
        origin_, block, v.front().first));
  if (block >= v.back().first) return v.back().second;
  auto hi = std::lower_bound(v.begin(), v.end(), std::make_pair(block, 0.0),
                             [](auto& a, auto& b) { return a.first < b.first; });
  if (hi->first == block) return hi->second;
  auto lo = hi - 1;
  const double t =
      (std::log(static_cast<double>(block)) - std::log(static_cast<double>(lo->first))) /
      (std::log(static_cast<double>(hi->first)) - std::log(static_cast<double>(lo->first)));
  return lo->second + t * (hi->second - lo->second);
}

double ProfileModel::seconds(std::uint64_t entries, std::int64_t block, int head_dim, bool backward,
                             bool partial_mask) const {
  if (entries == 0) return 0;
  const Key key{backward ? "bwd" : "fwd", head_dim, partial_mask ? "causal_diagonal" : "full"};
  return static_cast<double>(entries) * per_entry(key, block);
}

bool ProfileModel::has_merge() const {
  for (const auto& [k, v] : curves_)
    if (std::get<0>(k) == "merge") return true;
  return false;
}

// Per row, by the same interpolation and range rule as the kernels. A profile
// written before merge points existed has none: then 0, as the roofline.
double ProfileModel::merge_seconds(std::uint64_t rows, std::int64_t block, int head_dim) const {
  if (rows == 0 || !has_merge()) return 0;
  return static_cast<double>(rows) * per_entry({"merge", head_dim, "full"}, block);
}

}  // namespace ringsim
