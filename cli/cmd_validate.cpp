// `ringsim validate`: every published measurement of models/data/validation.json
// predicted by the commands a user runs (in this process, as `ringsim plan
// ... --json`, `ringsim infer ... --engine analytic --json`, and for a
// speedup two of them; validate_case.hpp), against the published value,
// with the framework-level calibration and its leave-one-out error
// (docs/validation.md). Exit 1 when a case leaves its tolerance without a
// stated finding, a finding grows, or a finding's case comes back within
// tolerance: the scoreboard a later change must keep green.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/stop_scope.hpp"
#include "cli/validate_case.hpp"
#include "cli/validate_plot.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"
#include "models/core/input_file.hpp"
#include "models/core/parse.hpp"
#include "models/core/schema.hpp"
#include "models/plan/error_band.hpp"
#include "models/plan/runs_csv.hpp"
#include "models/plan/validation.hpp"

namespace ringsim::cli {

namespace {

struct ValidateFlags {
  std::string csv, plot, fit, only, error_bands;
  // --cases FILE: the user's own runs (models/plan/runs_csv.hpp) instead of
  // the scoreboard; --calibration FILE: the user's factors over the project's.
  std::string cases, calibration;
  std::string cases_flag = "--cases";  // calibrate's --runs names the same file
  std::string fit_flag = "--fit";      // and its --out the fit's
  bool json = false;
};

// The project's factors with the user's file's in their place where it has one.
std::vector<CalibrationFactor> factors_for(const ValidateFlags& f) {
  auto factors = embedded_calibration().factors;
  if (f.calibration.empty()) return factors;
  for (const auto& u : read_calibration_file(f.calibration).factors) {
    std::erase_if(factors, [&](const auto& k) { return k.key == u.key; });
    factors.push_back(u);
  }
  return factors;
}

std::string pct(double x) {
  return fmt::format("{:+.1f}%", 100 * x);
}

// ok, OUT, FINDING (out of tolerance, stated in the case) or RESOLVED
// (within tolerance while a finding is still stated: remove it).
std::string status_word(const ValidationRow& r) {
  const auto s = r.status();
  return s == "finding" ? "FINDING" : s == "resolved" ? "RESOLVED" : s;
}

// The stated findings under the table: each finding's text once, then its
// cases with their error now and as stated.
std::string findings_text(const std::vector<ValidationRow>& rows) {
  std::vector<std::string> texts;
  for (const auto& r : rows)
    if (!r.c->finding.empty() && std::find(texts.begin(), texts.end(), r.c->finding) == texts.end())
      texts.push_back(r.c->finding);
  if (texts.empty()) return "";
  std::string out = "findings (out of tolerance, stated; docs/validation.md, 'Findings'):\n";
  for (const auto& t : texts) {
    out += "  - " + t + "\n    ";
    std::string sep;
    for (const auto& r : rows) {
      if (r.c->finding != t) continue;
      // A fits case the model passes while the source says out of memory.
      const bool fits_anyway = metric_is_fits(r.c->metric) && r.refused.empty();
      const bool refused = !r.refused.empty() || metric_is_fits(r.c->metric);
      out += fmt::format(
          "{}{} {}{}", sep, r.c->id,
          fits_anyway ? std::string("predicted to fit")
          : refused   ? std::string("refused")
                    : fmt::format("{} (stated {:+.1f}%)", pct(r.error()), 100 * r.c->finding_error),
          r.status() == "finding" ? "" : " " + status_word(r));
      sep = ", ";
    }
    out += "\n";
  }
  return out;
}

// One row of the table: a fits case says fits or REFUSED (and why).
std::string table_row(const ValidationRow& r) {
  const auto& c = *r.c;
  if (metric_is_fits(c.metric))
    return fmt::format("{:<26}{:<24}{:<22}{:>11}{:>11}{:>8}{:>8}{:>6}{:>9}  {}{}\n", c.id, c.source,
                       c.metric, c.published > 0 ? "yes" : "no (OOM)",
                       r.predicted > 0 ? "yes" : "no", "", "", "", "-", status_word(r),
                       r.refused.empty() ? "" : ": " + r.refused);
  return fmt::format("{:<26}{:<24}{:<22}{:>11.4g}{:>11.4g}{:>8}{:>8}{:>5.0f}%{:>9}  {}{}\n", c.id,
                     c.source, c.metric, c.published, r.predicted, pct(r.error()),
                     pct(r.first_principles / c.published - 1), 100 * c.tolerance,
                     c.fit ? pct(r.loo_error()) : "-", status_word(r),
                     r.refused.empty() ? "" : ": refused: " + r.refused);
}

std::string table(const std::vector<ValidationRow>& rows) {
  std::string out =
      fmt::format("{:<26}{:<24}{:<22}{:>11}{:>11}{:>8}{:>8}{:>6}{:>9}  {}\n", "case", "source",
                  "metric", "published", "predicted", "error", "first", "tol", "LOO", "");
  for (const auto& r : rows) out += table_row(r);
  return out;
}

// The summary keeps three kinds apart: step times and speedups (the time
// error, as before), measured peak memory, and whether published runs fit.
struct Summary {
  double median_abs = 0, max_abs = 0, median_abs_first = 0;
  int out = 0, cases = 0;
  int findings = 0, failing = 0;  // out of tolerance and stated; OUT or RESOLVED
  int memory_cases = 0;
  int fits_cases = 0, refused = 0;     // published runs that ran, and those the planner refuses
  int oom_cases = 0, oom_refused = 0;  // published out-of-memory runs, and those it refuses
  double memory_median_abs = 0, memory_max_abs = 0;
};

Summary summarise(const std::vector<ValidationRow>& rows) {
  std::vector<double> e, f, mem;
  Summary s;
  for (const auto& r : rows) {
    if (!r.within()) ++s.out;
    if (r.status() == "finding") ++s.findings;
    if (r.failing()) ++s.failing;
    if (metric_is_fits(r.c->metric)) {
      const bool ran = r.c->published > 0;
      ++(ran ? s.fits_cases : s.oom_cases);
      if (r.predicted <= 0) ++(ran ? s.refused : s.oom_refused);
      continue;
    }
    if (metric_is_memory(r.c->metric)) {
      ++s.memory_cases;
      mem.push_back(std::fabs(r.error()));
      continue;
    }
    ++s.cases;
    e.push_back(std::fabs(r.error()));
    f.push_back(std::fabs(r.first_principles / r.c->published - 1));
  }
  s.median_abs = median(e);
  s.median_abs_first = median(f);
  s.max_abs = e.empty() ? 0 : *std::max_element(e.begin(), e.end());
  s.memory_median_abs = median(mem);
  s.memory_max_abs = mem.empty() ? 0 : *std::max_element(mem.begin(), mem.end());
  return s;
}

std::string csv(const std::vector<ValidationRow>& rows) {
  std::string out =
      "case,source,command,metric,published,predicted,first_principles,error,loo_error,"
      "tolerance,fit,group,within,status\n";
  for (const auto& r : rows)
    out += fmt::format("{},{},{},{},{:.6g},{:.6g},{:.6g},{:.4f},{:.4f},{:.2f},{},{},{},{}\n",
                       r.c->id, r.c->source, r.c->command, r.c->metric, r.c->published, r.predicted,
                       r.first_principles, r.error(), r.loo_error(), r.c->tolerance,
                       r.c->fit ? 1 : 0, r.group, r.within() ? 1 : 0, r.status());
  return out;
}

nlohmann::json to_json(const std::vector<ValidationRow>& rows,
                       const std::vector<CalibrationFactor>& factors, const Summary& sum,
                       const ValidationSet& set) {
  nlohmann::json j;
  j["schema_version"] = kJsonSchemaVersion;
  j["command"] = "validate";
  j["cases"] = nlohmann::json::array();
  for (const auto& r : rows)
    j["cases"].push_back(
        {{"id", r.c->id},
         {"source", r.c->source},
         {"command", r.c->command},
         {"args", r.c->args},
         {"baseline_args",
          metric_is_ratio(r.c->metric) ? nlohmann::json(r.c->baseline_args) : nullptr},
         {"metric", r.c->metric},
         {"published", r.c->published},
         {"predicted", r.predicted},
         {"first_principles", r.first_principles},
         {"error", r.error()},
         {"loo_error", r.c->fit ? nlohmann::json(r.loo_error()) : nullptr},
         {"tolerance", r.c->tolerance},
         {"fit", r.c->fit},
         {"group", r.group},
         {"class", r.klass.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.klass)},
         {"memory_scope",
          metric_is_memory(r.c->metric) ? nlohmann::json(r.c->memory_scope) : nullptr},
         {"derived", r.c->derived},
         {"refused", r.refused.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.refused)},
         {"within", r.within()},
         {"status", r.status()},
         {"finding", r.c->finding.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.c->finding)},
         {"finding_error",
          r.c->finding.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.c->finding_error)}});
  j["sources"] = nlohmann::json::array();
  for (const auto& s : set.sources)
    j["sources"].push_back({{"id", s.id}, {"title", s.title}, {"url", s.url}});
  j["calibration"] = nlohmann::json::array();
  for (const auto& f : factors)
    j["calibration"].push_back({{"group", f.key},
                                {"factor", f.factor},
                                {"runs", f.runs},
                                {"loo_median_abs_error", f.loo_median_abs_error},
                                {"loo_max_abs_error", f.loo_max_abs_error}});
  j["summary"] = {{"cases", rows.size()},
                  {"sources", set.sources.size()},
                  {"median_abs_error", sum.median_abs},
                  {"max_abs_error", sum.max_abs},
                  {"median_abs_error_first_principles", sum.median_abs_first},
                  {"memory_cases", sum.memory_cases},
                  {"memory_median_abs_error", sum.memory_median_abs},
                  {"memory_max_abs_error", sum.memory_max_abs},
                  {"fits_cases", sum.fits_cases},
                  {"refused", sum.refused},
                  {"oom_cases", sum.oom_cases},
                  {"oom_refused", sum.oom_refused},
                  {"out_of_tolerance", sum.out},
                  {"stated_findings", sum.findings},
                  {"failing", sum.failing}};
  return j;
}

// The outputs a run asked for, written together through models/core/
// atomic_file.hpp: complete or not at all, the old files kept on a failure,
// `-` standard output.
struct Output {
  std::string flag;
  std::string path, text;
};

void write_outputs(const std::vector<Output>& outs) {
  std::vector<std::unique_ptr<AtomicFile>> files;
  std::vector<AtomicFile*> all;
  for (const auto& o : outs) {
    if (o.path.empty()) continue;
    files.push_back(std::make_unique<AtomicFile>(o.path, o.flag));
    files.back()->write(o.text);
    all.push_back(files.back().get());
  }
  commit_all(all);
}

int run(const ValidateFlags& f) {
  // SIGINT, SIGTERM or SIGHUP: the cases stop at the next one, exit 130, no
  // output written (each is committed only once all are complete).
  const StopScope stop;
  check_plot_name(f.plot);
  check_outputs(
      {{"--csv", f.csv}, {"--plot", f.plot}, {f.fit_flag, f.fit}, {"--error-bands", f.error_bands}},
      {{f.cases_flag, f.cases}, {"--calibration", f.calibration}});
  if (!f.fit.empty() && !f.calibration.empty())
    throw InputError("--calibration: not with --fit (which fits the factors itself)");
  ValidationSet own;
  if (!f.cases.empty())
    own = parse_runs_csv(read_input_file(f.cases_flag, f.cases, 64u << 20),
                         f.cases_flag + " " + f.cases);
  const auto& set = f.cases.empty() ? embedded_validation() : own;
  const std::string origin = f.cases.empty() ? "models/data/validation.json" : f.cases;
  std::vector<ValidationRow> rows;
  for (const auto& c : set.cases) {
    if (!f.only.empty() && c.source != f.only && c.id != f.only) continue;
    throw_if_cancelled();
    rows.push_back(predict_case(c));
  }
  if (rows.empty())
    throw InputError(fmt::format("--only: no case or source '{}' in {}", f.only, origin));
  std::vector<CalibrationFactor> factors;
  if (!f.fit.empty()) {
    factors = fit_calibration(rows);
  } else {
    factors = factors_for(f);
    apply_calibration(rows, factors);
    // The leave-one-out predictions: refit on the same rows, keep their LOO.
    auto refit = rows;
    fit_calibration(refit);
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i].loo = refit[i].loo;
  }
  const auto sum = summarise(rows);
  write_outputs(
      {{f.fit_flag, f.fit,
        f.fit.empty() ? "" : calibration_json_text(factors, f.cases, bands_of(rows))},
       {"--error-bands", f.error_bands,
        f.error_bands.empty() ? "" : error_bands_json_text(bands_of(rows))},
       {"--csv", f.csv, f.csv.empty() ? "" : csv(rows)},
       {"--plot", f.plot, f.plot.empty() ? "" : validation_plot_bytes(rows, set, f.plot)}});
  if (f.json) {
    std::cout << to_json(rows, factors, sum, set).dump(2) << "\n";
  } else {
    std::cout << table(rows) << findings_text(rows);
    for (const auto& k : factors)
      std::cout << fmt::format(
          "calibration {:<22} x{:.3f}  fitted to {} runs, leave-one-out median |error| {:.1f}%, "
          "worst {:.1f}%\n",
          k.key, k.factor, k.runs, 100 * k.loo_median_abs_error, 100 * k.loo_max_abs_error);
    std::cout << fmt::format(
        "{} cases from {} sources: {} step and speedup cases, median |error| {:.1f}% (first "
        "principles {:.1f}%), worst {:.1f}%; {} measured peak memory, median |error| {:.1f}%, "
        "worst {:.1f}%; {} runs that ran checked to fit, {} refused; {} published out-of-memory "
        "runs, {} refused; {} out of tolerance ({} stated findings, {} failing){}\n",
        rows.size(), set.sources.size(), sum.cases, 100 * sum.median_abs,
        100 * sum.median_abs_first, 100 * sum.max_abs, sum.memory_cases,
        100 * sum.memory_median_abs, 100 * sum.memory_max_abs, sum.fits_cases, sum.refused,
        sum.oom_cases, sum.oom_refused, sum.out, sum.findings, sum.failing,
        f.fit.empty() ? "" : fmt::format("; factors written to {}", f.fit));
  }
  return sum.failing > 0 ? 1 : 0;
}

}  // namespace

int calibrate_runs(const std::string& runs, const std::string& out, bool json) {
  (void)read_input_file("--runs", runs, 64u << 20);  // a wrong path before a missing flag
  if (out.empty()) throw InputError("--runs: needs --out FILE (the calibration file to write)");
  ValidateFlags f;
  f.cases = runs;
  f.cases_flag = "--runs";
  f.fit = out;
  f.fit_flag = "--out";
  f.json = json;
  // The fit is written whatever the runs' errors: they are the finding the
  // table reports, not a failed command (validate's exit 1).
  (void)run(f);
  return 0;
}

Command validate_command() {
  return {
      "validate", [](CLI::App& app, int* exit_code) {
        auto f = std::make_shared<ValidateFlags>();
        auto* sub = app.add_subcommand(
            "validate",
            "The scoreboard: every published run of models/data/validation.json predicted and "
            "compared (exit 1 when a case leaves its tolerance unstated; docs/validation.md)");
        sub->add_option("--csv", f->csv, "Also write the rows as CSV to FILE")->type_name("FILE");
        sub->add_option("--plot", f->plot,
                        "Also write predicted vs published (log-log, one colour per source) and "
                        "each case's signed error to FILE, in the format its extension names: "
                        ".svg, .png or .pdf (PNG and PDF rendered by ringsim-plot)")
            ->type_name("FILE");
        sub->add_option("--fit", f->fit,
                        "Refit the framework-level calibration to the cases marked fit and "
                        "write it to FILE (models/data/calibration.json; rebuild to embed)")
            ->type_name("FILE");
        sub->add_option("--error-bands", f->error_bands,
                        "Write every class's error band (80% of its leave-one-out residuals) to "
                        "FILE (models/data/error_bands.json; rebuild to embed)")
            ->type_name("FILE");
        sub->add_option("--only", f->only, "One source or one case id")->type_name("NAME");
        sub->add_option("--cases", f->cases,
                        "Score your own runs instead: a CSV with the header "
                        "id,command,args,metric,value (docs/own-cluster.md)")
            ->type_name("FILE");
        sub->add_option("--calibration", f->calibration,
                        "Your factors (`ringsim calibrate --runs`) over the project's")
            ->type_name("FILE");
        sub->add_flag("--json", f->json, "Print one JSON object");
        sub->callback([f, exit_code] { *exit_code = run(*f); });
        return sub;
      }};
}

}  // namespace ringsim::cli
