#pragma once
// Training memory per device of one configuration, itemised by term and by
// the phase in which it is live (docs/plan.md): persistent state, the loss,
// one layer's backward, and a fixed overhead.
#include <cstdint>
#include <string>
#include <vector>

#include "models/plan/basics.hpp"

namespace ringsim {

struct PlanMemoryItem {
  std::string name;
  double bytes = 0;
  std::string phase;  // persistent | loss | layer_backward | overhead
  std::string formula;
};

struct PlanMemory {
  std::vector<PlanMemoryItem> items;
  double persistent = 0, loss_phase = 0, backward_phase = 0, overhead = 0;
  double total = 0;  // persistent + max(loss, backward) + overhead
  std::string peak_phase;
  const PlanMemoryItem& largest() const;
};

// Memory of one config (the request's context); shape rules are not checked.
PlanMemory training_memory(const PlanRequest& r, const Hardware& hw, Layout layout, std::int64_t cp,
                           std::int64_t tp, std::int64_t micro_batch);

}  // namespace ringsim
