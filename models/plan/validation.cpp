#include "models/plan/validation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"

namespace ringsim {

namespace embedded {
extern const char* const validation_json;
}

namespace {

const char* const kMetrics[] = {"tokens_per_s_per_gpu",
                                "model_tflops_per_gpu",
                                "step_time_s",
                                "ttft_s",
                                "decode_s_per_token",
                                "speedup",
                                "peak_memory_gib",
                                "fits",
                                "time_s"};

// A ratio's own fields: speedup compares two runs of plan or run, is held
// out (the calibration's factor cancels in it), and only it may use run.
void read_ratio(const JsonReader& rc, ValidationCase& c) {
  const bool ratio = metric_is_ratio(c.metric);
  if (ratio) {
    c.baseline_args = rc.str("baseline_args");
    if (c.command == "infer") throw rc.error("metric speedup needs command plan or run");
  } else if (c.command == "run") {
    throw rc.error("command run gives only the metric speedup");
  }
  if (ratio && c.fit)
    throw rc.error("a speedup does not calibrate (the factor cancels in it): fit must be false");
}

// A measured peak names the planner's peak it compares with; a memory or
// fits case never calibrates (the factor is on the step time), and a run
// that ran is published as fitting (1).
void read_memory(const JsonReader& rc, ValidationCase& c) {
  const bool memory = metric_is_memory(c.metric), fits = metric_is_fits(c.metric);
  if (memory) {
    c.memory_scope = rc.str("memory_scope");
    if (c.memory_scope != "reserved" && c.memory_scope != "allocated" && c.memory_scope != "device")
      throw rc.error("'memory_scope' must be reserved, allocated or device");
  }
  if ((memory || fits) && c.fit)
    throw rc.error("a memory or fits case does not calibrate the step time: fit must be false");
  if ((memory || fits) && c.command == "run")
    throw rc.error("metric " + c.metric + " needs command plan or infer");
  if (fits && c.published != 1 && c.published != 0)
    throw rc.error("a fits case publishes 1 (the run ran) or 0 (it ran out of memory)");
  if (c.args.find("--memory-check") != std::string::npos)
    throw rc.error("a published run must fit: no case may pass --memory-check");
}

// Every plan or infer case is a run that ran: one fits case per distinct
// command line the file does not already list as fits.
void add_derived_fits(ValidationSet& v) {
  std::set<std::string> seen;
  for (const auto& c : v.cases)
    if (metric_is_fits(c.metric)) seen.insert(c.command + " " + c.args);
  const auto n = v.cases.size();
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = v.cases[i];
    if (c.command == "run" || metric_is_fits(c.metric)) continue;
    if (!seen.insert(c.command + " " + c.args).second) continue;
    ValidationCase f = c;
    f.id = c.id + ":fits";
    f.metric = "fits";
    f.published = 1;
    f.tolerance = 0.01;
    f.fit = false;
    f.derived = true;
    f.memory_scope.clear();
    f.finding = c.fits_finding;  // the case's finding is about its number, not its fit
    f.finding_error = 0;
    f.note = "derived from case " + c.id + ": the run ran, so its configuration must fit";
    v.cases.push_back(f);
  }
}

double geomean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / static_cast<double>(v.size()));
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool known_metric(const std::string& metric) {
  return std::find(std::begin(kMetrics), std::end(kMetrics), metric) != std::end(kMetrics);
}

bool metric_is_time(const std::string& metric) {
  return metric == "step_time_s" || metric == "ttft_s" || metric == "decode_s_per_token" ||
         metric == "time_s";
}

bool metric_is_ratio(const std::string& metric) {
  return metric == "speedup";
}

bool metric_is_memory(const std::string& metric) {
  return metric == "peak_memory_gib";
}

bool metric_is_fits(const std::string& metric) {
  return metric == "fits";
}

bool metric_is_step(const std::string& metric) {
  return !metric_is_ratio(metric) && !metric_is_memory(metric) && !metric_is_fits(metric);
}

std::vector<std::string> case_words(const std::string& args) {
  std::vector<std::string> w;
  std::istringstream in(args);
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

ValidationSet parse_validation(const std::string& text, const std::string& origin) {
  const auto j = parse_json_text(text, origin);
  JsonReader top{origin, "top level", j};
  if (top.str("schema") != "ringsim-validation-1")
    throw top.error("'schema' must be ringsim-validation-1");
  ValidationSet v;
  std::set<std::string> sources, ids;
  for (const auto& e : top.array("sources")) {
    JsonReader r{origin, "sources", e};
    ValidationSource s{r.str("id"), r.str("title"), r.str("url"), r.str("setup")};
    if (!sources.insert(s.id).second) throw r.error(fmt::format("source '{}' twice", s.id));
    v.sources.push_back(s);
  }
  for (const auto& e : top.array("cases")) {
    JsonReader r{origin, "cases", e};
    ValidationCase c;
    c.id = r.str("id");
    JsonReader rc{origin, fmt::format("case '{}'", c.id), e};
    if (!ids.insert(c.id).second) throw rc.error("id used twice");
    c.source = rc.str("source");
    if (!sources.count(c.source)) throw rc.error(fmt::format("unknown source '{}'", c.source));
    c.command = rc.str("command");
    if (c.command != "plan" && c.command != "infer" && c.command != "run")
      throw rc.error(fmt::format("'command' must be plan, infer or run, got '{}'", c.command));
    c.args = rc.str("args");
    c.metric = rc.str("metric");
    if (!known_metric(c.metric)) throw rc.error(fmt::format("unknown metric '{}'", c.metric));
    c.published = rc.num("published", metric_is_fits(c.metric) ? 0 : 1e-9, 1e12);
    c.tolerance = rc.num("tolerance", 0.01, 1);
    if (!rc.at("fit").is_boolean()) throw rc.error("'fit' must be true or false");
    c.fit = rc.at("fit").get<bool>();
    c.note = rc.str_or("note", "");
    c.table = rc.str_or("table", "");
    if (rc.has("also_published"))
      for (const auto& [k, x] : rc.object("also_published").items())
        c.also_published[k] = rc.number(x, "also_published." + k, 1e-9, 1e12);
    if (c.metric == "model_tflops_per_gpu") c.flops_per_token = rc.num("flops_per_token", 1, 1e18);
    if (rc.has("finding") || rc.has("finding_error")) {
      c.finding = rc.str("finding");
      if (c.finding.empty()) throw rc.error("'finding' must say why the case misses");
      // A fits case has no signed error to state: its finding is the verdict.
      c.finding_error = metric_is_fits(c.metric) && !rc.has("finding_error")
                            ? 0
                            : rc.num("finding_error", -10, 10);
    }
    c.fits_finding = rc.str_or("fits_finding", "");
    if (c.fit && c.command != "plan") throw rc.error("only plan cases calibrate (fit: false)");
    read_ratio(rc, c);
    read_memory(rc, c);
    v.cases.push_back(c);
  }
  add_derived_fits(v);
  return v;
}

const ValidationSet& embedded_validation() {
  static const ValidationSet v =
      parse_validation(embedded::validation_json, "models/data/validation.json");
  return v;
}

bool ValidationRow::within() const {
  if (!refused.empty() && !metric_is_fits(c->metric)) return false;
  if (metric_is_fits(c->metric)) return predicted == c->published;
  return std::fabs(error()) <= c->tolerance && (!c->fit || std::fabs(loo_error()) <= c->tolerance);
}

std::string ValidationRow::status() const {
  const bool stated = !c->finding.empty();
  if (within()) return stated ? "resolved" : "ok";
  if (!stated) return "OUT";
  // A refusal (or a fits case) stated as a finding: nothing to guard but the refusal.
  if (!refused.empty() || metric_is_fits(c->metric)) return "finding";
  const double worst = std::max(std::fabs(error()), c->fit ? std::fabs(loo_error()) : 0.0);
  return worst <= std::fabs(c->finding_error) + kFindingSlack ? "finding" : "OUT";
}

double time_ratio(const ValidationCase& c, double first_principles) {
  return metric_is_time(c.metric) ? c.published / first_principles : first_principles / c.published;
}

double apply_factor(const ValidationCase& c, double first_principles, double factor) {
  if (!metric_is_step(c.metric)) return first_principles;
  return metric_is_time(c.metric) ? first_principles * factor : first_principles / factor;
}

void apply_calibration(std::vector<ValidationRow>& rows,
                       const std::vector<CalibrationFactor>& factors) {
  for (auto& row : rows) {
    double f = 1;
    for (const auto& k : factors)
      if (k.key == row.group) f = k.factor;
    row.predicted = row.loo = apply_factor(*row.c, row.first_principles, f);
  }
}

std::vector<CalibrationFactor> fit_calibration(std::vector<ValidationRow>& rows) {
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].c->fit && !rows[i].group.empty() && rows[i].refused.empty())
      groups[rows[i].group].push_back(i);
  std::vector<CalibrationFactor> out;
  for (const auto& [key, members] : groups) {
    CalibrationFactor f;
    f.key = key;
    const auto slash = key.find('/');
    f.framework = key.substr(0, slash);
    f.family = key.substr(slash + 1);
    std::vector<double> ratios;
    for (auto i : members) {
      ratios.push_back(time_ratio(*rows[i].c, rows[i].first_principles));
      f.cases.push_back(rows[i].c->id);
    }
    f.factor = geomean(ratios);
    f.runs = static_cast<int>(members.size());
    std::vector<double> loo_abs;
    for (std::size_t k = 0; k < members.size(); ++k) {
      std::vector<double> others;
      for (std::size_t m = 0; m < members.size(); ++m)
        if (m != k) others.push_back(ratios[m]);
      // One case alone: no other case predicts it, so its own factor is its LOO.
      const double lf = others.empty() ? f.factor : geomean(others);
      auto& row = rows[members[k]];
      row.loo = apply_factor(*row.c, row.first_principles, lf);
      loo_abs.push_back(std::fabs(row.loo_error()));
    }
    f.loo_median_abs_error = median(loo_abs);
    f.loo_max_abs_error = *std::max_element(loo_abs.begin(), loo_abs.end());
    out.push_back(f);
  }
  // Predictions with the fitted factors; LOO stays as set above for fit cases.
  for (auto& row : rows) {
    double fac = 1;
    for (const auto& k : out)
      if (k.key == row.group) fac = k.factor;
    row.predicted = apply_factor(*row.c, row.first_principles, fac);
    if (!row.c->fit || row.group.empty()) row.loo = row.predicted;
  }
  return out;
}

std::string calibration_json_text(const std::vector<CalibrationFactor>& factors,
                                  const std::string& runs, const std::vector<ErrorBand>& bands) {
  nlohmann::ordered_json j;
  j["schema"] = "ringsim-calibration-1";
  j["procedure"] =
      runs.empty()
          ? "Written by `ringsim validate --fit` (docs/validation.md, 'Calibration'): for each "
            "framework x device family, the factor is the geometric mean of published / "
            "first-principles step time over the cases of models/data/validation.json marked "
            "\"fit\": true in that group (the least-squares fit of log time); its leave-one-out "
            "error refits without each case in turn and predicts it."
          : fmt::format(
                "Written by `ringsim calibrate --runs {}` (docs/own-cluster.md): for each "
                "framework x device family, the factor is the geometric mean of measured / "
                "first-principles step time over the plan runs of that file in that group (the "
                "least-squares fit of log time), the project's procedure "
                "(docs/validation.md, 'Calibration'); its leave-one-out error refits without "
                "each run in turn and predicts it.",
                runs);
  j["factors"] = nlohmann::ordered_json::array();
  for (const auto& f : factors) {
    nlohmann::ordered_json e;
    e["framework"] = f.framework;
    e["family"] = f.family;
    e["factor"] = std::round(f.factor * 1e4) / 1e4;
    e["runs"] = f.runs;
    e["loo_median_abs_error"] = std::round(f.loo_median_abs_error * 1e4) / 1e4;
    e["loo_max_abs_error"] = std::round(f.loo_max_abs_error * 1e4) / 1e4;
    e["cases"] = f.cases;
    j["factors"].push_back(e);
  }
  if (runs.empty()) return j.dump(1) + "\n";
  j["error_bands"] = nlohmann::ordered_json::array();
  for (const auto& b : bands) {
    if (!b.validated()) continue;
    nlohmann::ordered_json e;
    e["class"] = b.klass;
    e["cases"] = b.cases;
    e["low"] = b.low;
    e["high"] = b.high;
    e["coverage"] = b.coverage;
    e["ids"] = b.ids;
    j["error_bands"].push_back(e);
  }
  return j.dump(1) + "\n";
}

}  // namespace ringsim
