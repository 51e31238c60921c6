#include "models/plan/schedule.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/plan/framework.hpp"
#include "models/plan/pipeline.hpp"

namespace ringsim {

double schedule_bubble_slots(PipelineSchedule s, std::int64_t p, int v, const StageTimes& t) {
  const double pm1 = static_cast<double>(p - 1), fb = t.f + t.b;
  if (fb <= 0) return 0;
  switch (s) {
    case PipelineSchedule::OneFOneB:
      return pm1;
    case PipelineSchedule::Interleaved:
      return pm1 / v;
    case PipelineSchedule::ZbH1:
      return pm1 * std::max(0.0, fb - 2 * t.w) / fb;
    case PipelineSchedule::ZbV:
      return pm1 * std::max(0.0, fb - 3 * t.w) / fb;
    case PipelineSchedule::DualPipe:
      return std::max(0.0, static_cast<double>(p) / 2 - 1) * std::max(0.0, fb + t.b - 3 * t.w) / fb;
  }
  return pm1;
}

std::string bubble_formula(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::OneFOneB:
      return "(p-1)(F+B)";
    case PipelineSchedule::Interleaved:
      return "(p-1)(F+B)/V";
    case PipelineSchedule::ZbH1:
      return "(p-1)(F+B-2W)";
    case PipelineSchedule::ZbV:
      return "(p-1)(F+B-3W)";
    case PipelineSchedule::DualPipe:
      return "(p/2-1)(F&B+B-3W), F&B = F+B";
  }
  return "";
}

std::string bubble_slots_formula(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::ZbH1:
      return "(p-1)(F+B-2W)/(F+B)";
    case PipelineSchedule::ZbV:
      return "(p-1)(F+B-3W)/(F+B)";
    case PipelineSchedule::DualPipe:
      return "(p/2-1)(F&B+B-3W)/(F+B)";
    case PipelineSchedule::OneFOneB:
    case PipelineSchedule::Interleaved:
      break;
  }
  return "(p-1)/V";
}

int schedule_chunks(PipelineSchedule s, int v) {
  if (s == PipelineSchedule::Interleaved) return v;
  return s == PipelineSchedule::ZbV ? 2 : 1;
}

int schedule_split_groups(PipelineSchedule s, int v) {
  if (s == PipelineSchedule::Interleaved) return v;
  return s == PipelineSchedule::ZbV ? 2 : 1;
}

double schedule_in_flight(PipelineSchedule s, std::int64_t p, int v, std::int64_t m,
                          std::int64_t stage) {
  switch (s) {
    case PipelineSchedule::Interleaved:
      return in_flight_microbatches(p, v, m, stage);
    case PipelineSchedule::ZbV:  // 1F1B's peak, on every device (Qi et al. sec. 6)
      return static_cast<double>(std::min(m, p));
    case PipelineSchedule::DualPipe:  // PP + 1 (DeepSeek-V3 Table 2)
      return static_cast<double>(std::min(m, p + 1));
    case PipelineSchedule::OneFOneB:
    case PipelineSchedule::ZbH1:  // 1F1B's (Qi et al. sec. 2.1)
      break;
  }
  return in_flight_microbatches(p, 1, m, stage);
}

double embedding_share(PipelineSchedule s, std::int64_t p, std::int64_t i) {
  if (s == PipelineSchedule::DualPipe) return i == 0 || i == p - 1 ? (p > 1 ? 0.5 : 1) : 0;
  return i == 0 ? 1 : 0;
}

double head_share(PipelineSchedule s, std::int64_t p, std::int64_t i) {
  if (s == PipelineSchedule::DualPipe) return embedding_share(s, p, i);
  if (s == PipelineSchedule::ZbV) return i == 0 ? 1 : 0;  // the V ends where it began
  return i == p - 1 ? 1 : 0;
}

double device_layers(PipelineSchedule s, const std::vector<int>& layers, std::int64_t i) {
  const auto p = static_cast<std::int64_t>(layers.size());
  const double own = layers[static_cast<size_t>(i)];
  if (s != PipelineSchedule::DualPipe) return own;
  return (own + layers[static_cast<size_t>(p - 1 - i)]) / 2;
}

double device_params(const ModelShape& m, PipelineSchedule s, const std::vector<int>& layers,
                     std::int64_t i) {
  const auto p = static_cast<std::int64_t>(layers.size());
  if (s == PipelineSchedule::DualPipe && p > 1) {
    const auto j = p - 1 - i;
    return stage_params(m, layers, i) + (j == i ? 0 : stage_params(m, layers, j));
  }
  if (s == PipelineSchedule::ZbV) {
    double n = layers[static_cast<size_t>(i)] * static_cast<double>(layer_params(m));
    if (i == 0) n += 2.0 * static_cast<double>(embedding_params(m)) + m.d_model;
    return n;
  }
  return stage_params(m, layers, i);
}

std::string schedule_rule(PipelineSchedule s, std::int64_t p, std::int64_t m) {
  if (s != PipelineSchedule::DualPipe) return {};
  // Microbatches enter from both ends, half each way.
  if (p % 2 != 0)
    return fmt::format(
        "dualpipe needs an even number of stages (pp {}), as it pairs stage i with "
        "stage pp-1-i",
        p);
  if (m % 2 != 0 || m < p)
    return fmt::format(
        "dualpipe needs an even number of microbatches, at least pp ({}), got {} (half enter "
        "from each end)",
        p, m);
  return {};
}

std::vector<PipelineSchedule> framework_schedules(const PlanRequest& r) {
  using S = PipelineSchedule;
  if (r.any_layout) return {S::OneFOneB, S::Interleaved, S::ZbH1, S::ZbV, S::DualPipe};
  switch (r.framework) {
    case Framework::PytorchFsdp:  // torch.distributed.pipelining, as TorchTitan runs it
      return {S::OneFOneB, S::Interleaved, S::ZbV};
    case Framework::Megatron:  // Megatron-Core's pipeline_parallel/schedules.py
      return {S::OneFOneB, S::Interleaved};
    case Framework::JaxXla:
      return {S::OneFOneB};
  }
  return {S::OneFOneB};
}

std::vector<PipelineSchedule> searched_schedules(const PlanRequest& r) {
  if (!r.pp_schedules.empty()) return r.pp_schedules;
  if (r.pp_virtual > 1) return {PipelineSchedule::Interleaved};
  auto v = framework_schedules(r);
  v.erase(std::remove(v.begin(), v.end(), PipelineSchedule::Interleaved), v.end());
  return v;
}

std::string schedule_json_name(PipelineSchedule s) {
  return s == PipelineSchedule::Interleaved ? "interleaved-1f1b" : to_string(s);
}

}  // namespace ringsim
