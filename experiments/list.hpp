#pragma once
// The experiments, one factory per exp_*.cpp; registry.cpp lists them in order.
#include "experiments/experiment.hpp"

namespace ringsim::exp {

Experiment minblock_table_experiment();
Experiment memory_scaling_experiment();
Experiment causal_balance_experiment();
Experiment layouts_experiment();
Experiment overlap_knee_experiment();
Experiment scale_experiment();
Experiment plan_cases_experiment();
Experiment kernel_curves_experiment();
Experiment inference_scaling_experiment();
Experiment seed_reproduction_experiment();
Experiment packed_documents_experiment();
Experiment moe_long_context_experiment();

}  // namespace ringsim::exp
