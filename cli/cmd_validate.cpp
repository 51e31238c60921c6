// `ringsim validate`: every published measurement of models/data/validation.json
// predicted by the commands a user runs (in this process, as `ringsim plan
// ... --json` and `ringsim infer ... --engine analytic --json`), against the
// published value, with the framework-level calibration and its leave-one-out
// error (docs/validation.md). Exit 1 when any case leaves its tolerance: the
// scoreboard a later change must keep green.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/command.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/core/schema.hpp"
#include "models/plan/validation.hpp"

namespace ringsim::cli {

namespace {

struct ValidateFlags {
  std::string csv, plot, fit, only;
  bool json = false;
};

// Runs `ringsim ARGS` in this process and returns what it printed on stdout.
std::string run_captured(const std::vector<std::string>& args, const std::string& id) {
  std::vector<const char*> argv{"ringsim"};
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  auto* old_out = std::cout.rdbuf(out.rdbuf());
  auto* old_err = std::cerr.rdbuf(err.rdbuf());
  const int rc = run_cli(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  if (rc != 0)
    throw InputError(fmt::format("models/data/validation.json: case '{}': its command failed: {}",
                                 id, one_line(err.str())));
  return out.str();
}

std::vector<std::string> case_args(const ValidationCase& c) {
  std::vector<std::string> a{c.command};
  std::istringstream in(c.args);
  for (std::string w; in >> w;) a.push_back(w);
  if (c.command == "plan") {
    a.insert(a.end(), {"--calibration", "none", "--top", "1"});
  } else if (std::find(a.begin(), a.end(), "--engine") == a.end()) {
    a.insert(a.end(), {"--engine", "analytic"});
  }
  a.push_back("--json");
  return a;
}

// The case's first-principles prediction and its calibration group.
ValidationRow predict(const ValidationCase& c) {
  const auto j = nlohmann::json::parse(run_captured(case_args(c), c.id));
  ValidationRow row;
  row.c = &c;
  auto fail = [&](const std::string& why) {
    return InputError(fmt::format("models/data/validation.json: case '{}': {}", c.id, why));
  };
  if (c.command == "plan") {
    const auto& cf = j.at("configs").at(0);
    if (!cf.at("feasible").get<bool>())
      throw fail("ringsim plan finds the configuration infeasible: " +
                 cf.at("reason").get<std::string>());
    row.group = j.at("calibration").at("group").get<std::string>();
    const double tps = cf.at("tokens_per_s_per_gpu").get<double>();
    if (c.metric == "tokens_per_s_per_gpu") row.first_principles = tps;
    if (c.metric == "model_tflops_per_gpu") row.first_principles = tps * c.flops_per_token / 1e12;
    if (c.metric == "step_time_s") row.first_principles = cf.at("step_time_s").get<double>();
  } else {
    const auto& a = j.at("analytic");
    if (c.metric == "ttft_s") row.first_principles = a.at("ttft_s").get<double>();
    if (c.metric == "decode_s_per_token")
      row.first_principles = a.at("decode_s_per_token").get<double>();
  }
  if (!(row.first_principles > 0))
    throw fail("metric " + c.metric + " is not given by " + c.command);
  return row;
}

std::string pct(double x) {
  return fmt::format("{:+.1f}%", 100 * x);
}

std::string table(const std::vector<ValidationRow>& rows) {
  std::string out =
      fmt::format("{:<26}{:<22}{:<22}{:>11}{:>11}{:>8}{:>8}{:>6}{:>9}  {}\n", "case", "source",
                  "metric", "published", "predicted", "error", "first", "tol", "LOO", "");
  for (const auto& r : rows) {
    out +=
        fmt::format("{:<26}{:<22}{:<22}{:>11.4g}{:>11.4g}{:>8}{:>8}{:>5.0f}%{:>9}  {}\n", r.c->id,
                    r.c->source, r.c->metric, r.c->published, r.predicted, pct(r.error()),
                    pct(r.first_principles / r.c->published - 1), 100 * r.c->tolerance,
                    r.c->fit ? pct(r.loo_error()) : "-", r.within() ? "ok" : "OUT");
  }
  return out;
}

struct Summary {
  double median_abs = 0, max_abs = 0, median_abs_first = 0;
  int out = 0;
};

Summary summarise(const std::vector<ValidationRow>& rows) {
  std::vector<double> e, f;
  Summary s;
  for (const auto& r : rows) {
    e.push_back(std::fabs(r.error()));
    f.push_back(std::fabs(r.first_principles / r.c->published - 1));
    if (!r.within()) ++s.out;
  }
  s.median_abs = median(e);
  s.median_abs_first = median(f);
  s.max_abs = e.empty() ? 0 : *std::max_element(e.begin(), e.end());
  return s;
}

std::string csv(const std::vector<ValidationRow>& rows) {
  std::string out =
      "case,source,command,metric,published,predicted,first_principles,error,loo_error,"
      "tolerance,fit,group,within\n";
  for (const auto& r : rows)
    out += fmt::format("{},{},{},{},{:.6g},{:.6g},{:.6g},{:.4f},{:.4f},{:.2f},{},{},{}\n", r.c->id,
                       r.c->source, r.c->command, r.c->metric, r.c->published, r.predicted,
                       r.first_principles, r.error(), r.loo_error(), r.c->tolerance,
                       r.c->fit ? 1 : 0, r.group, r.within() ? 1 : 0);
  return out;
}

// Predicted against published on log-log axes (each case in its own unit):
// one point per case, one colour per source, the y = x line and the +-35%
// band, the sources listed on the right.
std::string plot_svg(const std::vector<ValidationRow>& rows, const ValidationSet& set) {
  const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  double lo = 1e300, hi = 0;
  for (const auto& r : rows) {
    lo = std::min({lo, r.c->published, r.predicted});
    hi = std::max({hi, r.c->published, r.predicted});
  }
  const double l0 = std::floor(std::log10(lo)), l1 = std::max(l0 + 1, std::ceil(std::log10(hi)));
  const double M = 70, P = 460;
  auto px = [&](double v) { return M + (std::log10(v) - l0) / (l1 - l0) * P; };
  auto py = [&](double v) { return M + P - (std::log10(v) - l0) / (l1 - l0) * P; };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"980\" height=\"600\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n<text x=\"{}\" y=\"30\" font-size=\"15\">ringsim validate: predicted "
      "against published, {} cases (dashed: +-35%)</text>\n",
      M, rows.size());
  s += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", M, M,
      P, P);
  for (double d = l0; d <= l1; ++d) {
    const double v = std::pow(10.0, d);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">1e{:.0f}</text>\n",
                     px(v), M + P + 18, d);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">1e{:.0f}</text>\n", M - 6,
                     py(v) + 4, d);
  }
  s += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">published (each case's unit: tokens/s/GPU, "
      "TFLOP/s/GPU or seconds)</text>\n<text transform=\"translate(20,{}) rotate(-90)\" "
      "text-anchor=\"middle\">predicted</text>\n",
      M + P / 2, M + P + 40, M + P / 2);
  const double a = std::pow(10.0, l0), b = std::pow(10.0, l1);
  auto line = [&](double k, const char* style) {
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#999\" {}/>\n",
        px(k >= 1 ? a : a / k), py(k >= 1 ? a * k : a), px(k >= 1 ? b / k : b),
        py(k >= 1 ? b : b * k), style);
  };
  line(1, "");
  line(1.35, "stroke-dasharray=\"4 4\"");
  line(1 / 1.35, "stroke-dasharray=\"4 4\"");
  std::map<std::string, const char*> colour;
  for (std::size_t i = 0; i < set.sources.size(); ++i) {
    const auto& id = set.sources[i].id;
    colour[id] = colours[i % std::size(colours)];
    const double y = M + 10 + 20 * static_cast<double>(i);
    s += fmt::format(
        "<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
        M + P + 30, y - 4, colour[id], M + P + 42, y, id);
  }
  for (const auto& r : rows)
    s += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\" fill-opacity=\"0.8\"><title>{}: "
        "{:+.1f}%</title></circle>\n",
        px(r.c->published), py(r.predicted), colour[r.c->source], r.c->id, 100 * r.error());
  return s + "</svg>\n";
}

nlohmann::json to_json(const std::vector<ValidationRow>& rows,
                       const std::vector<CalibrationFactor>& factors, const Summary& sum,
                       const ValidationSet& set) {
  nlohmann::json j;
  j["schema_version"] = kJsonSchemaVersion;
  j["command"] = "validate";
  j["cases"] = nlohmann::json::array();
  for (const auto& r : rows)
    j["cases"].push_back({{"id", r.c->id},
                          {"source", r.c->source},
                          {"command", r.c->command},
                          {"args", r.c->args},
                          {"metric", r.c->metric},
                          {"published", r.c->published},
                          {"predicted", r.predicted},
                          {"first_principles", r.first_principles},
                          {"error", r.error()},
                          {"loo_error", r.c->fit ? nlohmann::json(r.loo_error()) : nullptr},
                          {"tolerance", r.c->tolerance},
                          {"fit", r.c->fit},
                          {"group", r.group},
                          {"within", r.within()}});
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
                  {"out_of_tolerance", sum.out}};
  return j;
}

void write_file(const std::string& flag, const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f || !(f << text) || !f.flush())
    throw InputError(fmt::format("{}: cannot write '{}'", flag, path));
}

int run(const ValidateFlags& f) {
  const auto& set = embedded_validation();
  std::vector<ValidationRow> rows;
  for (const auto& c : set.cases) {
    if (!f.only.empty() && c.source != f.only && c.id != f.only) continue;
    rows.push_back(predict(c));
  }
  if (rows.empty())
    throw InputError(
        fmt::format("--only: no case or source '{}' in models/data/validation.json", f.only));
  std::vector<CalibrationFactor> factors;
  if (!f.fit.empty()) {
    factors = fit_calibration(rows);
    write_file("--fit", f.fit, calibration_json_text(factors));
  } else {
    factors = embedded_calibration().factors;
    apply_calibration(rows, factors);
    // The leave-one-out predictions: refit on the same rows, keep their LOO.
    auto refit = rows;
    fit_calibration(refit);
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i].loo = refit[i].loo;
  }
  const auto sum = summarise(rows);
  if (!f.csv.empty()) write_file("--csv", f.csv, csv(rows));
  if (!f.plot.empty()) write_file("--plot", f.plot, plot_svg(rows, set));
  if (f.json) {
    std::cout << to_json(rows, factors, sum, set).dump(2) << "\n";
  } else {
    std::cout << table(rows);
    for (const auto& k : factors)
      std::cout << fmt::format(
          "calibration {:<22} x{:.3f}  fitted to {} runs, leave-one-out median |error| {:.1f}%, "
          "worst {:.1f}%\n",
          k.key, k.factor, k.runs, 100 * k.loo_median_abs_error, 100 * k.loo_max_abs_error);
    std::cout << fmt::format(
        "{} cases from {} sources: median |error| {:.1f}% (first principles {:.1f}%), worst "
        "{:.1f}%; {} out of tolerance{}\n",
        rows.size(), set.sources.size(), 100 * sum.median_abs, 100 * sum.median_abs_first,
        100 * sum.max_abs, sum.out,
        f.fit.empty() ? "" : fmt::format("; factors written to {}", f.fit));
  }
  return sum.out > 0 ? 1 : 0;
}

}  // namespace

Command validate_command() {
  return {
      "validate", [](CLI::App& app, int* exit_code) {
        auto f = std::make_shared<ValidateFlags>();
        auto* sub = app.add_subcommand(
            "validate",
            "The scoreboard: every published run of models/data/validation.json predicted and "
            "compared (exit 1 when a case leaves its tolerance; docs/validation.md)");
        sub->add_option("--csv", f->csv, "Also write the rows as CSV to FILE")->type_name("FILE");
        sub->add_option("--plot", f->plot,
                        "Also write predicted vs published (log-log, one colour per source) "
                        "as SVG to FILE")
            ->type_name("FILE");
        sub->add_option("--fit", f->fit,
                        "Refit the framework-level calibration to the cases marked fit and "
                        "write it to FILE (models/data/calibration.json; rebuild to embed)")
            ->type_name("FILE");
        sub->add_option("--only", f->only, "One source or one case id")->type_name("NAME");
        sub->add_flag("--json", f->json, "Print one JSON object");
        sub->callback([f, exit_code] { *exit_code = run(*f); });
        return sub;
      }};
}

}  // namespace ringsim::cli
