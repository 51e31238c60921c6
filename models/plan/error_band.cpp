#include "models/plan/error_band.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "models/plan/validation.hpp"

namespace ringsim {

namespace embedded {
extern const char* const error_bands_json;
}

bool ErrorBand::validated() const {
  return cases >= kMinBandCases;
}

std::string band_percent(double fraction) {
  return fmt::format("{:.0f}%", std::ceil(100 * std::abs(fraction) - 1e-9));
}

std::string ErrorBand::text() const {
  if (!validated())
    return fmt::format("unvalidated ({} validated case{} of {}; {} needed for a band)", cases,
                       cases == 1 ? "" : "s", klass, kMinBandCases);
  const std::string range = std::abs(low + high) < 1e-12
                                ? "+-" + band_percent(high)
                                : fmt::format("-{} to +{}", band_percent(low), band_percent(high));
  if (!source.empty())
    return fmt::format("{} ({:.0f}% of {} of your runs in {}, {})", range, 100 * coverage, cases,
                       source, klass);
  return fmt::format("{} ({:.0f}% of {} validated cases of {})", range, 100 * coverage, cases,
                     klass);
}

nlohmann::json ErrorBand::to_json() const {
  const bool ok = validated();
  return {{"class", klass},
          {"low", ok ? nlohmann::json(low) : nlohmann::json(nullptr)},
          {"high", ok ? nlohmann::json(high) : nlohmann::json(nullptr)},
          {"coverage", coverage},
          {"cases", cases},
          {"text", text()},
          {"source", source.empty() ? nlohmann::json(nullptr) : nlohmann::json(source)}};
}

std::string band_class(const std::string& kind, const std::string& family,
                       const std::string& regime) {
  return kind + "/" + family + "/" + regime;
}

std::string training_regime(std::int64_t context) {
  return context >= kLongContextTokens ? "training-long" : "training-short";
}

double time_residual(const std::string& metric, double error) {
  if (metric_is_time(metric) || metric_is_ratio(metric)) return error;
  return 1 / (1 + error) - 1;  // throughput: time = work / rate
}

ErrorBand compute_band(const std::string& klass, const std::vector<double>& residuals,
                       const std::vector<std::string>& ids, double coverage) {
  ErrorBand b;
  b.klass = klass;
  b.coverage = coverage;
  b.cases = static_cast<int>(residuals.size());
  b.ids = ids;
  if (residuals.empty()) return b;
  std::vector<double> a;
  for (double r : residuals) a.push_back(std::abs(r));
  std::sort(a.begin(), a.end());
  // The smallest |r| that at least `coverage` of the cases lie within.
  const auto k = static_cast<std::size_t>(std::ceil(coverage * static_cast<double>(a.size())));
  const double q = a[std::max<std::size_t>(k, 1) - 1];
  // Rounded up to 0.1% (the table is data a reader compares by eye): rounding
  // to nearest could leave the k-th case just outside the band it sets.
  const double r = std::ceil(q * 1000 - 1e-9) / 1000;
  b.low = -r;
  b.high = r;
  return b;
}

std::vector<ErrorBand> bands_of(const std::vector<ValidationRow>& rows) {
  std::map<std::string, std::pair<std::vector<double>, std::vector<std::string>>> by;
  for (const auto& r : rows) {
    if (r.klass.empty() || !r.refused.empty() || !(r.loo > 0)) continue;
    auto& b = by[r.klass];
    b.first.push_back(time_residual(r.c->metric, r.loo_error()));
    b.second.push_back(r.c->id);
    if (r.group.empty()) continue;  // no factor: first principles are the prediction
    auto& n = by[r.klass + " (calibration none)"];
    n.first.push_back(time_residual(r.c->metric, r.first_principles / r.c->published - 1));
    n.second.push_back(r.c->id);
  }
  std::vector<ErrorBand> out;
  for (const auto& [k, v] : by) out.push_back(compute_band(k, v.first, v.second));
  return out;
}

std::string error_bands_json_text(const std::vector<ErrorBand>& bands) {
  nlohmann::json j;
  j["schema"] = "ringsim-error-bands-1";
  j["procedure"] =
      "ringsim validate --error-bands FILE: every step, throughput, TTFT, decode and speedup "
      "case of models/data/validation.json, grouped by the class its command prints "
      "(error_band.class); each case's leave-one-out error (the calibration refitted without "
      "it; the plain error where no factor applies) as a step-time error; the band is the "
      "smallest symmetric interval holding 80% of them (docs/validation.md, 'Error bands')";
  j["coverage"] = kBandCoverage;
  j["min_cases"] = kMinBandCases;
  j["bands"] = nlohmann::json::array();
  for (const auto& b : bands)
    j["bands"].push_back(
        {{"class", b.klass}, {"cases", b.cases}, {"low", b.low}, {"high", b.high}, {"ids", b.ids}});
  return j.dump(1) + "\n";
}

std::vector<ErrorBand> parse_error_bands(const std::string& text, const std::string& origin) {
  const auto j = parse_json_text(text, origin);
  JsonReader top{origin, "top level", j};
  if (top.str("schema") != "ringsim-error-bands-1")
    throw top.error("'schema' must be ringsim-error-bands-1");
  const double coverage = top.num("coverage", 0.01, 1);
  std::vector<ErrorBand> out;
  std::size_t i = 0;
  for (const auto& e : top.array("bands")) {
    auto b = read_band(JsonReader{origin, fmt::format("bands[{}]", i++), e}, 0);
    b.coverage = coverage;
    out.push_back(std::move(b));
  }
  return out;
}

ErrorBand read_band(const JsonReader& r, int min_cases) {
  ErrorBand b;
  b.klass = r.str("class");
  b.cases = static_cast<int>(r.integer("cases", min_cases, 1e6));
  b.low = r.num("low", -10, 0);
  b.high = r.num("high", 0, 10);
  for (const auto& id : r.array("ids")) {
    if (!id.is_string()) throw r.error("'ids' must hold the ids of its cases");
    b.ids.push_back(id.get<std::string>());
  }
  return b;
}

const std::vector<ErrorBand>& embedded_error_bands() {
  static const auto bands =
      parse_error_bands(embedded::error_bands_json, "models/data/error_bands.json");
  return bands;
}

ErrorBand find_band(const std::string& klass) {
  for (const auto& b : embedded_error_bands())
    if (b.klass == klass) return b;
  ErrorBand none;
  none.klass = klass;
  return none;
}

}  // namespace ringsim
