#include "experiments/markdown.hpp"

#include <fmt/format.h>

#include <cmath>

namespace ringsim::exp {

std::string MdTable::str() const {
  auto line = [](const std::vector<std::string>& cells) {
    std::string s = "|";
    for (const auto& c : cells) s += " " + c + " |";
    return s + "\n";
  };
  std::string out = line(header_);
  out += "|";
  for (std::size_t i = 0; i < header_.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& r : rows_) out += line(r);
  return out;
}

double rel_diff_value(double ours, double published) {
  return (ours - published) / published;
}

std::string rel_diff(double ours, double published) {
  if (!(published != 0) || !std::isfinite(published)) return "";
  return fmt::format("{:+.1f}%", 100 * rel_diff_value(ours, published));
}

std::string sig(double v, int digits) {
  if (v == 0 || !std::isfinite(v)) return fmt::format("{}", v);
  const int mag = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  if (mag >= 6 || mag < -4) return fmt::format("{:.{}e}", v, std::max(0, digits - 1));
  const int decimals = std::max(0, digits - 1 - mag);
  return fmt::format("{:.{}f}", v, decimals);
}

std::string tokens_k(std::int64_t tokens) {
  constexpr std::int64_t K = 1024, M = K * K, G = M * K;
  if (tokens >= G && tokens % (G / 8) == 0)
    return fmt::format("{:g}G", static_cast<double>(tokens) / G);
  if (tokens >= M && tokens % (M / 8) == 0)
    return fmt::format("{:g}M", static_cast<double>(tokens) / M);
  if (tokens >= K && tokens % K == 0) return fmt::format("{}K", tokens / K);
  return std::to_string(tokens);
}

}  // namespace ringsim::exp
