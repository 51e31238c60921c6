#include "models/plan/uncertainty.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "models/plan/report.hpp"

namespace ringsim {

double UncertaintyRow::swing() const {
  return std::abs(step_time_s_high - step_time_s_low);
}

Hardware with_assumption(const Hardware& hw, const Assumption& a, double v) {
  Hardware h = hw;
  if (a.field == "gemm_efficiency") {
    h.gemm_efficiency = v;
  } else if (a.field == "attention_efficiency") {
    h.efficiency = v;
  } else if (a.field == "latency") {
    if (h.intra_name == a.owner) h.intra_lat = v;
    if (h.inter_name == a.owner) h.inter_lat = v;
  } else {
    throw std::logic_error("with_assumption: no hardware field for '" + a.field + "'");
  }
  return h;
}

std::vector<UncertaintyRow> step_time_uncertainty(const PlanRequest& r, const Hardware& hw,
                                                  const PlanConfig& c,
                                                  const std::vector<Assumption>& assumptions,
                                                  const ImplementationFor& implementation) {
  if (!c.feasible) throw std::logic_error("step_time_uncertainty: " + c.label() + " is infeasible");
  auto step_at = [&](const Assumption& a, double v) {
    const auto h = with_assumption(hw, a, v);
    const auto cm = implementation(h);
    // The same shape (layout, cp, tp, micro-batch, pipeline) on the varied hardware.
    const auto e = evaluate(r, h, *cm, c, std::nullopt);
    return e.feasible ? e.time.step_time_s : std::numeric_limits<double>::quiet_NaN();
  };
  std::vector<UncertaintyRow> rows;
  for (const auto& a : assumptions)
    rows.push_back({a, c.time.step_time_s, step_at(a, a.low), step_at(a, a.high)});
  // NaN swings (a bound that no longer fits) sort last.
  std::stable_sort(rows.begin(), rows.end(), [](const UncertaintyRow& x, const UncertaintyRow& y) {
    const double a = x.swing(), b = y.swing();
    if (std::isnan(a) || std::isnan(b)) return !std::isnan(a) && std::isnan(b);
    return a > b;
  });
  return rows;
}

namespace {
nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}
// 2e-06 -> "2.0 us"; 0.6 -> "0.6"
std::string value_text(const Assumption& a, double v) {
  return a.field == "latency" ? fmt::format("{:.1f} us", v * 1e6) : fmt::format("{:g}", v);
}
std::string step_text(double s) {
  return std::isfinite(s) ? seconds(s) : std::string("infeasible");
}
}  // namespace

nlohmann::json uncertainty_json(const std::vector<UncertaintyRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& x : rows) {
    const auto& a = x.assumption;
    out.push_back({{"assumption", a.what},
                   {"field", a.field},
                   {"value", a.value},
                   {"low", a.low},
                   {"high", a.high},
                   {"step_time_s_low", number_or_null(x.step_time_s_low)},
                   {"step_time_s_high", number_or_null(x.step_time_s_high)},
                   {"source", a.source},
                   {"range_source", a.range_source}});
  }
  return out;
}

std::string uncertainty_text(const PlanConfig& c, const std::vector<UncertaintyRow>& rows) {
  std::string out = fmt::format(
      "\nUncertainty: which assumption moves the step time most ({}, step {}; each catalog "
      "assumption at its low and its high, one at a time)\n",
      c.label(), seconds(c.time.step_time_s));
  if (rows.empty()) return out + "  no catalog assumption applies\n";
  out += fmt::format("  {:<34}{:>18}{:>14}{:>14}{:>20}\n", "assumption (value)", "range",
                     "step at low", "step at high", "swing");
  for (const auto& x : rows) {
    const auto& a = x.assumption;
    const double swing = x.swing();
    out += fmt::format("  {:<34}{:>18}{:>14}{:>14}{:>20}\n",
                       fmt::format("{} ({})", a.what, value_text(a, a.value)),
                       fmt::format("{} .. {}", value_text(a, a.low), value_text(a, a.high)),
                       step_text(x.step_time_s_low), step_text(x.step_time_s_high),
                       std::isfinite(swing) ? fmt::format("{} ({:.2f}%)", seconds(swing),
                                                          100 * swing / x.step_time_s)
                                            : "n/a");
  }
  out +=
      "  (ranges and their reasons: the catalog's \"<field>_range\" keys; `ringsim plan --json` "
      "gives each source)\n";
  return out;
}

}  // namespace ringsim
