#pragma once
// Pipeline parallelism for the training planner (docs/plan.md "Pipeline
// parallelism"): how the layers split over stages, the 1F1B and interleaved
// 1F1B schedules' bubble and microbatches in flight (Narayanan et al. 2021,
// "Efficient Large-Scale Language Model Training on GPU Clusters Using
// Megatron-LM", arXiv 2104.04473, sec. 2.2), the point-to-point activation
// messages between stages, the shape rules, and the worst stage's memory.
//
// Placement, innermost first: TP, CP, PP, DP (Llama 3's 4D parallelism, "The
// Llama 3 Herd of Models", arXiv 2407.21783, sec. 3.3.2), so pipeline
// neighbours are tp x cp ranks apart.
#include <cstdint>
#include <string>
#include <vector>

#include "models/plan/basics.hpp"
#include "models/plan/memory.hpp"

namespace ringsim {

// Stages and virtual stages (model chunks) per device; virtual_stages 1 is
// plain 1F1B.
struct PipelineChoice {
  std::int64_t pp = 1;
  int virtual_stages = 1;
  // The schedule (models/plan/schedule.hpp); virtual_stages above 1 means
  // interleaved whatever this says.
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  PipelineSchedule effective() const {
    return virtual_stages > 1 ? PipelineSchedule::Interleaved : schedule;
  }
};

// The output head and loss's model FLOPs per token in units of one layer's
// (PaLM's counting, as model_flops_per_token: 6 D V against 6 x layer
// params + the layer's attention term). The input embedding is a lookup: 0.
double head_layer_equivalents(const ModelShape& s, std::int64_t context, bool causal);

// Layers per stage (size pp, each >= 1; requires 1 <= pp <= layers). Start
// from floor(L / pp) each and hand the L mod pp extra layers one at a time to
// the least-loaded stage, middle stages first on a tie, so the first and last
// stages get the floor, as Llama 3 does for 405B (126 = 7 + 14 x 8 + 7). Load
// = layers + the head's layer equivalents on the last stage. Then, while the
// most loaded stage is an edge stage, move one of its layers to the least
// loaded stage if that lowers the most loaded stage's load. Interleaved
// (virtual_stages V > 1, V dividing the layers): the same in groups of V
// layers, so each stage's count stays a multiple of V.
std::vector<int> split_layers(const ModelShape& s, std::int64_t context, bool causal,
                              std::int64_t pp, int virtual_stages = 1);

// The split a request asks for (--pp-layout, --pp-first/last-stage-layers):
//  - balanced: split_layers above (Llama 3's edge-light split);
//  - even: L / pp layers per stage (Megatron's default), (L / pp) % V == 0;
//  - embedding-loss: the input embedding and the loss count as one layer
//    each (Megatron's --account-for-embedding-in-pipeline-split and
//    --account-for-loss-in-pipeline-split, as NeMo's Llama 3.1 405B recipes
//    run): (L + 2) / pp units per stage, (L + 2) / (pp V) per model chunk,
//    the first stage's first chunk and the last stage's last chunk one
//    transformer layer short (405B, pp 8, V 8: 15, 16 x6, 15);
//  - first/last stage layers given: those on the edge stages, the rest even
//    over the middle ones (Megatron's --decoder-first/last-pipeline-num-layers);
//  - auto: balanced where its stages split into V chunks, else
//    embedding-loss, else even.
// `rule` says why the split cannot be made ("" when it can).
struct StageSplit {
  std::vector<int> layers;
  PipelineLayout layout = PipelineLayout::Balanced;  // never Auto
  std::string rule;
  std::string text() const;  // "embedding-loss" or "first 7, last 7"
  bool edges_given = false;
};
StageSplit stage_split(const PlanRequest& r, std::int64_t pp, int virtual_stages);

// "7, 8 x14, 7": runs of equal counts.
std::string layers_text(const std::vector<int>& layers);

// The schedule's length in microbatch slots of the slowest stage: m + (p-1)/V
// (Narayanan et al. sec. 2.2.1 and 2.2.2: the bubble is (p-1)/V slots).
double schedule_slots(std::int64_t p, int v, std::int64_t m);
// Bubble as a fraction of the pipeline's time: ((p-1)/V) / (m + (p-1)/V);
// (p-1)/(m+p-1) for plain 1F1B.
double bubble_fraction(std::int64_t p, int v, std::int64_t m);

// Microbatches (full-stage equivalents) whose saved activations stage i holds
// at its peak. 1F1B: min(m, p - i) (Megatron's warm-up of p - i - 1 forwards
// plus the one in flight). Interleaved: Megatron's warm-up of
// 2 (p - i - 1) + (V - 1) p chunk forwards plus one, at most m V chunks, each
// 1/V of the stage: p + (p - 1)/V on the first stage (sec. 2.2.2's
// p (1 + (p - 1)/(p V))).
double in_flight_microbatches(std::int64_t p, int v, std::int64_t m, std::int64_t stage);

// Parameters stage i holds: its layers, + the input embedding on the first,
// + the output head and the final norm on the last.
double stage_params(const ModelShape& s, const std::vector<int>& layers, std::int64_t stage);

StageMemoryView stage_view(const PlanRequest& r, const std::vector<int>& layers,
                           const PipelineChoice& pc, std::int64_t microbatches, std::int64_t stage);

// Memory of every stage; returns the worst (largest total, the first on a
// tie), its `stage` set.
PlanMemory pipeline_memory(const PlanRequest& r, const Hardware& hw, Layout layout, std::int64_t cp,
                           std::int64_t tp, std::int64_t micro_batch,
                           const std::vector<int>& layers, const PipelineChoice& pc,
                           std::int64_t microbatches);

// One activation (forward) or gradient (backward) message across a stage
// boundary, per device.
struct PipelineP2P {
  double message_bytes = 0;  // block x micro-batch x d_model x 2 B / tp
  double bandwidth = 0, latency = 0;
  double message_s = 0;     // bytes / bandwidth + latency
  std::string link;         // the link's name (catalog)
  bool inter_node = false;  // some stage boundary crosses the NIC
};
PipelineP2P pipeline_p2p(const PlanRequest& r, const Hardware& hw, std::int64_t cp, std::int64_t tp,
                         std::int64_t block, std::int64_t micro_batch, std::int64_t pp);

// A pipeline rule broken by this config (one line), or "": the split's own
// (stage_split's `rule`), and interleaved 1F1B's m a multiple of p
// (Megatron's rule). (pp dividing the devices and keeping a layer per stage
// are shape rules, models/plan/plan.cpp.)
std::string pipeline_rule(const PlanRequest& r, const PipelineChoice& pc, const StageSplit& split,
                          std::int64_t microbatches);

}  // namespace ringsim
