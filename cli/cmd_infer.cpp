// `ringsim infer`: long-context inference on a cluster. Time to first token
// of a prefill split over CP ranks (pass-kv or pass-q ring, chosen with its
// reason), decode time per token over the sharded KV cache, tokens/s and
// memory per GPU. The closed forms always run; with --engine simgrid (the
// default) the same phases are also played on the simulated cluster, in
// this process (one SimGrid engine per process), and both are printed.
#include <fmt/format.h>

#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/command.hpp"
#include "cli/plan_inference.hpp"
#include "cli/stop_scope.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"
#include "models/core/flag_types.hpp"
#include "models/core/parse.hpp"
#include "models/core/schema.hpp"
#include "models/infer/infer.hpp"
#include "models/infer/search.hpp"
#include "models/kernel/implementation.hpp"
#include "models/plan/basics.hpp"
#include "models/plan/calibration.hpp"
#include "models/plan/error_band.hpp"
#include "models/plan/moe.hpp"
#include "proc/resolve.hpp"
#include "proc/run_spec.hpp"
#include "sim/faults.hpp"
#include "sim/infer_sim.hpp"
#include "sim/progress.hpp"
#include "sim/simulate.hpp"
#include "sim/topology.hpp"
#include "trace/writer.hpp"

namespace ringsim::cli {
namespace {

struct InferFlags {
  proc::WorkloadFlags w;
  proc::HardwareFlags hw;
  std::string context, cached = "0", gpus, tp = "8", cp, variant = "auto", layout = "zigzag";
  std::string decode_tokens = "0", batch = "1", engine = "simgrid", trace, overlap = "full";
  std::string layers, max_activities, max_memory;
  std::string precision = "bf16", cuda_graphs = "on";
  std::string calibration;  // a calibrate --runs file: its error bands (infer has no factor)
  std::vector<std::string> stragglers, degrades;  // what-ifs, simgrid column only
  std::string jitter, seed = "1";
  std::string ep, routing_seed;  // a mixture-of-experts model's experts (models/infer/moe.hpp)
  bool json = false, progress = false;
};

std::string secs(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} us", s * 1e6);
}

// The itemisation, the largest three first (as plan --explain prints it).
std::string memory_items_text(const InferMemory& m) {
  auto items = m.items;
  std::stable_sort(items.begin(), items.end(),
                   [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  std::string out = "  largest:";
  for (size_t i = 0; i < items.size() && i < 3; ++i)
    out += fmt::format("{} {} ({})", i ? "," : "", items[i].name, human_bytes(items[i].bytes));
  out += "\n";
  for (const auto& i : items)
    out +=
        fmt::format("  {:<22}{:>12}  {:<10}{}\n", i.name, human_bytes(i.bytes), i.pool, i.formula);
  return out;
}

std::string pct(double part, double whole) {
  return whole > 0 ? fmt::format("{:5.1f}%", 100 * part / whole) : std::string("    -");
}

// The itemisation, largest first: name, bytes, pool (tensors | allocator |
// runtime) and formula.
nlohmann::json items_json(const InferMemory& m) {
  auto items = m.items;
  std::stable_sort(items.begin(), items.end(),
                   [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  nlohmann::json out = nlohmann::json::array();
  for (const auto& i : items)
    out.push_back({{"name", i.name}, {"bytes", i.bytes}, {"pool", i.pool}, {"formula", i.formula}});
  return out;
}

nlohmann::json memory_json(const InferMemory& m) {
  return {{"weights_bytes", m.weights},
          {"kv_cache_bytes", m.kv_cache},
          {"activations_bytes", m.activations},
          {"ring_buffers_bytes", m.ring_buffers},
          {"overhead_bytes", m.overhead},
          {"total_bytes", m.total},
          {"hbm_bytes", m.hbm},
          {"fits", m.fits()},
          {"items", items_json(m)}};
}

// --straggler GPU:F (a GPU of the request), --degrade LINK:F, --jitter S,
// --seed: parsed as run parses them (sim/faults.hpp); only SimGrid plays them.
sim::Faults infer_faults(const InferFlags& f, std::int64_t gpus, bool simgrid) {
  const auto x = proc::parse_faults(f.stragglers, f.degrades, f.jitter, f.seed, gpus);
  if (x.any() && !simgrid)
    throw InputError(fmt::format(
        "{}: needs the simulator (--engine simgrid); the closed forms have no slow GPU or link",
        !f.stragglers.empty() ? "--straggler"
        : !f.degrades.empty() ? "--degrade"
                              : "--jitter"));
  return x;
}

// The faults as given ("--straggler 5:1.5 --jitter 0.05").
std::string faults_text(const InferFlags& f) {
  std::vector<std::string> parts;
  for (const auto& s : f.stragglers) parts.push_back("--straggler " + s);
  for (const auto& d : f.degrades) parts.push_back("--degrade " + d);
  if (!f.jitter.empty()) parts.push_back("--jitter " + f.jitter + " --seed " + f.seed);
  return one_line(join(parts, " "));
}

// --ep and --routing-seed: a mixture-of-experts model's only (check_request
// checks how --ep divides the TP group and the experts).
void set_infer_experts(InferRequest& r, const InferFlags& f) {
  for (const auto& [flag, value] : {std::pair{"--ep", &f.ep}, {"--routing-seed", &f.routing_seed}})
    if (!value->empty() && !is_moe(r.shape)) throw InputError(not_moe_message(flag, r.shape));
  if (!f.ep.empty()) r.ep = parse_count("--ep", f.ep, 1, 1024);
  if (!f.routing_seed.empty())
    r.routing_seed = static_cast<std::uint64_t>(
        parse_count("--routing-seed", f.routing_seed, 0, std::numeric_limits<std::int64_t>::max()));
}

// A MoE model's experts in the JSON (null for a dense model).
// The attention's form and widths (models/infer/infer.hpp, InferDims).
nlohmann::json attention_json(const InferRequest& r) {
  const auto p = infer_dims(r.shape, false), d = infer_dims(r.shape, true);
  return {{"kind", p.latent ? "mla" : "gqa"},
          {"kv_cache_bytes_per_token",
           static_cast<std::int64_t>(decode_kv_elements_per_token(r.shape, r.tp)) *
               dtype_bytes(r.dtype)},
          {"prefill", {{"query_dim", p.query_dim}, {"out_dim", p.out_dim}}},
          {"decode", {{"query_dim", d.query_dim}, {"out_dim", d.out_dim}}},
          {"chunked_layers", chunked_attention_layers(r.shape)},
          {"chunk", r.shape.attention_chunk}};
}

std::string attention_text(const InferRequest& r) {
  const auto& s = r.shape;
  if (s.attention_chunk > 0)
    return fmt::format(
        "  attention {} of {} layers attend inside chunks of {} tokens (the others to the whole "
        "context): their ring still passes every block, a step with no pair in the chunk "
        "computes nothing, and their KV cache holds one chunk\n",
        chunked_attention_layers(s), s.layers, s.attention_chunk);
  if (!is_mla(s)) return "";
  return fmt::format(
      "  attention multi-head latent attention: prefill up-projects each head's K and V (queries "
      "and keys of {}, values of {}); decode reads one latent entry of {} + {} per token for "
      "every head (the absorbed form), {} a token and layer on each GPU\n",
      s.qk_head_dim, s.v_head_dim, s.kv_lora_rank, s.qk_rope_head_dim,
      human_bytes(decode_kv_elements_per_token(s, r.tp) * dtype_bytes(r.dtype)));
}

nlohmann::json experts_json(const InferRequest& r, const InferResult& a) {
  if (!is_moe(r.shape)) return nullptr;
  // Over every MoE layer of the model.
  const double L = moe_layers(r.shape);
  auto one = [L](const InferLayerTimes& t) {
    return nlohmann::json{{"experts_s", t.moe.seconds * L},
                          {"ep_comm_s", t.moe.alltoall_s * L},
                          {"routed_s_per_moe_layer", t.moe.routed_s},
                          {"experts_touched", static_cast<std::int64_t>(t.moe.experts_touched)},
                          {"imbalance", t.moe.imbalance}};
  };
  return {{"experts", r.shape.experts},
          {"experts_per_token", r.shape.experts_per_token},
          {"shared_experts", r.shape.shared_experts},
          {"ep", r.ep},
          {"expert_tp", expert_tp(r)},
          {"ep_span_cp", ep_span(r)},
          {"alltoall_bytes_per_gpu", a.prefill_layer.moe.alltoall_bytes},
          {"routing_seed", r.routing_seed},
          {"prefill", one(a.prefill_layer)},
          {"decode", one(a.decode_layer)}};
}

int run(const InferFlags& f) {
  sim::InterruptGuard guard;
  const auto hs = proc::parse_hardware(f.hw);
  check_outputs(
      {{"--trace", f.trace}},
      {{"--catalog", hs.catalog}, {"--profile", hs.profile}, {"--calibration", f.calibration}});
  // Read before any work: a broken file fails in a moment, not after the simulation.
  const auto user = read_user_calibration(f.calibration);
  const auto cat = proc::load_catalog(hs);
  auto hw = proc::resolve_hardware(hs, cat, DType::BF16);
  proc::refuse_flags_not_on(hs, hw.platform);
  hw.overlap = parse_choice("--overlap", f.overlap, {"full", "none"}) == "full";
  const auto im = proc::make_implementation(hs, cat, hw, DType::BF16, proc::kInferProfileDtype);
  const bool simgrid = parse_choice("--engine", f.engine, {"simgrid", "analytic"}) == "simgrid";
  if (!simgrid && !f.trace.empty())
    throw InputError("--trace: needs --engine simgrid (the closed forms have no timeline)");
  const auto budget = sim::budget_from_flags(f.max_activities, f.max_memory);

  InferRequest r;
  r.shape = proc::resolve_shape(proc::parse_workload(f.w, false));
  if (!f.layers.empty())
    set_layers(r.shape, static_cast<int>(parse_count("--layers", f.layers, 1, 100000)));
  if (f.context.empty()) throw InputError("--context: required (tokens, e.g. 131072, 128K or 1M)");
  r.context = parse_count("--context", f.context, 1, kMaxTokens);
  r.cached = parse_count("--cached", f.cached, 0, kMaxTokens);
  if (f.gpus.empty()) throw InputError("--gpus: required (GPUs serving one model replica)");
  r.gpus = parse_count("--gpus", f.gpus, 1, 1 << 20);
  r.tp = parse_count("--tp", f.tp, 1, 1024);
  r.cp = f.cp.empty() ? std::max<std::int64_t>(1, r.gpus / r.tp)
                      : parse_count("--cp", f.cp, 1, 1 << 20);
  r.layout = parse_layout("--layout", f.layout);
  const auto v = parse_choice("--variant", f.variant, {"auto", "pass-kv", "pass-q"});
  r.auto_variant = v == "auto";
  if (!r.auto_variant) r.variant = parse_infer_variant("--variant", v);
  r.decode_tokens = parse_count("--decode-tokens", f.decode_tokens, 0, kMaxTokens);
  r.batch = parse_count("--batch", f.batch, 1, 1 << 20);
  set_infer_precision(r, f.precision, cat, hw);
  r.cuda_graphs = parse_choice("--cuda-graphs", f.cuda_graphs, {"on", "off"}) == "on";
  set_infer_experts(r, f);
  check_request(r);
  const auto faults = infer_faults(f, r.tp * r.cp, simgrid);

  const auto a = infer(r, hw, *im);
  std::optional<sim::InferSimResult> s;
  if (simgrid) {
    sim::InferSimOptions o;
    o.request = r;
    o.hardware = hw;
    o.prefill = infer_layer(r, hw, *im, a.choice.variant, false);
    o.decode = infer_layer(r, hw, *im, a.choice.variant, true);
    if (a.chunked_layers > 0) {
      o.prefill_chunked = infer_layer(r, hw, *im, a.choice.variant, false, true);
      o.decode_chunked = infer_layer(r, hw, *im, a.choice.variant, true, true);
    }
    o.prefill_head_s = head_seconds(r, hw, 1);
    o.decode_head_s = head_seconds(r, hw, r.batch);
    o.record_events = !f.trace.empty();
    o.progress = f.progress;
    o.faults = faults;
    sim::check_budget(sim::estimate_infer_size(o), budget);
    s = sim::simulate_infer(o);
    if (s->interrupted) return interrupted_exit();
  }
  const double sim_decode = s ? s->decode_s : 0;

  nlohmann::json j;
  j["command"] = "infer";
  j["model"] = r.shape.name;
  j["params"] = total_params(r.shape);
  j["context"] = r.context;
  j["cached"] = r.cached;
  j["new_tokens"] = r.context - r.cached;
  j["gpus"] = r.gpus;
  j["tp"] = r.tp;
  j["cp"] = r.cp;
  j["tp_nodes"] = tp_nodes(r.tp, hw.gpus_per_node);
  j["moe"] = experts_json(r, a);
  j["attention"] = attention_json(r);
  j["layout"] = to_string(r.layout);
  j["batch"] = r.batch;
  j["decode_tokens"] = r.decode_tokens;
  j["hardware"] = hw.describe();
  j["compute_model"] = im->name();
  j["variant"] = to_string(a.choice.variant);
  j["variant_choice"] = a.choice.automatic ? "auto" : "given";
  j["variant_reason"] = a.choice.reason;
  j["ttft_s_by_variant"] = {{"pass-kv", a.choice.ttft_s[0]}, {"pass-q", a.choice.ttft_s[1]}};
  j["ring_message_bytes"] = {{"pass-kv", a.choice.message_bytes[0]},
                             {"pass-q", a.choice.message_bytes[1]}};
  j["analytic"] = {{"ttft_s", a.ttft_s},
                   {"attention_s", a.attention_s},
                   {"attention_exposed_comm_s", a.attention_exposed_s},
                   {"return_s", a.return_s},
                   {"merge_s", a.merge_s},
                   {"dense_s", a.dense_s},
                   {"pointwise_s", a.pointwise_s},
                   {"quantise_s", a.quantise_s},
                   {"tp_comm_s", a.tp_s},
                   {"ep_comm_s", a.ep_s},
                   {"launch_s", a.launch_s},
                   {"head_s", a.head_s},
                   {"decode_s_per_token", a.decode_s_per_token},
                   {"decode_attention_s", a.decode_attention_s},
                   {"decode_dense_s", a.decode_dense_s},
                   {"decode_cp_comm_s", a.decode_comm_s},
                   {"decode_tp_comm_s", a.decode_tp_s},
                   {"decode_ep_comm_s", a.decode_ep_s},
                   {"decode_launch_s", a.decode_launch_s},
                   {"tokens_per_s", a.tokens_per_s},
                   {"generation_s", a.generation_s},
                   {"prefill_mfu", a.mfu}};
  if (s) {
    j["simgrid"] = {
        {"ttft_s", s->ttft_s},
        {"attention_s", s->prefill.attention_s},
        {"return_s", s->prefill.return_s},
        {"merge_s", s->prefill.merge_s},
        {"dense_s", s->prefill.dense_s},
        {"tp_comm_s", s->prefill.tp_s},
        {"ep_comm_s", s->prefill.ep_s},
        {"head_s", s->prefill.head_s},
        {"decode_s_per_token", sim_decode},
        {"tokens_per_s", sim_decode > 0 ? static_cast<double>(r.batch) / sim_decode : 0},
        {"generation_s", s->ttft_s + static_cast<double>(r.decode_tokens) * sim_decode},
        {"ttft_rel_diff", s->ttft_s / a.ttft_s - 1},
        {"decode_rel_diff", a.decode_s_per_token > 0 ? sim_decode / a.decode_s_per_token - 1 : 0},
        {"activities", s->activities},
        {"platform", s->platform}};
  }
  j["engine"] = simgrid ? "simgrid" : "analytic";
  j["faults"] = faults.any() ? nlohmann::json(faults_text(f)) : nlohmann::json();
  j["memory"] = memory_json(a.memory);
  // TTFT's band (the headline) and decode's (models/plan/error_band.hpp).
  const auto& family = cat.device(hw.gpu_name).family;
  // From the user's own runs where their calibration file validates the class.
  const auto prefill_band =
      choose_band(band_class("inference", family, "prefill"), user.get(), f.calibration);
  const auto decode_band =
      choose_band(band_class("inference", family, "decode"), user.get(), f.calibration);
  j["error_band"] = prefill_band.to_json();
  j["decode_error_band"] = decode_band.to_json();

  if (s && !f.trace.empty()) {
    AtomicFile file(f.trace, "--trace");
    std::vector<trace::Lane> lanes;
    const auto topo = sim::topology_options(hw, r.gpus);
    for (std::int64_t g = 0; g < r.gpus; ++g) {
      const auto pid = sim::node_of(topo, g);
      lanes.push_back({static_cast<std::int32_t>(g), pid, fmt::format("node {}", pid),
                       fmt::format("GPU {} (cp {}, tp {})", g, g / r.tp, g % r.tp)});
    }
    nlohmann::json meta{{"format", "ringsim-trace-1"},
                        {"devices", r.gpus},
                        {"steps", r.cp},
                        {"layout", to_string(r.layout)},
                        {"engine", "simgrid"},
                        {"platform", s->platform},
                        {"summary", j}};
    trace::WriteOptions opt;
    opt.stop = [] { return sim::interrupt_requested(); };
    if (!trace::write_trace(file, lanes, s->events, meta, opt)) return interrupted_exit();
    commit_all({&file});
  }

  if (f.json) {
    j["schema_version"] = kJsonSchemaVersion;
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  const auto& m = a.memory;
  std::string out;
  out += fmt::format(
      "ringsim infer: {} ({:.1f}B params, {} layers, {} heads / {} KV heads), context {} tokens "
      "({}), {} cached, {} new\n",
      r.shape.name, static_cast<double>(total_params(r.shape)) / 1e9, r.shape.layers, r.shape.heads,
      r.shape.kv_heads, r.context, human_tokens(static_cast<double>(r.context)), r.cached,
      r.context - r.cached);
  out +=
      fmt::format("  cluster  {} GPUs = TP {} ({}) x CP {} ({} layout); {}\n", r.gpus, r.tp,
                  tp_placement(r.tp, hw.gpus_per_node), r.cp, to_string(r.layout), hw.describe());
  if (is_moe(r.shape))
    out += fmt::format(
        "  experts  {} routed (top {}{}), {}: the slowest GPU's routed rows x{:.3f} the mean in "
        "the prefill (routing drawn with --routing-seed {})\n",
        r.shape.experts, r.shape.experts_per_token,
        r.shape.shared_experts > 0 ? fmt::format(", {} shared", r.shape.shared_experts) : "",
        ep_span(r) > 1
            ? fmt::format("EP {} over {} CP ranks' TP groups, whole experts; dispatch and combine "
                          "all-to-alls of {} per GPU in the prefill",
                          r.ep, ep_span(r), human_bytes(a.prefill_layer.moe.alltoall_bytes))
        : r.ep > 1
            ? fmt::format("EP {} inside the TP group, each expert on {} GPU(s)", r.ep, r.tp / r.ep)
        : r.tp > 1 ? fmt::format("each sliced over the TP group's {} GPUs", r.tp)
                   : std::string("each whole on every GPU (TP 1)"),
        a.prefill_layer.moe.imbalance, r.routing_seed);
  out += attention_text(r);
  out += fmt::format("  compute  {}\n", im->name());
  out += fmt::format("  variant  {} ({}): {}\n", to_string(a.choice.variant),
                     a.choice.automatic ? "auto" : "--variant", a.choice.reason);
  if (faults.any())
    out +=
        fmt::format("  faults   {} (the simgrid column; analytic is fault-free)\n", faults_text(f));
  out += "\nPrefill (time to first token)";
  out += s ? fmt::format("       {:>12} {:>12}\n", "analytic", "simgrid")
           : fmt::format("       {:>12}\n", "analytic");
  auto row = [&](const char* name, double an, std::optional<double> sg) {
    out += fmt::format("  {:<34}{:>12} {}", name, secs(an), pct(an, a.ttft_s));
    if (sg) out += fmt::format(" {:>12}", secs(*sg));
    out += "\n";
  };
  auto sg = [&](double x) { return s ? std::optional<double>(x) : std::nullopt; };
  row("TTFT", a.ttft_s, sg(s ? s->ttft_s : 0));
  out += fmt::format("  {:<34}{}\n", "  error band", prefill_band.text());
  row("  attention ring", a.attention_s, sg(s ? s->prefill.attention_s : 0));
  row("    of which exposed transfers", a.attention_exposed_s, std::nullopt);
  row("  partial-output all-to-all", a.return_s, sg(s ? s->prefill.return_s : 0));
  row("  merge of returned partials", a.merge_s, sg(s ? s->prefill.merge_s : 0));
  row("  projections + MLP (GEMMs)", a.dense_s, std::nullopt);
  row("    of which kernel launch", a.launch_s, std::nullopt);
  if (is_moe(r.shape))
    row("    of which experts", moe_layers(r.shape) * a.prefill_layer.moe.seconds, std::nullopt);
  row("  norms, RoPE, residuals", a.pointwise_s, std::nullopt);
  if (a.quantise_s > 0) row("    of which FP8 quantise", a.quantise_s, std::nullopt);
  if (s)
    out += fmt::format("  {:<34}{:>19} {:>12}\n", "  dense work (the two above)", "",
                       secs(s->prefill.dense_s));
  row("  TP all-reduces", a.tp_s, sg(s ? s->prefill.tp_s : 0));
  if (ep_span(r) > 1) row("  EP dispatch + combine", a.ep_s, sg(s ? s->prefill.ep_s : 0));
  row("  output head (last token)", a.head_s, sg(s ? s->prefill.head_s : 0));
  out += fmt::format("  prefill MFU {:.1f}% ({:.3g} PFLOP useful)\n", 100 * a.mfu,
                     a.prefill_flops / 1e15);
  out += fmt::format("\nDecode (batch {}, one token per sequence at {} tokens of context)\n",
                     r.batch, r.context);
  out += fmt::format("  {:<34}{:>12}{}\n", "time per token", secs(a.decode_s_per_token),
                     s ? fmt::format("        {:>12} (simgrid)", secs(sim_decode)) : "");
  out += fmt::format("  {:<34}{}\n", "  error band", decode_band.text());
  out += fmt::format("  {:<34}{:>12}{}\n", "  attention (+ pass-Q SendRecvs)",
                     secs(a.decode_attention_s),
                     r.cp > 1 ? fmt::format("  (Meta's pass-Q decode: each of the {} ring steps "
                                            "reads this rank's whole shard, so CP does not "
                                            "shorten it)",
                                            r.cp)
                              : "");
  out += fmt::format("  {:<34}{:>12}\n", "  weights, MLP, head", secs(a.decode_dense_s));
  out +=
      fmt::format("  {:<34}{:>12}  ({})\n", "    of which kernel launch", secs(a.decode_launch_s),
                  r.cuda_graphs ? "CUDA graphs: device gaps" : "eager: host dispatch");
  if (is_moe(r.shape))
    out +=
        fmt::format("  {:<34}{:>12}  ({:.0f} of {} experts touched per MoE layer)\n",
                    "    of which experts", secs(moe_layers(r.shape) * a.decode_layer.moe.seconds),
                    a.decode_layer.moe.experts_touched, r.shape.experts);
  out += fmt::format("  {:<34}{:>12}\n", "  CP pass-Q: all-to-all + merge", secs(a.decode_comm_s));
  out += fmt::format("  {:<34}{:>12}  (NCCL {} on the TP group{})\n", "  TP all-reduces",
                     secs(a.decode_tp_s), r.tp > 1 ? "ring/tree" : "none",
                     r.tp > hw.gpus_per_node && hw.platform == Platform::Nodes
                         ? ", across hosts on the NICs"
                         : "");
  if (ep_span(r) > 1)
    out +=
        fmt::format("  {:<34}{:>12}  (the experts' partial outputs over the EP group's {} GPUs)\n",
                    "  EP all-reduce", secs(a.decode_ep_s), r.ep);
  out += fmt::format("  {:<34}{:>12.1f}{}\n", "tokens/s (all sequences)", a.tokens_per_s,
                     s && sim_decode > 0 ? fmt::format("        {:>12.1f} (simgrid)",
                                                       static_cast<double>(r.batch) / sim_decode)
                                         : "");
  if (r.decode_tokens > 0)
    out += fmt::format("  {:<34}{:>12}\n", fmt::format("TTFT + {} tokens", r.decode_tokens),
                       secs(a.generation_s));
  out += fmt::format(
      "\nMemory per GPU: {} of {} HBM ({}): weights {}, KV cache {}, activations {}, ring buffers "
      "{}, runtime {}\n",
      human_bytes(m.total), human_bytes(m.hbm),
      m.fits() ? "fits" : fmt::format("DOES NOT FIT, over by {}", human_bytes(m.total - m.hbm)),
      human_bytes(m.weights), human_bytes(m.kv_cache), human_bytes(m.activations),
      human_bytes(m.ring_buffers), human_bytes(m.overhead));
  out += memory_items_text(m);
  if (s)
    out += fmt::format(
        "\nSimGrid: {} activities on {}; TTFT {:+.4f}% and decode {:+.4f}% from the closed forms\n",
        s->activities, s->platform, 100 * (s->ttft_s / a.ttft_s - 1),
        a.decode_s_per_token > 0 ? 100 * (sim_decode / a.decode_s_per_token - 1) : 0.0);
  std::cout << out;
  return 0;
}

}  // namespace

Command infer_command() {
  return {"infer", [](CLI::App& app, int* code) {
            auto f = std::make_shared<InferFlags>();
            auto* sub = app.add_subcommand(
                "infer",
                "Long-context inference: TTFT of a CP prefill (pass-kv / pass-q ring), decode time "
                "per token, tokens/s, memory per GPU");
            proc::add_model_flags(sub, f->w);
            sub->add_option("--layers", f->layers, "Override the model's depth")
                ->type_name(flag_type::kInt);
            sub->add_option("--context", f->context,
                            "Tokens in the sequence after the prefill (K/M binary: 128K, 1M)")
                ->type_name(flag_type::kTokens);
            sub->add_option("--cached", f->cached,
                            "Of those, tokens already in the KV cache (persistent KV, multi-turn)")
                ->capture_default_str()
                ->type_name(flag_type::kTokens);
            sub->add_option("--gpus", f->gpus, "GPUs serving one model replica (= tp x cp)")
                ->type_name(flag_type::kInt);
            proc::add_hardware_flags(sub, f->hw);
            sub->add_option(
                   "--tp", f->tp,
                   "Tensor-parallel degree (may span nodes: its all-reduces then cross the NICs)")
                ->capture_default_str()
                ->type_name(flag_type::kInt);
            sub->add_option("--cp", f->cp, "Context-parallel degree (default: gpus / tp)")
                ->type_name(flag_type::kInt);
            sub->add_option("--variant", f->variant, "auto|pass-kv|pass-q (the prefill ring)")
                ->capture_default_str()
                ->type_name(flag_type::kName);
            sub->add_option("--layout", f->layout,
                            "How tokens and the KV cache are sharded: ring|striped|zigzag")
                ->capture_default_str()
                ->type_name(flag_type::kName);
            sub->add_option("--decode-tokens", f->decode_tokens,
                            "Tokens generated after the prefill (adds TTFT + K x time per token)")
                ->capture_default_str()
                ->type_name(flag_type::kTokens);
            sub->add_option("--batch", f->batch, "Sequences decoded together")
                ->capture_default_str()
                ->type_name(flag_type::kInt);
            sub->add_option("--precision", f->precision,
                            "bf16 | fp8 (the MLP's weights in FP8 and its GEMMs at the FP8 rate, "
                            "as Meta served Llama 3 405B; attention and KV cache stay bf16)")
                ->capture_default_str()
                ->type_name(flag_type::kName);
            sub->add_option("--straggler", f->stragglers,
                            "GPU:FACTOR, repeatable: that GPU of the request computes FACTOR "
                            "times slower (simgrid column; e.g. 5:1.5)")
                ->type_name(flag_type::kKeyValue);
            sub->add_option("--degrade", f->degrades,
                            "LINK:FACTOR, repeatable: that link (nic7, 3-4: the route from GPU 3 "
                            "to 4) at 1/FACTOR of its bandwidth (simgrid column)")
                ->type_name(flag_type::kKeyValue);
            sub->add_option("--jitter", f->jitter,
                            "SIGMA: lognormal noise (mean 1) on every compute (simgrid column)")
                ->type_name(flag_type::kFloat);
            sub->add_option("--seed", f->seed, "Seed for --jitter")
                ->capture_default_str()
                ->type_name(flag_type::kInt);
            sub->add_option("--calibration", f->calibration,
                            "Your calibrate --runs file: its error bands for TTFT and decode "
                            "where your runs validate them (infer applies no factor)")
                ->type_name(flag_type::kFile);
            sub->add_option("--ep", f->ep,
                            "A mixture-of-experts model: expert parallelism inside the TP group "
                            "(dividing --tp), or across the TP groups of neighbouring CP ranks "
                            "(--tp times a divisor of --cp: whole experts, with a dispatch and "
                            "combine all-to-all); it divides the experts (default 1: every "
                            "expert sliced over the TP group)")
                ->type_name(flag_type::kInt);
            sub->add_option("--routing-seed", f->routing_seed,
                            "A mixture-of-experts model: the seed of the routing drawn (default 1)")
                ->type_name(flag_type::kInt);
            sub->add_option("--cuda-graphs", f->cuda_graphs,
                            "Decode replayed as CUDA graphs: a kernel costs the device's gap, not "
                            "the host's dispatch (docs/inference.md)")
                ->capture_default_str()
                ->type_name(flag_type::kOnOff);
            sub->add_option("--engine", f->engine,
                            "simgrid (both engines, side by side) | analytic (closed forms only)")
                ->capture_default_str()
                ->type_name(flag_type::kName);
            sub->add_option("--overlap", f->overlap,
                            "full: ring transfers run during compute; none: after it")
                ->capture_default_str()
                ->type_name(flag_type::kName);
            sub->add_option("--trace", f->trace,
                            "Write the simulated prefill and decode step as a Chrome trace")
                ->type_name(flag_type::kFile);
            sub->add_flag("--progress", f->progress, "Progress bar with ETA on stderr");
            sub->add_option(
                   "--max-activities", f->max_activities,
                   "Refuse a simulation estimated above this many activities (default 2^29)")
                ->type_name(flag_type::kInt);
            sub->add_option("--max-memory", f->max_memory,
                            "Refuse a simulation estimated above this much memory (K/M/G; default "
                            "80% of RAM)")
                ->type_name(flag_type::kBytes);
            sub->add_flag("--json", f->json, "Print one JSON object");
            sub->callback([f, code] { *code = run(*f); });
            return sub;
          }};
}

}  // namespace ringsim::cli
