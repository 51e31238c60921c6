#pragma once
// `ringsim plan --inference`: the inference planner's flags in, its table or
// JSON out (the search is models/infer/search.hpp).
#include <string>

#include "models/core/catalog.hpp"
#include "models/infer/infer.hpp"
#include "proc/run_spec.hpp"

namespace ringsim::cli {

struct InferencePlanFlags {
  proc::WorkloadFlags w;
  proc::HardwareFlags hw;
  std::string context, cached, gpus, tp, cp, layout, layers, top;
  std::string ttft_target, batch, decode_tokens, price, variant, precision = "bf16";
  bool json = false, fail_if_none = false;
};

int plan_inference(const InferencePlanFlags& f);

// --precision bf16|fp8 onto an inference request: fp8 puts the MLP's weights
// in FP8 and its GEMMs at the device's FP8 rate (at the power limit), as Meta
// served Llama 3 405B. Throws InputError naming --precision for a device
// without FP8 tensor cores.
void set_infer_precision(InferRequest& r, const std::string& precision, const Catalog& cat,
                         const Hardware& hw);

}  // namespace ringsim::cli
