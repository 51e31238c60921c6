#include "models/analytic/report.hpp"

#include <fmt/format.h>

#include "models/analytic/memory.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/core/schema.hpp"
#include "models/core/summary_reader.hpp"

namespace ringsim {

namespace {

using nlohmann::json;

json chunk_scan_json(const ChunkScanInfo& c) {
  return {{"query_chunk_size", c.query_chunk},
          {"key_chunk_size", c.key_chunk},
          {"precision", c.precision},
          {"matmul_flops", c.matmul_flops},
          {"chunk_iterations_per_step", c.chunk_iterations_per_step},
          {"chunk_iteration_s", c.chunk_iteration_s},
          {"query_iteration_s", c.query_iteration_s},
          {"step_s", c.step_s},
          {"loop_s_per_step", c.loop_s_per_step},
          {"k_bytes", c.k_bytes},
          {"grad_bytes", c.grad_bytes}};
}

using Reader = SummaryReader;

ChunkScanInfo chunk_scan_from_json(const json& j, const std::string& origin) {
  const Reader r(j, origin);
  ChunkScanInfo c;
  c.query_chunk = r.integer("query_chunk_size");
  c.key_chunk = r.integer("key_chunk_size");
  c.precision = r.text("precision");
  c.matmul_flops = r.real("matmul_flops");
  c.chunk_iterations_per_step = r.integer("chunk_iterations_per_step");
  c.chunk_iteration_s = r.real("chunk_iteration_s");
  c.query_iteration_s = r.real("query_iteration_s");
  c.step_s = r.real("step_s");
  c.loop_s_per_step = r.real("loop_s_per_step");
  c.k_bytes = static_cast<int>(r.integer("k_bytes"));
  c.grad_bytes = static_cast<int>(r.integer("grad_bytes"));
  return c;
}

}  // namespace

RunSummary RunSummary::of(const Summary& s) {
  const auto& w = s.workload;
  RunSummary r;
  r.devices = w.devices;
  r.block = w.block;
  r.seq_len = w.seq_len();
  r.layout = to_string(w.layout);
  if (w.layout == Layout::Hybrid) {
    r.ulysses_degree = w.ulysses();
    r.ring_degree = w.ring_degree();
  }
  r.pass = to_string(w.pass);
  r.causal = w.causal;
  r.dtype = to_string(w.dtype);
  r.model = w.shape.name;
  r.heads = w.shape.heads;
  r.kv_heads = w.shape.kv_heads;
  r.head_dim = w.shape.head_dim;
  r.layers = w.layers;
  r.tp = w.tp;
  r.sequence_parallel = w.sequence_parallel;
  r.scope = w.scope == Scope::Layer ? "layer" : "attention";
  r.hardware = s.hardware;
  r.compute_s_per_step = s.compute_s_per_step;
  r.merge_s_per_step = s.merge_s_per_step;
  r.comm_s_per_step = s.comm_s_per_step;
  r.kernel = s.kernel;
  r.merge_style = s.merge_style;
  r.chunk_scan = s.chunk_scan;
  r.permutation = s.permutation;
  r.comm_link_kind = s.comm_link_kind;
  r.accumulate_s_per_step = s.accumulate_s_per_step;
  r.launch_s_per_step = s.launch_s_per_step;
  r.reduce_s = s.reduce_s;
  r.interference_compute = s.interference_compute;
  r.interference_memory = s.interference_memory;
  r.comm_ctas = s.comm_ctas;
  r.useful_flops = s.useful_flops;
  r.executed_flops = s.executed_flops;
  r.single_device_time_s = s.single_device_time_s;
  r.efficiency_vs_single_device = s.efficiency_vs_single_device;
  r.overlap = s.overlap ? "full" : "none";
  r.bytes_per_step = s.bytes_per_step;
  if (s.min_block > 0) r.min_block = s.min_block;
  r.overlapped = s.overlapped;
  r.time_s = s.time_s;
  r.ideal_time_s = s.ideal_time_s;
  r.efficiency = s.efficiency;
  r.exposed_comm_s = s.exposed_comm_s;
  r.compute_only_s = s.compute_only_s;
  r.collective_s = s.collective_s;
  r.other_s = s.other_s;
  r.pointwise_s = s.pointwise_s;
  r.tp_comm_s = s.tp_comm_s;
  r.ep_comm_s = s.ep_comm_s;
  if (w.shape.attention_chunk > 0) r.layer_kind = w.chunked_layer ? "chunked" : "global";
  if (is_moe(w.shape) && w.scope == Scope::Layer) {
    Moe m;
    m.experts = w.shape.experts;
    m.experts_per_token = w.shape.experts_per_token;
    m.shared_experts = w.shape.shared_experts;
    m.ep = w.ep;
    m.expert_tp = w.expert_tp > 0 ? w.expert_tp : std::max(1, w.tp);
    m.routing_seed = w.routing_seed;
    m.imbalance = s.moe_imbalance;
    m.experts_s = s.moe_compute_s;
    m.alltoall_bytes_per_gpu = s.ep_alltoall_bytes;
    r.moe = m;
  }
  r.memory_bytes_per_device = s.memory_bytes_per_device;
  // One GPU's buffers (a TP group's GPUs hold heads / tp each).
  for (const auto& it : attention_memory(tp_rank_workload(w)).items)
    r.memory_breakdown[it.name] = it.bytes;
  r.engine = s.engine;
  r.compute_model = s.compute_model;
  r.verdict = s.verdict;
  return r;
}

json RunSummary::to_json() const {
  json j;
  j["schema_version"] = kJsonSchemaVersion;
  j["devices"] = devices;
  j["block"] = block;
  j["seq_len"] = seq_len;
  j["layout"] = layout;
  if (ulysses_degree) j["ulysses_degree"] = *ulysses_degree;
  if (ring_degree) j["ring_degree"] = *ring_degree;
  j["pass"] = pass;
  j["causal"] = causal;
  j["dtype"] = dtype;
  j["model"] = model;
  j["heads"] = heads;
  j["kv_heads"] = kv_heads;
  j["head_dim"] = head_dim;
  j["layers"] = layers;
  j["tp"] = tp;
  j["sequence_parallel"] = sequence_parallel;
  j["scope"] = scope;
  j["layer_kind"] = layer_kind.empty() ? json(nullptr) : json(layer_kind);
  j["hardware"] = hardware;
  j["compute_s_per_step"] = compute_s_per_step;
  j["merge_s_per_step"] = merge_s_per_step;
  j["comm_s_per_step"] = comm_s_per_step;
  j["kernel"] = kernel;
  j["merge_style"] = merge_style;
  j["chunk_scan"] = chunk_scan ? chunk_scan_json(*chunk_scan) : json(nullptr);
  j["permutation"] = permutation ? json{{"where", permutation->where},
                                        {"bytes", permutation->bytes},
                                        {"seconds", permutation->seconds},
                                        {"charged", permutation->charged}}
                                 : json(nullptr);
  j["accumulate_s_per_step"] = accumulate_s_per_step;
  j["launch_s_per_step"] = launch_s_per_step;
  j["reduce_s"] = reduce_s;
  j["interference"] = {{"compute", interference_compute},
                       {"memory", interference_memory},
                       {"comm_ctas", comm_ctas},
                       {"link_kind", comm_link_kind}};
  j["useful_flops"] = useful_flops;
  j["executed_flops"] = executed_flops;
  j["single_device_time_s"] = single_device_time_s;
  j["efficiency_vs_single_device"] = efficiency_vs_single_device;
  j["overlap"] = overlap;
  j["bytes_per_step"] = bytes_per_step;
  j["min_block"] = min_block ? json(*min_block) : json(nullptr);
  j["overlapped"] = overlapped;
  j["time_s"] = time_s;
  j["ideal_time_s"] = ideal_time_s;
  j["efficiency"] = efficiency;
  j["exposed_comm_s"] = exposed_comm_s;
  j["compute_only_s"] = compute_only_s;
  j["collective_s"] = collective_s;
  j["other_s"] = other_s;
  j["pointwise_s"] = pointwise_s;
  j["tp_comm_s"] = tp_comm_s;
  j["ep_comm_s"] = ep_comm_s;
  j["moe"] = moe ? json{{"experts", moe->experts},
                        {"experts_per_token", moe->experts_per_token},
                        {"shared_experts", moe->shared_experts},
                        {"ep", moe->ep},
                        {"expert_tp", moe->expert_tp},
                        {"routing_seed", moe->routing_seed},
                        {"imbalance", moe->imbalance},
                        {"experts_s", moe->experts_s},
                        {"alltoall_bytes_per_gpu", moe->alltoall_bytes_per_gpu}}
                 : json(nullptr);
  j["memory_bytes_per_device"] = memory_bytes_per_device;
  j["memory_breakdown"] = memory_breakdown;
  j["engine"] = engine;
  j["compute_model"] = compute_model;
  j["verdict"] = verdict.to_json();
  if (sim) {
    const auto& s = *sim;
    j["analytic_time_s"] = s.analytic_time_s;
    j["analytic_efficiency"] = s.analytic_efficiency;
    j["platform"] = s.platform;
    j["network_model"] = s.network_model;
    if (s.inter_topology) j["inter_topology"] = *s.inter_topology;
    j["activities"] = s.activities;
    j["simulated_devices"] = s.simulated_devices;
    j["simulation_method"] = s.simulation_method;
    j["stalled_steps"] = {{"fwd", s.stalled_fwd}, {"bwd", s.stalled_bwd}};
    j["stalled_device_steps"] = s.stalled_device_steps;
    j["wait_s"] = s.wait_s;
    j["critical_device"] = s.critical_device;
    j["critical_device_busy_s"] = s.critical_device_busy_s;
    j["faults"] = s.faults;
    if (s.job) j["job"] = *s.job;
  }
  return j;
}

RunSummary RunSummary::from_json(const json& j, const std::string& origin) {
  const Reader r(j, origin);
  RunSummary s;
  // A summary from another schema would be read with the wrong meanings.
  if (const auto v = r.integer("schema_version"); v != kJsonSchemaVersion)
    throw InputError(fmt::format("{}: the summary's schema_version is {}; this ringsim reads {}",
                                 origin, v, kJsonSchemaVersion));
  s.devices = r.integer("devices");
  s.block = r.integer("block");
  s.seq_len = r.integer("seq_len");
  s.layout = r.text("layout");
  s.ulysses_degree = r.opt_integer("ulysses_degree");
  s.ring_degree = r.opt_integer("ring_degree");
  s.pass = r.text("pass");
  s.causal = r.flag("causal");
  s.dtype = r.text("dtype");
  s.model = r.text("model");
  s.heads = static_cast<int>(r.integer("heads"));
  s.kv_heads = static_cast<int>(r.integer("kv_heads"));
  s.head_dim = static_cast<int>(r.integer("head_dim"));
  s.layers = static_cast<int>(r.integer("layers"));
  s.tp = static_cast<int>(r.integer("tp"));
  s.sequence_parallel = r.flag("sequence_parallel");
  s.scope = r.text("scope");
  if (j.contains("layer_kind") && !j["layer_kind"].is_null()) s.layer_kind = r.text("layer_kind");
  s.hardware = r.text("hardware");
  s.compute_s_per_step = r.real("compute_s_per_step");
  s.merge_s_per_step = r.real("merge_s_per_step");
  s.comm_s_per_step = r.real("comm_s_per_step");
  s.kernel = r.text("kernel");
  s.merge_style = r.text("merge_style");
  if (const auto& c = r.at("chunk_scan"); !c.is_null())
    s.chunk_scan = chunk_scan_from_json(c, origin + ": chunk_scan");
  if (const auto& p = r.at("permutation"); !p.is_null()) {
    const Reader pr(p, origin + ": permutation");
    s.permutation = PermutationInfo{pr.text("where"), pr.count("bytes"), pr.real("seconds"),
                                    pr.flag("charged")};
  }
  s.accumulate_s_per_step = r.real("accumulate_s_per_step");
  s.launch_s_per_step = r.real("launch_s_per_step");
  s.reduce_s = r.real("reduce_s");
  {
    const auto& f = r.at("interference");
    if (!f.is_object() || !f.contains("compute") || !f["compute"].is_number() ||
        !f.contains("memory") || !f["memory"].is_number() || !f.contains("comm_ctas") ||
        !f["comm_ctas"].is_number_integer() || !f.contains("link_kind") ||
        !f["link_kind"].is_string())
      r.wrong("interference", "an object with compute, memory, comm_ctas and link_kind");
    s.interference_compute = f["compute"].get<double>();
    s.interference_memory = f["memory"].get<double>();
    s.comm_ctas = f["comm_ctas"].get<int>();
    s.comm_link_kind = f["link_kind"].get<std::string>();
  }
  s.useful_flops = r.real("useful_flops");
  s.executed_flops = r.real("executed_flops");
  s.single_device_time_s = r.real("single_device_time_s");
  s.efficiency_vs_single_device = r.real("efficiency_vs_single_device");
  s.overlap = r.text("overlap");
  s.bytes_per_step = r.count("bytes_per_step");
  (void)r.at("min_block");  // present, null when there is none
  s.min_block = r.opt_integer("min_block");
  s.overlapped = r.flag("overlapped");
  s.time_s = r.real("time_s");
  s.ideal_time_s = r.real("ideal_time_s");
  s.efficiency = r.real("efficiency");
  s.exposed_comm_s = r.real("exposed_comm_s");
  s.compute_only_s = r.real("compute_only_s");
  s.collective_s = r.real("collective_s");
  s.other_s = r.real("other_s");
  // Absent from summaries written before --scope layer charged them.
  if (j.contains("pointwise_s")) s.pointwise_s = r.real("pointwise_s");
  s.tp_comm_s = r.real("tp_comm_s");
  // Absent from summaries written before run took MoE models.
  if (j.contains("ep_comm_s")) s.ep_comm_s = r.real("ep_comm_s");
  if (j.contains("moe") && !j["moe"].is_null()) {
    const Reader m(j["moe"], origin + ": moe");
    Moe x;
    x.experts = static_cast<int>(m.integer("experts"));
    x.experts_per_token = static_cast<int>(m.integer("experts_per_token"));
    x.shared_experts = static_cast<int>(m.integer("shared_experts"));
    x.ep = m.integer("ep");
    x.expert_tp = m.integer("expert_tp");
    x.routing_seed = m.count("routing_seed");
    x.imbalance = m.real("imbalance");
    x.experts_s = m.real("experts_s");
    x.alltoall_bytes_per_gpu = m.real("alltoall_bytes_per_gpu");
    s.moe = x;
  }
  s.memory_bytes_per_device = r.count("memory_bytes_per_device");
  const auto& mem = r.at("memory_breakdown");
  if (!mem.is_object()) r.wrong("memory_breakdown", "an object");
  for (const auto& [k, v] : mem.items()) {
    if (!v.is_number_unsigned() && !v.is_number_integer())
      r.wrong("memory_breakdown", "an object of byte counts");
    s.memory_breakdown[k] = v.get<std::uint64_t>();
  }
  s.engine = r.text("engine");
  s.compute_model = r.text("compute_model");
  s.verdict = Verdict::from_json(r.at("verdict"), origin);
  if (s.verdict.hidden != s.overlapped)
    throw InputError(origin + ": the summary's 'overlapped' differs from 'verdict.hidden'");
  if (s.engine == "simgrid") {
    Simulated m;
    m.analytic_time_s = r.real("analytic_time_s");
    m.analytic_efficiency = r.real("analytic_efficiency");
    m.platform = r.text("platform");
    m.network_model = r.text("network_model");
    if (j.contains("inter_topology")) m.inter_topology = r.text("inter_topology");
    m.activities = r.count("activities");
    m.simulated_devices = r.integer("simulated_devices");
    // Absent from summaries written before the recurrence: SimGrid's actors.
    if (j.contains("simulation_method")) m.simulation_method = r.text("simulation_method");
    const auto& st = r.at("stalled_steps");
    if (!st.is_object() || !st.contains("fwd") || !st.contains("bwd"))
      r.wrong("stalled_steps", "an object with 'fwd' and 'bwd'");
    m.stalled_fwd = r.integers(st["fwd"], "stalled_steps");
    m.stalled_bwd = r.integers(st["bwd"], "stalled_steps");
    m.stalled_device_steps = r.count("stalled_device_steps");
    m.wait_s = r.real("wait_s");
    m.critical_device = r.integer("critical_device");
    m.critical_device_busy_s = r.real("critical_device_busy_s");
    m.faults = r.at("faults");
    if (!m.faults.is_object()) r.wrong("faults", "an object");
    if (j.contains("job")) {
      m.job = r.at("job");
      if (!m.job->is_object()) r.wrong("job", "an object");
    }
    s.sim = std::move(m);
  }
  return s;
}

std::string title_line(const Workload& w) {
  return fmt::format("ringsim: {} x {} tokens = {} ({} tokens), {} layout, {}, {}{}\n", w.devices,
                     w.block, human_tokens(static_cast<double>(w.seq_len())), w.seq_len(),
                     to_string(w.layout), to_string(w.pass), w.causal ? "causal" : "non-causal",
                     w.layout == Layout::Hybrid
                         ? fmt::format(" (ulysses {} x ring {})", w.ulysses(), w.ring_degree())
                         : "");
}

std::string model_text(const Workload& w) {
  const auto& s = w.shape;
  std::string kind;
  if (s.attention_chunk > 0)
    kind = w.chunked_layer
               ? fmt::format(
                     "; a chunked layer, attending inside {}-token chunks ({} of its {}; "
                     "--layer-kind global for the other {})",
                     s.attention_chunk, chunked_attention_layers(s), s.layers,
                     global_attention_layers(s))
               : fmt::format(
                     "; a global layer ({} of its {}; --layer-kind chunked for the {} "
                     "that attend inside {}-token chunks)",
                     global_attention_layers(s), s.layers, chunked_attention_layers(s),
                     s.attention_chunk);
  return fmt::format("{} ({} heads, {} KV heads, head dim {}), {}{}", s.name, s.heads, s.kv_heads,
                     s.head_dim, to_string(w.dtype), kind);
}

std::string tp_text(const Workload& w) {
  const auto l = tp_rank_workload(w);
  // A MoE layer: each expert split over the group; its own gather and
  // scatter of routed tokens are the dispatch's (moe_rows).
  const bool moe = is_moe(w.shape);
  const auto mlp = moe ? fmt::format("each expert's {} of {} per GPU", w.shape.expert_ffn / w.tp,
                                     w.shape.expert_ffn)
                       : fmt::format("MLP {} per GPU", l.shape.ffn);
  const auto collectives =
      !w.sequence_parallel ? std::string("2 all-reduces per pass")
      : moe && w.scope == Scope::Layer
          ? std::string("sequence parallel (attention's all-gather + reduce-scatter per pass)")
          : std::string("sequence parallel (2 all-gathers + 2 reduce-scatters per pass)");
  return fmt::format("TP {} per CP rank ({} GPUs): {} heads, {} KV heads, {}; {}{}", w.tp,
                     w.devices * w.tp, l.shape.heads, l.shape.kv_heads, mlp, collectives,
                     w.scope == Scope::Layer ? "" : "; none in --scope attention");
}

std::string stalled_steps_text(const Verdict& v) {
  std::vector<std::string> parts;
  for (int p = 0; p < 2; ++p) {
    const auto& st = v.stalled[static_cast<std::size_t>(p)];
    if (st.empty()) continue;
    std::vector<std::string> r;
    for (std::size_t i = 0; i < st.size();) {
      std::size_t k = i;
      while (k + 1 < st.size() && st[k + 1] == st[k] + 1) ++k;
      r.push_back(k == i ? std::to_string(st[i]) : fmt::format("{}-{}", st[i], st[k]));
      i = k + 1;
    }
    parts.push_back(fmt::format("{} {}", p ? "bwd" : "fwd", join(r, ", ")));
  }
  return parts.empty() ? "none" : join(parts, "; ");
}

std::string exposed_text(const Verdict& v) {
  std::vector<std::string> parts;
  for (const auto& [k, x] : v.exposed_by_source)
    if (x > v.tolerance_s) parts.push_back(fmt::format("{} {}", k, human_seconds(x)));
  return human_seconds(v.exposed_comm_s) +
         (parts.empty() ? std::string() : " (" + join(parts, ", ") + ")");
}

namespace {

// What a MoE layer's dispatch and combine are: the all-to-alls over the EP
// group, and with expert TP the routed tokens' gather and scatter.
std::string dispatch_text(const Summary& s, std::int64_t etp) {
  const auto& w = s.workload;
  const std::string gather = "the routed tokens' all-gather and reduce-scatter over the TP group";
  if (w.ep > 1)
    return fmt::format("{} (exposed, in the time; {} per all-to-all per GPU{})",
                       human_seconds(s.ep_comm_s), human_bytes(s.ep_alltoall_bytes),
                       etp > 1 ? ", and " + gather : std::string());
  if (etp > 1)
    return fmt::format("{} (exposed, in the time): no all-to-all at --ep 1; {}",
                       human_seconds(s.ep_comm_s), gather);
  return "none (--ep 1: every CP rank holds every expert)";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> moe_rows(const Summary& s) {
  const auto& w = s.workload;
  if (!is_moe(w.shape) || w.scope != Scope::Layer) return {};
  const auto etp = w.expert_tp > 0 ? w.expert_tp : std::max(1, w.tp);
  return {{"experts", fmt::format("{} routed ({} per token){}, EP {} x expert TP {}; routing seed "
                                  "{}: slowest EP rank {:.3f}x the mean rows",
                                  w.shape.experts, w.shape.experts_per_token,
                                  w.shape.shared_experts > 0
                                      ? fmt::format(" + {} shared", w.shape.shared_experts)
                                      : std::string(),
                                  w.ep, etp, w.routing_seed, s.moe_imbalance)},
          {"expert compute",
           human_seconds(s.moe_compute_s) + " (the experts' GEMMs at their shapes, in the time)"},
          {"MoE dispatch + combine", dispatch_text(s, etp)}};
}

std::vector<std::pair<std::string, std::string>> cost_rows(const Summary& s) {
  std::vector<std::pair<std::string, std::string>> r;
  if (const auto& c = s.chunk_scan) {
    r.emplace_back("chunks",
                   fmt::format("{} queries x {} keys (--query-chunk-size, "
                               "--key-chunk-size); {} per step",
                               c->query_chunk, c->key_chunk, c->chunk_iterations_per_step));
    r.emplace_back("precision", fmt::format("{}; matmuls at {:.0f} TFLOP/s", c->precision,
                                            c->matmul_flops / 1e12));
    r.emplace_back(
        "loop control per step",
        fmt::format("{} ({} per chunk pair, {} per query chunk, {} per step: scan "
                    "iteration, ppermute and ring synchronisation)",
                    human_seconds(c->loop_s_per_step), human_seconds(c->chunk_iteration_s),
                    human_seconds(c->query_iteration_s), human_seconds(c->step_s)));
    r.emplace_back("ring payload", fmt::format("K {} B, V {} B, dK/dV {} B per element", c->k_bytes,
                                               dtype_bytes(s.workload.dtype), c->grad_bytes));
  }
  if (s.kernel != "roofline" && s.kernel != "profile" && !s.merge_style.empty())
    r.emplace_back("merge", s.merge_style);
  if (const auto& p = s.permutation)
    r.emplace_back(
        "layout permutation",
        p->charged
            ? fmt::format("per layer: all-to-all of Q, K, V in and O out (backward dO "
                          "in, dQ, dK, dV out), {} a device, {} per layer",
                          human_bytes(static_cast<double>(p->bytes)), human_seconds(p->seconds))
            : fmt::format("in the data pipeline, once per training step (token ids "
                          "and positions, {} a device): not charged",
                          human_bytes(static_cast<double>(p->bytes))));
  if (s.executed_flops > s.useful_flops * (1 + 1e-9))
    r.emplace_back(
        "attention FLOPs",
        fmt::format("{:.3g} executed for {:.3g} useful ({:.1f}% in masked tiles)", s.executed_flops,
                    s.useful_flops, 100 * (1 - s.useful_flops / s.executed_flops)));
  if (s.merge_s_per_step > 0)
    r.emplace_back("merge per step", human_seconds(s.merge_s_per_step) + " (in the compute)");
  if (s.accumulate_s_per_step > 0)
    r.emplace_back("accumulate per step",
                   human_seconds(s.accumulate_s_per_step) + " (in the compute)");
  if (s.launch_s_per_step > 0)
    r.emplace_back("launch stall per step",
                   human_seconds(s.launch_s_per_step) + " (in the compute)");
  if (s.reduce_s > 0) r.emplace_back("final reduce", human_seconds(s.reduce_s) + " (per pass)");
  if (s.interference_compute > 1 || s.interference_memory > 1)
    r.emplace_back(
        "overlap interference",
        fmt::format("compute x{:.3f}, merge x{:.3f} while a transfer runs ({} CTAs, {})",
                    s.interference_compute, s.interference_memory, s.comm_ctas, s.comm_link_kind));
  return r;
}

json summary_json(const Summary& s) {
  return RunSummary::of(s).to_json();
}

std::string summary_text(const Summary& s) {
  const auto& w = s.workload;
  std::string out;
  auto row = [&](const std::string& k, const std::string& v) {
    out += fmt::format("  {:<26}{}\n", k, v);
  };
  out += title_line(w);
  row("model", model_text(w));
  if (w.tp > 1) row("tensor parallel", tp_text(w));
  row("hardware", s.hardware);
  row("engine / compute model", s.engine + " / " + s.compute_model);
  row("compute per step", step_compute_text(s.verdict) + "; busiest device");
  row(w.layout == Layout::Ulysses || w.layout == Layout::Allgather ? "collectives"
                                                                   : "transfer per step",
      fmt::format("{} ({})", human_seconds(s.comm_s_per_step),
                  human_bytes(static_cast<double>(s.bytes_per_step))));
  for (const auto& [k, v] : cost_rows(s)) row(k, v);
  if (!s.overlap)
    row("transfer overlap", "none (--overlap none: each transfer follows its compute)");
  row("min block to hide comm", min_block_text(s.verdict, s.overlap, !w.documents.empty()));
  row("communication hidden", s.verdict.hidden ? "yes" : "no");
  row("stalled steps", stalled_steps_text(s.verdict));
  row("time", fmt::format("{}{}", human_seconds(s.time_s),
                          w.layers > 1 ? fmt::format(" ({} layers)", w.layers) : " (one layer)"));
  row("ideal time", human_seconds(s.ideal_time_s));
  row("efficiency",
      fmt::format("{:.1f}% (same work at the kernel's best rate, / devices)", 100 * s.efficiency));
  row("vs one device",
      fmt::format("{:.1f}% ({} for the whole sequence on one device, same kernel)",
                  100 * s.efficiency_vs_single_device, human_seconds(s.single_device_time_s)));
  if (w.scope == Scope::Layer)
    row("projections + MLP",
        human_seconds(s.other_s) +
            fmt::format(" (GEMM by GEMM{}, and {} of norms, residual adds, RoPE and the "
                        "activation at HBM; in the time)",
                        s.moe_compute_s > 0 ? " with the experts'" : "",
                        human_seconds(s.pointwise_s)));
  if (w.tp > 1 && w.scope == Scope::Layer)
    row("TP collectives", human_seconds(s.tp_comm_s) + " (exposed, in the time)");
  for (const auto& [k, v] : moe_rows(s)) row(k, v);
  row("exposed communication", exposed_text(s.verdict));
  row("verdict", s.verdict.text);
  row("memory per device", human_bytes(static_cast<double>(s.memory_bytes_per_device)) +
                               " (attention buffers, one layer)");
  return out;
}

}  // namespace ringsim
