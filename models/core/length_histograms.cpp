#include "models/core/length_histograms.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/workload.hpp"

namespace ringsim {

namespace embedded {
extern const char* const document_lengths_json;
}  // namespace embedded

double LengthHistogram::mean() const {
  // A bin's lengths lo .. hi - 1, each equally likely: their mean is (lo + hi - 1) / 2.
  double sum = 0;
  for (const auto& b : bins)
    sum += static_cast<double>(b.documents) * 0.5 * static_cast<double>(b.lo + b.hi - 1);
  return sum / static_cast<double>(total);
}

namespace {

LengthBin parse_bin(const JsonReader& r) {
  LengthBin b;
  const auto max_tokens = static_cast<double>(kMaxTokens);
  b.lo = r.integer("lo", 1, max_tokens);
  b.hi = r.integer("hi", 2, max_tokens + 1);
  b.documents = r.integer("documents", 0, 1e15);
  if (b.hi <= b.lo) throw r.error(fmt::format("'hi' ({}) must be above 'lo' ({})", b.hi, b.lo));
  return b;
}

LengthHistogram parse_histogram(const std::string& origin, const nlohmann::json& j,
                                std::size_t index) {
  const JsonReader r{origin, fmt::format("datasets[{}]", index), j};
  LengthHistogram h;
  h.name = r.str("name");
  const JsonReader named{origin, fmt::format("dataset '{}'", h.name), j};
  h.description = named.str("description");
  h.source = named.str("source");
  h.url = named.str("url");
  h.assumptions = named.str("assumptions");
  const auto& bins = named.at("bins");
  if (!bins.is_array() || bins.empty()) throw named.error("'bins' must be a non-empty array");
  for (std::size_t i = 0; i < bins.size(); ++i) {
    h.bins.push_back(parse_bin({origin, fmt::format("dataset '{}' bins[{}]", h.name, i), bins[i]}));
    if (i > 0 && h.bins[i].lo < h.bins[i - 1].hi)
      throw named.error(
          fmt::format("bins[{}] starts at {}, inside bins[{}]", i, h.bins[i].lo, i - 1));
    h.total += h.bins[i].documents;
  }
  if (h.total <= 0) throw named.error("the bins hold no documents");
  return h;
}

}  // namespace

std::vector<LengthHistogram> parse_length_histograms(const std::string& text,
                                                     const std::string& origin) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw InputError(origin + ": not valid JSON");
  const JsonReader top{origin, "top level", j};
  const auto& list = top.at("datasets");
  if (!list.is_array() || list.empty()) throw top.error("'datasets' must be a non-empty array");
  std::vector<LengthHistogram> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    out.push_back(parse_histogram(origin, list[i], i));
    for (std::size_t k = 0; k + 1 < out.size(); ++k)
      if (out[k].name == out.back().name)
        throw top.error(fmt::format("dataset '{}' appears twice", out.back().name));
  }
  return out;
}

const std::vector<LengthHistogram>& length_histograms() {
  static const auto all =
      parse_length_histograms(embedded::document_lengths_json, "models/data/document_lengths.json");
  return all;
}

const LengthHistogram& find_length_histogram(const std::string& flag, const std::string& name) {
  const auto& all = length_histograms();
  for (const auto& h : all)
    if (h.name == name) return h;
  std::vector<std::string> names;
  for (const auto& h : all) names.push_back(h.name);
  throw InputError(fmt::format("{}: unknown dataset '{}' in 'dataset:{}'; known: {}", flag, name,
                               name, fmt::join(names, ", ")));
}

std::int64_t histogram_length(const LengthHistogram& h, double u_bin, double u_len) {
  // The bin whose cumulative count first exceeds u_bin x total.
  const double target = u_bin * static_cast<double>(h.total);
  std::int64_t seen = 0;
  const LengthBin* bin = &h.bins.back();
  for (const auto& b : h.bins) {
    seen += b.documents;
    if (static_cast<double>(seen) > target) {
      bin = &b;
      break;
    }
  }
  const auto width = bin->hi - bin->lo;
  return bin->lo +
         std::min(width - 1, static_cast<std::int64_t>(u_len * static_cast<double>(width)));
}

}  // namespace ringsim
