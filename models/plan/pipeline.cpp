#include "models/plan/pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/plan/schedule.hpp"

namespace ringsim {

double head_layer_equivalents(const ModelShape& s, std::int64_t context, bool causal) {
  const double attn = 12.0 * s.heads * s.head_dim * static_cast<double>(context);
  const double layer = 6.0 * static_cast<double>(layer_params(s)) + (causal ? attn / 2 : attn);
  return 6.0 * static_cast<double>(embedding_params(s)) / layer;
}

namespace {

// `layers` units over `p` stages; the head weighs `head` units.
std::vector<int> split_units(int layers, int p, double head) {
  std::vector<int> n(static_cast<size_t>(p), layers / p);
  if (p == 1) return n;
  auto load = [&](int i) { return n[static_cast<size_t>(i)] + (i == p - 1 ? head : 0.0); };
  auto middle = [&](int i) { return i > 0 && i < p - 1; };
  // Least loaded stage; on a tie a middle stage, then the lower index.
  auto lightest = [&](int skip) {
    int best = -1;
    for (int i = 0; i < p; ++i) {
      if (i == skip) continue;
      if (best < 0 || load(i) < load(best) || (load(i) == load(best) && middle(i) && !middle(best)))
        best = i;
    }
    return best;
  };
  for (int extra = layers % p; extra > 0; --extra) ++n[static_cast<size_t>(lightest(-1))];
  // Llama 3's balancing: move layers off an edge stage that paces the pipeline.
  for (int guard = 0; guard < layers; ++guard) {
    int heavy = 0;
    for (int i = 1; i < p; ++i)
      if (load(i) > load(heavy)) heavy = i;
    if (middle(heavy) || n[static_cast<size_t>(heavy)] <= 1) break;
    const int to = lightest(heavy);
    const double before = load(heavy);
    --n[static_cast<size_t>(heavy)];
    ++n[static_cast<size_t>(to)];
    double after = 0;
    for (int i = 0; i < p; ++i) after = std::max(after, load(i));
    if (after >= before) {  // no better: undo and stop
      ++n[static_cast<size_t>(heavy)];
      --n[static_cast<size_t>(to)];
      break;
    }
  }
  return n;
}

}  // namespace

std::vector<int> split_layers(const ModelShape& s, std::int64_t context, bool causal,
                              std::int64_t pp, int virtual_stages) {
  const auto p = static_cast<int>(pp);
  const double head = p > 1 ? head_layer_equivalents(s, context, causal) : 0;
  const int v = virtual_stages;
  // Interleaved: whole groups of V layers move, so every stage keeps a
  // multiple of V where the model's depth allows it.
  if (v > 1 && s.layers % v == 0 && s.layers / v >= p) {
    auto n = split_units(s.layers / v, p, head / v);
    for (auto& x : n) x *= v;
    return n;
  }
  return split_units(s.layers, p, head);
}

namespace {

// Balanced: split_layers; with V > 1 every stage must hold whole chunks.
StageSplit balanced_split(const PlanRequest& r, std::int64_t pp, int v) {
  StageSplit out;
  out.layout = PipelineLayout::Balanced;
  out.layers = split_layers(r.shape, r.context, r.causal, pp, v);
  if (v > 1)
    for (int n : out.layers)
      if (n % v != 0) {
        out.rule = fmt::format(
            "interleaved 1F1B needs every stage's layers ({}) divisible by pp-virtual {}",
            layers_text(out.layers), v);
        break;
      }
  return out;
}

// Even, or embedding-loss with `extra` = 2 units: (L + extra) / pp per stage.
StageSplit even_split(const PlanRequest& r, std::int64_t pp, int v, int extra) {
  StageSplit out;
  out.layout = extra ? PipelineLayout::EmbeddingLoss : PipelineLayout::Even;
  const int units = r.shape.layers + extra;
  const auto chunks = pp * v;
  if (units % chunks != 0) {
    out.rule = fmt::format("pp-layout {} needs {} ({}) divisible by pp x pp-virtual = {}",
                           to_string(out.layout),
                           extra ? "the layers + embedding + loss" : "the layers", units, chunks);
    return out;
  }
  if (units / pp - extra / 2 < 1) {
    out.rule = fmt::format("pp-layout {} leaves an edge stage of pp {} without a layer",
                           to_string(out.layout), pp);
    return out;
  }
  out.layers.assign(static_cast<size_t>(pp), static_cast<int>(units / pp));
  out.layers.front() -= extra / 2;
  out.layers.back() -= extra / 2;
  return out;
}

// Megatron's uneven edges: first and last given, the middle stages even.
StageSplit edge_split(const PlanRequest& r, std::int64_t pp, int v) {
  StageSplit out;
  out.layout = PipelineLayout::Even;
  out.edges_given = true;
  const int L = r.shape.layers, first = r.pp_first_layers, last = r.pp_last_layers;
  const auto middle = pp - 2;
  const int rest = L - first - last;
  if (pp < 2 || rest < 0 || (middle == 0 && rest != 0) || (middle > 0 && rest % middle != 0) ||
      (middle > 0 && rest / middle < 1)) {
    out.rule = fmt::format(
        "--pp-first-stage-layers {} and --pp-last-stage-layers {} leave {} layers, which do not "
        "split evenly over the {} middle stages of pp {}",
        first, last, rest, std::max<std::int64_t>(middle, 0), pp);
    return out;
  }
  out.layers.assign(static_cast<size_t>(pp), middle > 0 ? static_cast<int>(rest / middle) : 0);
  out.layers.front() = first;
  out.layers.back() = last;
  for (int n : out.layers)
    if (n % v != 0) {
      out.rule =
          fmt::format("interleaved 1F1B needs every stage's layers ({}) divisible by pp-virtual {}",
                      layers_text(out.layers), v);
      break;
    }
  return out;
}

}  // namespace

std::string StageSplit::text() const {
  if (edges_given)
    return fmt::format("first {}, last {}", layers.empty() ? 0 : layers.front(),
                       layers.empty() ? 0 : layers.back());
  return to_string(layout);
}

StageSplit stage_split(const PlanRequest& r, std::int64_t pp, int v) {
  if (r.pp_first_layers > 0 || r.pp_last_layers > 0) return edge_split(r, pp, v);
  switch (r.pp_layout) {
    case PipelineLayout::Balanced:
      return balanced_split(r, pp, v);
    case PipelineLayout::Even:
      return even_split(r, pp, v, 0);
    case PipelineLayout::EmbeddingLoss:
      return even_split(r, pp, v, 2);
    case PipelineLayout::Auto:
      break;
  }
  // Auto: the balanced split where it holds whole chunks (every existing
  // plan unchanged), else the layouts Megatron users run.
  auto b = balanced_split(r, pp, v);
  if (b.rule.empty()) return b;
  for (int extra : {2, 0})
    if (auto e = even_split(r, pp, v, extra); e.rule.empty()) return e;
  return b;
}

std::string layers_text(const std::vector<int>& layers) {
  std::string out;
  for (size_t i = 0; i < layers.size();) {
    size_t j = i;
    while (j < layers.size() && layers[j] == layers[i]) ++j;
    if (!out.empty()) out += ", ";
    out += j - i > 1 ? fmt::format("{} x{}", layers[i], j - i) : fmt::format("{}", layers[i]);
    i = j;
  }
  return out;
}

double schedule_slots(std::int64_t p, int v, std::int64_t m) {
  return static_cast<double>(m) + static_cast<double>(p - 1) / v;
}

double bubble_fraction(std::int64_t p, int v, std::int64_t m) {
  return static_cast<double>(p - 1) / v / schedule_slots(p, v, m);
}

double in_flight_microbatches(std::int64_t p, int v, std::int64_t m, std::int64_t stage) {
  if (v <= 1) return static_cast<double>(std::min(m, p - stage));
  const std::int64_t chunks = std::min(2 * (p - stage - 1) + (v - 1) * p + 1, m * v);
  return static_cast<double>(chunks) / v;
}

double stage_params(const ModelShape& s, const std::vector<int>& layers, std::int64_t stage) {
  const auto p = static_cast<std::int64_t>(layers.size());
  double n = static_cast<double>(layers[static_cast<size_t>(stage)]) *
             static_cast<double>(layer_params(s));
  if (stage == 0) n += static_cast<double>(embedding_params(s));
  if (stage == p - 1) n += static_cast<double>(embedding_params(s)) + s.d_model;
  return n;
}

StageMemoryView stage_view(const PlanRequest& r, const std::vector<int>& layers,
                           const PipelineChoice& pc, std::int64_t microbatches,
                           std::int64_t stage) {
  StageMemoryView v;
  v.stage = stage;
  v.stages = pc.pp;
  const auto sched = pc.effective();
  v.layers = layers[static_cast<size_t>(stage)];
  v.params = device_params(r.shape, sched, layers, stage);
  v.devices = r.gpus / pc.pp;
  v.embedding = embedding_share(sched, pc.pp, stage) > 0;
  v.head = head_share(sched, pc.pp, stage) > 0;
  v.in_flight = schedule_in_flight(sched, pc.pp, pc.virtual_stages, microbatches, stage);
  return v;
}

PlanMemory pipeline_memory(const PlanRequest& r, const Hardware& hw, Layout layout, std::int64_t cp,
                           std::int64_t tp, std::int64_t micro_batch,
                           const std::vector<int>& layers, const PipelineChoice& pc,
                           std::int64_t microbatches) {
  PlanMemory worst;
  for (std::int64_t i = 0; i < pc.pp; ++i) {
    const auto v = stage_view(r, layers, pc, microbatches, i);
    auto m = training_memory(r, hw, layout, cp, tp, micro_batch, &v);
    if (i == 0 || m.total > worst.total) worst = std::move(m);
  }
  return worst;
}

PipelineP2P pipeline_p2p(const PlanRequest& r, const Hardware& hw, std::int64_t cp, std::int64_t tp,
                         std::int64_t block, std::int64_t micro_batch, std::int64_t pp) {
  PipelineP2P x;
  if (pp <= 1) return x;
  // A bf16 activation of the device's tokens; sequence parallelism leaves
  // 1/tp of it on each TP rank (Megatron's scatter/gather, arXiv 2104.04473
  // sec. 4.1), so each rank sends its slice to its counterpart.
  x.message_bytes = static_cast<double>(block) * static_cast<double>(micro_batch) *
                    r.shape.d_model * 2.0 / static_cast<double>(tp);
  // Neighbours are tp x cp ranks apart; the pipeline spans pp x tp x cp
  // ranks. The slowest boundary paces the schedule: when the span leaves the
  // NVLink domain some boundary crosses the NIC, with all tp x cp ranks of a
  // stage sending at once (ring_bandwidth's stride: they share the NICs).
  const std::int64_t stride = tp * cp, span = pp * stride;
  x.bandwidth = hw.ring_bandwidth(span, stride);
  x.latency = hw.ring_latency(span);
  x.inter_node =
      !hw.bandwidth_override && (hw.platform == Platform::FatTree ||
                                 (hw.platform == Platform::Nodes && span > hw.nvlink_group()));
  x.link = x.inter_node ? hw.inter_name : hw.intra_name;
  x.message_s = x.message_bytes / x.bandwidth + x.latency;
  return x;
}

std::string pipeline_rule(const PlanRequest&, const PipelineChoice& pc, const StageSplit& split,
                          std::int64_t microbatches) {
  if (pc.pp <= 1) return {};
  if (!split.rule.empty()) return split.rule;
  if (auto rule = schedule_rule(pc.effective(), pc.pp, microbatches); !rule.empty()) return rule;
  if (pc.virtual_stages > 1 && microbatches % pc.pp != 0)
    return fmt::format(
        "interleaved 1F1B needs the microbatches ({}) to be a multiple of pp ({}) (Megatron's "
        "rule)",
        microbatches, pc.pp);
  return {};
}

}  // namespace ringsim
