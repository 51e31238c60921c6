#pragma once
// What a training run costs and how long it takes, from one config's
// predicted step (docs/plan.md, "Cost"): per step, per billion tokens, and
// for a run of T tokens at a price per GPU-hour. Every device of the job is
// billed for the whole step, busy or not.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "models/plan/plan.hpp"

namespace ringsim {

// What the user asked for: either may be absent (0).
struct CostRequest {
  double price_per_gpu_hour = 0;  // currency per GPU-hour; 0: no price given
  std::int64_t train_tokens = 0;  // tokens of the whole run; 0: no run length given
  bool any() const { return price_per_gpu_hour > 0 || train_tokens > 0; }
};

struct PlanCost {
  std::int64_t gpus = 0;
  double step_time_s = 0, tokens_per_step = 0;
  double gpu_hours_per_step = 0;  // gpus x step / 3600
  double price_per_gpu_hour = 0;  // 0: no price, so no currency below
  double per_step = 0;            // gpu_hours_per_step x price
  double per_billion_tokens = 0;  // per_step x 1e9 / tokens_per_step (decimal billion)
  std::int64_t train_tokens = 0;  // 0: no run
  std::int64_t run_steps = 0;     // ceil(train_tokens / tokens_per_step)
  double run_hours = 0;           // run_steps x step / 3600 (wall clock)
  double run_gpu_hours = 0;       // run_hours x gpus
  double run_cost = 0;            // run_gpu_hours x price
};

// "--price-per-gpu-hour": a positive number up to 1e6; anything else throws
// InputError naming the flag.
double parse_price_per_gpu_hour(const std::string& flag, const std::string& text);
// "--train-tokens": decimal SI, as training runs are quoted (15T = 15e12, 1.5T,
// 300B), not the binary K/M/G/T of the other token flags; 1 .. 1e15.
std::int64_t parse_train_tokens(const std::string& flag, const std::string& text);

// The cost of a feasible config on `gpus` devices (throws std::logic_error
// for an infeasible one: it has no step time).
PlanCost plan_cost(const PlanConfig& c, std::int64_t gpus, const CostRequest& q);

// {"price_per_gpu_hour", "per_step", "per_billion_tokens"} with a price,
// {"train_tokens", "run_steps", "run_hours", "run_gpu_hours"} with a run
// length, "run_cost" with both.
nlohmann::json cost_json(const PlanCost& k);
// The same as indented lines, each with its arithmetic.
std::string cost_text(const PlanConfig& c, const PlanCost& k);

}  // namespace ringsim
