#include "experiments/list.hpp"

namespace ringsim::exp {

const std::vector<Experiment>& experiments() {
  static const std::vector<Experiment> all{minblock_table_experiment(),
                                           memory_scaling_experiment(),
                                           kernel_curves_experiment(),
                                           causal_balance_experiment(),
                                           layouts_experiment(),
                                           overlap_knee_experiment(),
                                           scale_experiment(),
                                           plan_cases_experiment(),
                                           inference_scaling_experiment(),
                                           seed_reproduction_experiment(),
                                           packed_documents_experiment(),
                                           moe_long_context_experiment()};
  return all;
}

const Experiment* find_experiment(const std::string& name) {
  for (const auto& e : experiments())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace ringsim::exp
