#pragma once
// Training memory per device of one configuration, itemised by term, by the
// phase in which it is live (docs/plan.md): persistent state, the loss, one
// layer's backward, the runtime's overhead; and by the pool it comes from:
// the framework's tensors (what torch.cuda.max_memory_allocated counts), the
// caching allocator's reserve above them (max_memory_reserved counts both),
// and the runtime outside the allocator (the driver's reserve, the CUDA
// context, NCCL's buffers: what nvidia-smi adds).
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
  std::string pool = "tensors";  // tensors | allocator | runtime
};

// One pipeline stage as the memory model sees it (built by
// models/plan/pipeline.cpp `stage_view`; docs/plan.md "Pipeline parallelism").
struct StageMemoryView {
  std::int64_t stage = 0, stages = 1;
  int layers = 0;            // layers on this stage
  double params = 0;         // parameters this stage holds (layers + embedding/head on the edges)
  std::int64_t devices = 0;  // the stage's devices, tp x cp x dp = gpus / pp
  bool embedding = true;     // first stage: the input embedding
  bool head = true;          // last stage: the output head and the loss
  double in_flight = 1;      // microbatches whose saved activations the stage holds
};

struct PlanMemory {
  std::int64_t stage = -1;  // pipeline stage these numbers are for (-1: no pipeline)
  std::vector<PlanMemoryItem> items;
  double persistent = 0, loss_phase = 0, backward_phase = 0, overhead = 0;
  // allocated: the tensors' peak, persistent + max(loss, backward);
  // reserved: + the allocator's reserve; total: + the runtime (the device).
  double allocated = 0, reserved = 0;
  double total = 0;  // persistent + max(loss, backward) + overhead
  std::string peak_phase;
  const PlanMemoryItem& largest() const;
  // The items, largest first (ties: the order they were added).
  std::vector<PlanMemoryItem> by_size() const;
};

// Memory of one config (the request's context); shape rules are not checked.
// `stage`: one pipeline stage's layers, parameters and microbatches in flight
// (nullptr: no pipeline, every layer on every device).
PlanMemory training_memory(const PlanRequest& r, const Hardware& hw, Layout layout, std::int64_t cp,
                           std::int64_t tp, std::int64_t micro_batch,
                           const StageMemoryView* stage = nullptr);

}  // namespace ringsim
