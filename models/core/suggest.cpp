#include "models/core/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace ringsim {

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

int edit_distance(const std::string& a0, const std::string& b0) {
  const auto a = lower(a0), b = lower(b0);
  const std::size_t n = a.size(), m = b.size();
  // d[i][j]: edits between a's first i and b's first j characters.
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1, 0));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string closest_choice(const std::string& word, const std::vector<std::string>& choices) {
  if (word.empty()) return "";
  const auto w = lower(word);
  // The start of a longer name: the one name it starts, or the shortest of
  // several when the others extend it (h100 -> h100-sxm, not h100-sxm-96gb).
  std::vector<std::string> starts;
  for (const auto& c : choices)
    if (w.size() >= 2 && c.size() > w.size() && lower(c).compare(0, w.size(), w) == 0)
      starts.push_back(c);
  if (!starts.empty()) {
    const auto shortest =
        *std::min_element(starts.begin(), starts.end(),
                          [](const auto& a, const auto& b) { return a.size() < b.size(); });
    const bool extended = std::all_of(starts.begin(), starts.end(), [&](const std::string& c) {
      return c.compare(0, shortest.size(), shortest) == 0;
    });
    if (extended) return shortest;
  }
  std::string best;
  int best_d = 3;  // at most 2 edits
  for (const auto& c : choices) {
    const int e = edit_distance(word, c);
    if (e < best_d && 2 * e < static_cast<int>(word.size())) {
      best_d = e;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& choices) {
  const auto c = closest_choice(word, choices);
  return c.empty() ? "" : " did you mean '" + c + "'?";
}

}  // namespace ringsim
