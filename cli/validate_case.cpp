#include "cli/validate_case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/command.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"

namespace ringsim::cli {

namespace {

InputError case_error(const ValidationCase& c, const std::string& why) {
  return InputError(fmt::format("{}: case '{}': {}", c.origin, c.id, why));
}

// Runs `ringsim ARGS` in this process and returns what it printed on stdout.
nlohmann::json run_captured(const std::vector<std::string>& args, const ValidationCase& c) {
  std::vector<const char*> argv{"ringsim"};
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  auto* old_out = std::cout.rdbuf(out.rdbuf());
  auto* old_err = std::cerr.rdbuf(err.rdbuf());
  const int rc = run_cli(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  if (rc != 0) throw case_error(c, "its command failed: " + one_line(err.str()));
  // --help, --version: exit 0 with text where a case needs the command's JSON.
  auto j = nlohmann::json::parse(out.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    throw case_error(c,
                     "its command printed no JSON object (args with --help or --version?); "
                     "give the flags of a run that --json reports");
  return j;
}

// plan's best configuration, or null with the reason when the planner
// finds it infeasible (the case is then out: a run that ran must fit).
const nlohmann::json* plan_config(const nlohmann::json& j, std::string* refused) {
  const auto& cf = j.at("configs").at(0);
  if (!cf.at("feasible").get<bool>()) {
    *refused = cf.at("reason").get<std::string>();
    return nullptr;
  }
  return &cf;
}

// The peak a memory case compares, in GiB (2^30 bytes).
double memory_gib(const ValidationCase& c, const nlohmann::json& cf) {
  const char* key = c.memory_scope == "allocated"  ? "memory_allocated_bytes"
                    : c.memory_scope == "reserved" ? "memory_reserved_bytes"
                                                   : "memory_bytes_per_device";
  return cf.at(key).get<double>() / (1024.0 * 1024 * 1024);
}

// The time a speedup compares: plan's step, or one run's time (0 when the
// planner refuses it, with the reason).
// The error-band class a command's output names (without plan's
// "(calibration none)", which every case runs with).
std::string band_class_of(const nlohmann::json& j, const char* key = "error_band") {
  if (!j.contains(key)) return "";
  auto k = j.at(key).at("class").get<std::string>();
  const std::string none = " (calibration none)";
  if (k.size() > none.size() && k.compare(k.size() - none.size(), none.size(), none) == 0)
    k.resize(k.size() - none.size());
  return k;
}

double time_of(const ValidationCase& c, bool baseline, std::string* refused,
               std::string* klass = nullptr) {
  const auto j = run_captured(case_command(c, baseline), c);
  if (klass) *klass = band_class_of(j);
  if (c.command != "plan") return j.at("time_s").get<double>();
  const auto* cf = plan_config(j, refused);
  return cf ? cf->at("step_time_s").get<double>() : 0;
}

// infer's verdict on memory, with the same reason a refusal carries.
double infer_fits(const nlohmann::json& j, std::string* refused) {
  const auto& m = j.at("memory");
  if (m.at("fits").get<bool>()) return 1;
  *refused =
      fmt::format("needs {:.2f} GiB > {:.2f} GiB", m.at("total_bytes").get<double>() / 1073741824.0,
                  m.at("hbm_bytes").get<double>() / 1073741824.0);
  return 0;
}

// The absolute metrics: plan's throughput, FLOP rate, step or peak memory;
// infer's TTFT or decode; either's fits (1 or 0).
double metric_of(const ValidationCase& c, const nlohmann::json& j, std::string* refused) {
  if (c.command == "plan") {
    const auto* cf = plan_config(j, refused);
    if (metric_is_fits(c.metric)) return cf ? 1 : 0;
    if (!cf) return 0;
    const double tps = cf->at("tokens_per_s_per_gpu").get<double>();
    if (c.metric == "tokens_per_s_per_gpu") return tps;
    if (c.metric == "model_tflops_per_gpu") return tps * c.flops_per_token / 1e12;
    if (c.metric == "step_time_s") return cf->at("step_time_s").get<double>();
    if (metric_is_memory(c.metric)) return memory_gib(c, *cf);
    return 0;
  }
  // run's time of its scope (one layer's attention by default), as a user measured it.
  if (c.command == "run") return c.metric == "time_s" ? j.at("time_s").get<double>() : 0;
  if (metric_is_fits(c.metric)) return infer_fits(j, refused);
  const auto& a = j.at("analytic");
  if (c.metric == "ttft_s") return a.at("ttft_s").get<double>();
  if (c.metric == "decode_s_per_token") return a.at("decode_s_per_token").get<double>();
  return 0;
}

}  // namespace

std::vector<std::string> case_command(const ValidationCase& c, bool baseline) {
  std::vector<std::string> a{c.command};
  // What validate adds itself: a case's args may not give those flags too.
  const std::vector<std::string> added =
      c.command == "plan"
          ? std::vector<std::string>{"--calibration", "none", "--top", "1", "--json"}
          : std::vector<std::string>{"--json"};
  for (auto& w : case_words(baseline ? c.baseline_args : c.args)) {
    const auto name = w.substr(0, w.find('='));
    if (c.command == "plan" && name == "--inference")
      throw case_error(c,
                       "its args give --inference, but a plan case is scored as a training step; "
                       "score a prefill or decode with the command infer (metric ttft_s or "
                       "decode_s_per_token)");
    if (name.starts_with("--") && std::find(added.begin(), added.end(), name) != added.end())
      throw case_error(c, fmt::format("its args give {}, which validate sets itself ({} {}); "
                                      "drop it from the args",
                                      name, c.command, join(added, " ")));
    a.push_back(std::move(w));
  }
  if (c.command != "plan" && std::find(a.begin(), a.end(), "--engine") == a.end())
    a.insert(a.end(), {"--engine", "analytic"});
  a.insert(a.end(), added.begin(), added.end());
  return a;
}

ValidationRow predict_case_json(const ValidationCase& c);

// A case whose command's JSON lacks what its metric reads (a plan with
// --inference scored as a training step) is the case file's mistake: one
// line naming the case, not an internal error.
ValidationRow predict_case(const ValidationCase& c) {
  try {
    return predict_case_json(c);
  } catch (const nlohmann::json::exception& e) {
    throw case_error(c, fmt::format("its command's --json output does not give the metric {} "
                                    "({}); check the command and its args",
                                    c.metric, one_line(e.what())));
  }
}

ValidationRow predict_case_json(const ValidationCase& c) {
  ValidationRow row;
  row.c = &c;
  if (metric_is_ratio(c.metric)) {
    // No group: a factor on the step time multiplies both runs and cancels.
    const double t = time_of(c, false, &row.refused, &row.klass),
                 base = time_of(c, true, &row.refused);
    row.first_principles = t > 0 ? base / t : 0;
  } else {
    const auto j = run_captured(case_command(c), c);
    if (c.command == "plan" && metric_is_step(c.metric))
      row.group = j.at("calibration").at("group").get<std::string>();
    if (!metric_is_memory(c.metric) && !metric_is_fits(c.metric))
      row.klass =
          band_class_of(j, c.metric == "decode_s_per_token" ? "decode_error_band" : "error_band");
    row.first_principles = metric_of(c, j, &row.refused);
  }
  if (!(row.first_principles > 0) && row.refused.empty() && !metric_is_fits(c.metric))
    throw case_error(c, "metric " + c.metric + " is not given by " + c.command);
  return row;
}

}  // namespace ringsim::cli
