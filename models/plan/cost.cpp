#include "models/plan/cost.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "models/core/errors.hpp"
#include "models/core/parse.hpp"

namespace ringsim {

namespace {
constexpr std::int64_t kMaxTrainTokens = 1'000'000'000'000'000;  // 1000T: beyond any run planned
constexpr double kMaxPrice = 1e6;
constexpr double kSecondsPerHour = 3600;
}  // namespace

double parse_price_per_gpu_hour(const std::string& flag, const std::string& text) {
  double v = -1;
  try {
    v = parse_real(flag, text, 0, kMaxPrice);
  } catch (const InputError&) {
  }
  // Zero would make every cost zero: not a price (inference keeps 0 as "none").
  if (!(v > 0))
    throw InputError(fmt::format(
        "{}: expected a positive number up to 1e6 (currency per GPU-hour), got '{}'", flag, text));
  return v;
}

std::int64_t parse_train_tokens(const std::string& flag, const std::string& text) {
  return parse_decimal_count(flag, text, 1, kMaxTrainTokens);
}

PlanCost plan_cost(const PlanConfig& c, std::int64_t gpus, const CostRequest& q) {
  if (!c.feasible || c.time.step_time_s <= 0 || c.tokens_per_step <= 0)
    throw std::logic_error("plan_cost: config " + c.label() + " has no step time");
  PlanCost k;
  k.gpus = gpus;
  k.step_time_s = c.time.step_time_s;
  k.tokens_per_step = c.tokens_per_step;
  const double G = static_cast<double>(gpus);
  k.gpu_hours_per_step = G * k.step_time_s / kSecondsPerHour;
  k.price_per_gpu_hour = q.price_per_gpu_hour;
  k.per_step = k.gpu_hours_per_step * k.price_per_gpu_hour;
  k.per_billion_tokens = k.per_step * 1e9 / k.tokens_per_step;
  k.train_tokens = q.train_tokens;
  if (q.train_tokens > 0) {
    // Whole steps: the last one is paid in full even if it overshoots T.
    const auto per = std::llround(k.tokens_per_step);
    k.run_steps = (q.train_tokens + per - 1) / per;
    k.run_hours = static_cast<double>(k.run_steps) * k.step_time_s / kSecondsPerHour;
    k.run_gpu_hours = k.run_hours * G;
    k.run_cost = k.run_gpu_hours * k.price_per_gpu_hour;
  }
  return k;
}

nlohmann::json cost_json(const PlanCost& k) {
  nlohmann::json j = nlohmann::json::object();
  if (k.price_per_gpu_hour > 0) {
    j["price_per_gpu_hour"] = k.price_per_gpu_hour;
    j["per_step"] = k.per_step;
    j["per_billion_tokens"] = k.per_billion_tokens;
  }
  if (k.train_tokens > 0) {
    j["train_tokens"] = k.train_tokens;
    j["run_steps"] = k.run_steps;
    j["run_hours"] = k.run_hours;
    j["run_gpu_hours"] = k.run_gpu_hours;
    if (k.price_per_gpu_hour > 0) j["run_cost"] = k.run_cost;
  }
  return j;
}

namespace {
// "1,234,567"
std::string grouped(double v) {
  auto s = fmt::format("{:.0f}", std::round(v));
  for (int i = static_cast<int>(s.size()) - 3; i > (s[0] == '-' ? 1 : 0); i -= 3)
    s.insert(static_cast<std::size_t>(i), ",");
  return s;
}
std::string money(double v) {
  return v >= 1e4 ? grouped(v) : fmt::format("{:.2f}", v);
}
}  // namespace

std::string cost_text(const PlanConfig& c, const PlanCost& k) {
  std::string out = fmt::format(
      "\ncost of {} ({} GPUs, step {:.3f} s, {} tokens per step; every GPU billed for the whole "
      "step):\n",
      c.label(), k.gpus, k.step_time_s, grouped(k.tokens_per_step));
  const bool price = k.price_per_gpu_hour > 0;
  if (price) {
    out += fmt::format(
        "  per step              {:>16}  ({} GPUs x {:.3f} s / 3600 x {:g} per GPU-hour)\n",
        money(k.per_step), k.gpus, k.step_time_s, k.price_per_gpu_hour);
    out += fmt::format("  per billion tokens    {:>16}  ({:.1f} steps of {} tokens)\n",
                       money(k.per_billion_tokens), 1e9 / k.tokens_per_step,
                       grouped(k.tokens_per_step));
  }
  if (k.train_tokens > 0) {
    out += fmt::format(
        "  run of {} tokens ({:.3g}): {} steps, {:.1f} hours = {:.1f} days wall clock, {} "
        "GPU-hours{}\n",
        grouped(static_cast<double>(k.train_tokens)), static_cast<double>(k.train_tokens),
        grouped(static_cast<double>(k.run_steps)), k.run_hours, k.run_hours / 24,
        grouped(k.run_gpu_hours),
        price ? fmt::format(", cost {}", money(k.run_cost)) : std::string());
  }
  return out;
}

}  // namespace ringsim
