#include "models/plan/calibration.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "models/core/errors.hpp"
#include "models/core/input_file.hpp"
#include "models/core/json_reader.hpp"
#include "models/plan/basics.hpp"
#include "models/plan/framework.hpp"

namespace ringsim {

namespace embedded {
extern const char* const calibration_json;
}

Calibration parse_calibration(const std::string& text, const std::string& origin) {
  const auto j = parse_json_text(text, origin);
  JsonReader top{origin, "top level", j};
  Calibration c;
  c.schema = top.str("schema");
  if (c.schema != "ringsim-calibration-1")
    throw top.error(fmt::format("'schema' must be ringsim-calibration-1, got '{}'", c.schema));
  c.procedure = top.str("procedure");
  std::size_t i = 0;
  for (const auto& e : top.array("factors")) {
    JsonReader r{origin, fmt::format("factors[{}]", i++), e};
    CalibrationFactor f;
    f.framework = r.str("framework");
    f.family = r.str("family");
    f.key = f.framework + "/" + f.family;
    f.factor = r.num("factor", 0.05, 20);
    f.runs = static_cast<int>(r.integer("runs", 1, 1e6));
    f.loo_median_abs_error = r.num("loo_median_abs_error", 0, 100);
    f.loo_max_abs_error = r.num("loo_max_abs_error", 0, 100);
    for (const auto& id : r.array("cases")) {
      if (!id.is_string()) throw r.error("'cases' must hold case ids");
      f.cases.push_back(id.get<std::string>());
    }
    c.factors.push_back(f);
  }
  // Optional: written by `calibrate --runs` since the bands came from the
  // user's residuals; the project's calibration.json has none.
  if (j.contains("error_bands")) {
    i = 0;
    for (const auto& e : top.array("error_bands")) {
      const JsonReader r{origin, fmt::format("error_bands[{}]", i++), e};
      auto b = read_band(r, kMinBandCases);
      b.coverage = r.num("coverage", 0.01, 1);
      c.bands.push_back(std::move(b));
    }
  }
  return c;
}

std::shared_ptr<const Calibration> read_user_calibration(const std::string& path) {
  if (path.empty()) return nullptr;
  return std::make_shared<const Calibration>(read_calibration_file(path));
}

ErrorBand choose_band(const std::string& klass, const Calibration* user, const std::string& file) {
  if (user)
    for (const auto& b : user->bands)
      if (b.klass == klass && b.validated()) {
        auto mine = b;
        mine.source = file;
        return mine;
      }
  return find_band(klass);
}

const Calibration& embedded_calibration() {
  static const Calibration c =
      parse_calibration(embedded::calibration_json, "models/data/calibration.json");
  return c;
}

const CalibrationFactor* find_in(const Calibration& c, const std::string& framework,
                                 const std::string& family) {
  for (const auto& f : c.factors)
    if (f.framework == framework && f.family == family) return &f;
  return nullptr;
}

const CalibrationFactor* find_calibration(const std::string& framework, const std::string& family) {
  return find_in(embedded_calibration(), framework, family);
}

Calibration read_calibration_file(const std::string& path) {
  // A calibration file holds a factor per framework x device family: kilobytes.
  return parse_calibration(read_input_file("--calibration", path, 16u << 20),
                           "--calibration " + path);
}

std::string user_calibration_line(const CalibrationFactor& f, const std::string& file) {
  return fmt::format(
      "calibration: {} x{:.3f} on the step time from {} (fitted to {} of your run{}, "
      "leave-one-out median |error| {:.1f}%, worst {:.1f}%; docs/own-cluster.md); "
      "--calibration none for first principles",
      f.key, f.factor, file, f.runs, f.runs == 1 ? "" : "s", 100 * f.loo_median_abs_error,
      100 * f.loo_max_abs_error);
}

std::string calibration_line(const std::string& key, double factor, bool moved) {
  const CalibrationFactor* fitted = nullptr;
  for (const auto& f : embedded_calibration().factors)
    if (f.key == key) fitted = &f;
  if (moved)
    return fmt::format(
        "calibration: {} x{:.3f} on the step time, moved by --set frameworks.{}.calibration ({}); "
        "--calibration none for first principles",
        key, factor, key.substr(0, key.find('/')),
        fitted ? fmt::format("the fitted factor is x{:.3f}", fitted->factor)
               : std::string("none fitted"));
  if (!fitted)
    return fmt::format("calibration: none fitted for {} (first principles; docs/validation.md)",
                       key.empty() ? std::string("this framework and device") : key);
  if (factor == 1)
    return fmt::format(
        "calibration: none (--calibration none: first principles; the {} factor x{:.3f} left out)",
        key, fitted->factor);
  return fmt::format(
      "calibration: {} x{:.3f} on the step time (fitted to {} published run{}, leave-one-out "
      "median |error| {:.1f}%, worst {:.1f}%; docs/validation.md); --calibration none for "
      "first principles",
      key, factor, fitted->runs, fitted->runs == 1 ? "" : "s", 100 * fitted->loo_median_abs_error,
      100 * fitted->loo_max_abs_error);
}

void set_calibration(PlanRequest& r, const std::string& family, bool none) {
  r.calibration_key = to_string(r.framework) + "/" + family;
  r.calibration = 1;
  r.calibration_from_file = false;
  const auto* user =
      r.user_calibration ? find_in(*r.user_calibration, to_string(r.framework), family) : nullptr;
  if (!none && user) {
    r.calibration = user->factor;
    r.calibration_from_file = true;
  } else if (!none) {
    if (const auto* c = find_calibration(to_string(r.framework), family)) r.calibration = c->factor;
  }
  if (r.moves.calibration) {
    r.calibration = *r.moves.calibration;  // --set frameworks.NAME.calibration
    r.calibration_from_file = false;
  }
}

bool has_factor(const PlanRequest& r) {
  if (r.calibration_from_file || r.moves.calibration) return true;
  for (const auto& f : embedded_calibration().factors)
    if (f.key == r.calibration_key) return true;
  return false;
}

std::string calibration_line(const PlanRequest& r) {
  const auto slash = r.calibration_key.find('/');
  const auto framework = r.calibration_key.substr(0, slash);
  const auto family = slash == std::string::npos ? "" : r.calibration_key.substr(slash + 1);
  if (r.calibration_from_file && r.user_calibration)
    if (const auto* f = find_in(*r.user_calibration, framework, family))
      return user_calibration_line(*f, r.calibration_file);
  auto line = calibration_line(r.calibration_key, r.calibration, r.moves.calibration.has_value());
  if (r.user_calibration && !r.moves.calibration && r.calibration != 1)
    line += fmt::format(" ({} has no factor for {}: the project's)", r.calibration_file,
                        r.calibration_key);
  return line;
}

}  // namespace ringsim
