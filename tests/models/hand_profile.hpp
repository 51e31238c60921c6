#pragma once
// A hand-made kernel profile with round per-entry rates, so tests can work out
// step times on paper: fwd "full" and "causal_diagonal" at blocks 2048 and
// 4096, and "merge" points (per row), all bf16, head dim 128.
#include <fmt/format.h>

#include <string>

#include "models/core/profile.hpp"

namespace ringsim::testing {

struct HandRates {
  double full2048 = 2e-12, full4096 = 1e-12;  // seconds per score entry
  double diag2048 = 4e-12, diag4096 = 3e-12;
  double merge_row = 1e-9;  // seconds per merged row (block x heads)
};

inline std::string hand_profile_json(const HandRates& r, bool with_merge = true) {
  std::string pts;
  auto add = [&](const char* kernel, const char* mask, std::int64_t block, double per,
                 std::uint64_t entries) {
    const double t = per * static_cast<double>(entries);
    pts += fmt::format(
        R"({}{{"kernel": "{}", "dtype": "bf16", "head_dim": 128, "block": {}, "mask": "{}", )"
        R"("median_s": {:.17g}, "min_s": {:.17g}, "max_s": {:.17g}, "repeats": 3, "entries": {}}})",
        pts.empty() ? "" : ", ", kernel, block, mask, t, t, t, entries);
  };
  for (std::int64_t c : {2048, 4096}) {
    const auto cc = static_cast<std::uint64_t>(c);
    add("fwd", "full", c, c == 2048 ? r.full2048 : r.full4096, cc * cc);
    add("fwd", "causal_diagonal", c, c == 2048 ? r.diag2048 : r.diag4096, cc * (cc + 1) / 2);
    if (with_merge) add("merge", "full", c, r.merge_row, cc);
  }
  return R"({"schema": "ringsim-profile-1", "device": {"kind": "cpu", "name": "hand"}, )"
         R"("date": "2026-11-29", "kernel_version": "test", "points": [)" +
         pts + "]}";
}

inline ProfileModel hand_profile(const HandRates& r = {}, bool with_merge = true) {
  return ProfileModel(parse_profile(hand_profile_json(r, with_merge), "hand"), "bf16", "hand");
}

}  // namespace ringsim::testing
