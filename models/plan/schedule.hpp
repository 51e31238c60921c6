#pragma once
// Pipeline schedules for the training planner (docs/plan.md "Pipeline
// schedules"): each one's bubble, the activations and parameters a device
// holds, and its rules, from the papers' own formulas. Times are the slowest
// stage's per microbatch, named as DeepSeek-V3's report names them ("DeepSeek-V3
// Technical Report", arXiv 2412.19437, sec. 3.2.1 and Table 2): F the forward,
// B the whole backward (input and weight gradients, recomputation included),
// W the weight-gradient part of B.
//  - 1f1b: (p-1)(F+B) (Narayanan et al. 2021, arXiv 2104.04473, sec. 2.2.1);
//  - interleaved: (p-1)(F+B)/V (sec. 2.2.2);
//  - zb-h1: (p-1)(F+B-2W) at 1F1B's memory (Qi et al. 2024, "Zero Bubble
//    Pipeline Parallelism", arXiv 2401.10241, sec. 2.1, whose B is the input
//    gradient only: (p-1)(F+B_in-W); Table 2's ZB1P);
//  - zb-v: two model chunks per device in a V (Qi et al. sec. 6): 1F1B's peak
//    activations on every device, twice its P2P messages, and ZB-H2's bubble
//    (p-1)(F+B-3W), which is zero at F = B_in = W as the paper's comparison
//    gives; ringsim's reading where F, B, W differ (docs/plan.md says so);
//  - dualpipe: (p/2-1)(F&B+B-3W) with F&B = F+B (an overlapped forward and
//    backward: the compute of both, their all-to-alls hidden), two stages'
//    parameters per device (stages i and p-1-i), p+1 microbatches'
//    activations (Table 2).
// Every bubble is floored at zero.
#include <cstdint>
#include <string>
#include <vector>

#include "models/plan/basics.hpp"

namespace ringsim {

struct StageTimes {
  double f = 0, b = 0, w = 0;
};

// The bubble in units of the slowest stage's microbatch (F + B): the slots
// the schedule adds to m. 1f1b and interleaved: (p-1)/V exactly as before.
double schedule_bubble_slots(PipelineSchedule s, std::int64_t p, int v, const StageTimes& t);
// The formula, for --explain: "(p-1)(F+B-2W)".
std::string bubble_formula(PipelineSchedule s);
// The same bubble in the slowest stage's microbatches, as
// schedule_bubble_slots computes it ("(p-1)/V" for 1F1B and interleaved).
std::string bubble_slots_formula(PipelineSchedule s);
// Stage-to-stage messages per microbatch per direction: the model chunks a
// microbatch crosses on one device (interleaved V, zb-v 2, else 1).
int schedule_chunks(PipelineSchedule s, int v);
// Layers per device come in groups of this many (zb-v: its two chunks).
int schedule_split_groups(PipelineSchedule s, int v);
// Microbatches (full-stage equivalents) whose saved activations device i
// holds at its peak.
double schedule_in_flight(PipelineSchedule s, std::int64_t p, int v, std::int64_t m,
                          std::int64_t stage);
// Share of the microbatches whose input embedding / output head and loss
// device i runs: 1 or 0, and 1/2 on dualpipe's edge devices (each holds the
// first and the last stage, running each for half the microbatches).
double embedding_share(PipelineSchedule s, std::int64_t p, std::int64_t i);
double head_share(PipelineSchedule s, std::int64_t p, std::int64_t i);
// Layers of device i a microbatch passes through, on average: its stage's,
// or dualpipe's mean of stages i and p-1-i.
double device_layers(PipelineSchedule s, const std::vector<int>& layers, std::int64_t i);
// Parameters device i holds (dualpipe: both its stages'; zb-v: the
// embedding and the head both on device 0).
double device_params(const ModelShape& m, PipelineSchedule s, const std::vector<int>& layers,
                     std::int64_t i);
// A rule the schedule breaks (one line), or "".
std::string schedule_rule(PipelineSchedule s, std::int64_t p, std::int64_t m);
// What the framework ships (docs/plan.md's table), and what `auto` searches:
// the framework's schedules, interleaved only (and alone) under --pp-virtual
// above 1; --framework any: every schedule.
std::vector<PipelineSchedule> framework_schedules(const PlanRequest& r);
std::vector<PipelineSchedule> searched_schedules(const PlanRequest& r);
// The JSON and label name: 1f1b, interleaved-1f1b, zb-h1, zb-v, dualpipe.
std::string schedule_json_name(PipelineSchedule s);

}  // namespace ringsim
