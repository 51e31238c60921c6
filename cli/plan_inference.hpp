#pragma once
// `ringsim plan --inference`: the inference planner's flags in, its table or
// JSON out (the search is models/infer/search.hpp).
#include <string>

#include "proc/run_spec.hpp"

namespace ringsim::cli {

struct InferencePlanFlags {
  proc::WorkloadFlags w;
  proc::HardwareFlags hw;
  std::string context, cached, gpus, tp, cp, layout, layers, top;
  std::string ttft_target, batch, decode_tokens, price, variant;
  bool json = false;
};

int plan_inference(const InferencePlanFlags& f);

}  // namespace ringsim::cli
