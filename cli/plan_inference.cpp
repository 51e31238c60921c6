#include "cli/plan_inference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/core/schema.hpp"
#include "models/infer/search.hpp"
#include "models/kernel/implementation.hpp"
#include "models/plan/basics.hpp"
#include "models/plan/report.hpp"
#include "proc/resolve.hpp"

namespace ringsim::cli {

namespace {

// "ok", or what the split misses by; either way, TP that spans nodes says so.
std::string status(const InferOption& o, int gpus_per_node) {
  std::string s = o.why.empty() ? "ok" : o.why;
  if (tp_nodes(o.request.tp, gpus_per_node) > 1)
    s += "; TP " + tp_placement(o.request.tp, gpus_per_node);
  return s;
}

// What would make a split usable, tried in the order a team would reach for
// it: FP8 MLP weights (what Meta served 405B with), then 2x and 4x the GPUs,
// then both.
std::string fit_hint(const InferRequest& r, const Hardware& hw, const Implementation& im,
                     double target, const std::vector<std::int64_t>& tps,
                     const std::vector<std::int64_t>& cps, const Catalog& cat) {
  auto best = [&](const InferRequest& q) -> std::string {
    try {
      for (const auto& o : search_inference(q, hw, im, target, tps, cps, /*fitting_only=*/true))
        if (o.fits && o.meets_target)
          return fmt::format("tp {} ({}) x cp {} ({} GPUs): TTFT {}, {} of {} per GPU",
                             o.request.tp, tp_placement(o.request.tp, hw.gpus_per_node),
                             o.request.cp, o.request.gpus, seconds(o.result.ttft_s),
                             human_bytes(o.result.memory.total), human_bytes(o.result.memory.hbm));
    } catch (const InputError&) {
    }
    return "";
  };
  std::string out;
  const bool can_fp8 = !r.fp8_mlp && cat.device(hw.gpu_name).peak_fp8 > 0;
  if (can_fp8) {
    auto q = r;
    set_infer_precision(q, "fp8", cat, hw);
    if (const auto b = best(q); !b.empty()) out += "  with --precision fp8: " + b + "\n";
  }
  // More GPUs, each count as given and then with FP8 too, the fewest first
  // (DeepSeek-V3 at 128K on 8 H100s: FP8 on 16 before bf16 on 32).
  for (const std::int64_t k : {2, 4}) {
    std::string found;
    for (const bool fp8 : {false, true}) {
      if (fp8 && !can_fp8) continue;
      auto q = r;
      if (fp8) set_infer_precision(q, "fp8", cat, hw);
      q.gpus = r.gpus * k;
      if (const auto b = best(q); !b.empty()) {
        found = fmt::format("  with {}--gpus {}: {}\n", fp8 ? "--precision fp8 " : "", q.gpus, b);
        break;
      }
    }
    if (!found.empty()) {
      out += found;
      break;
    }
  }
  return out.empty() ? "  nothing tried makes one fit (--precision fp8 where the device has FP8, "
                       "up to 4x the GPUs, and both); a larger-memory GPU or a shorter context "
                       "might\n"
                     : "what would make one fit:\n" + out;
}

}  // namespace

void set_infer_precision(InferRequest& r, const std::string& precision, const Catalog& cat,
                         const Hardware& hw) {
  r.fp8_mlp = parse_choice("--precision", precision, {"bf16", "fp8"}) == "fp8";
  if (!r.fp8_mlp) return;
  const auto& device = cat.device(hw.gpu_name);
  if (device.peak_fp8 <= 0)
    throw InputError(fmt::format(
        "--precision: fp8 needs FP8 tensor cores; {} has none (catalog peak_flops.fp8 = 0); use "
        "bf16",
        device.name));
  r.fp8_flops = device.peak_fp8 * hw.clock_scale;  // at the power limit, like hw.flops
  r.fp8_gemm_efficiency = device.fp8_gemm_efficiency;
}

int plan_inference(const InferencePlanFlags& f) {
  const auto hs = proc::parse_hardware(f.hw);
  const auto cat = proc::load_catalog(hs);
  const auto hw = proc::resolve_hardware(hs, cat, DType::BF16);
  const auto im = proc::make_implementation(hs, cat, hw, DType::BF16, proc::kInferProfileDtype);
  InferRequest r;
  r.shape = proc::resolve_shape(proc::parse_workload(f.w, false));
  if (!f.layers.empty())
    set_layers(r.shape, static_cast<int>(parse_count("--layers", f.layers, 1, 100000)));
  if (f.context.empty())
    throw InputError("--context: required with --inference (tokens, e.g. 128K or 1M)");
  r.context = parse_count("--context", f.context, 1, kMaxTokens);
  if (!f.cached.empty()) r.cached = parse_count("--cached", f.cached, 0, kMaxTokens);
  if (f.gpus.empty()) throw InputError("--gpus: required (the most GPUs one replica may use)");
  r.gpus = parse_count("--gpus", f.gpus, 1, 1 << 20);
  set_infer_precision(r, f.precision, cat, hw);
  if (f.layout.find(',') != std::string::npos)
    throw InputError(fmt::format(
        "--layout: plan --inference takes one layout (ring, zigzag or striped), got the list '{}'",
        f.layout));
  if (!f.layout.empty()) r.layout = parse_layout("--layout", f.layout);
  if (!f.batch.empty()) r.batch = parse_count("--batch", f.batch, 1, 1 << 20);
  if (!f.decode_tokens.empty())
    r.decode_tokens = parse_count("--decode-tokens", f.decode_tokens, 0, kMaxTokens);
  const auto v = parse_choice("--variant", f.variant.empty() ? "auto" : f.variant,
                              {"auto", "pass-kv", "pass-q"});
  r.auto_variant = v == "auto";
  if (!r.auto_variant) r.variant = parse_infer_variant("--variant", v);
  const double target =
      f.ttft_target.empty() ? 0 : parse_real("--ttft-target", f.ttft_target, 1e-6, 1e9);
  const double price = f.price.empty() ? 0 : parse_real("--price-per-gpu-hour", f.price, 0, 1e6);
  std::vector<std::int64_t> tps, cps;
  if (!f.tp.empty() && f.tp != "1" && f.tp != "auto") tps = {parse_count("--tp", f.tp, 1, 1024)};
  if (!f.cp.empty()) cps = {parse_count("--cp", f.cp, 1, 1 << 20)};
  const int top = static_cast<int>(parse_count("--top", f.top.empty() ? "10" : f.top, 1, 100000));

  const auto opts = search_inference(r, hw, *im, target, tps, cps);
  const bool any_fits =
      std::any_of(opts.begin(), opts.end(), [](const auto& o) { return o.fits && o.meets_target; });
  auto cost = [&](const InferOption& o) { return o.gpu_seconds / 3600 * price; };

  if (f.json) {
    nlohmann::json j;
    j["command"] = "plan";
    j["mode"] = "inference";
    j["model"] = r.shape.name;
    j["context"] = r.context;
    j["cached"] = r.cached;
    j["max_gpus"] = r.gpus;
    j["precision"] = r.fp8_mlp ? "fp8" : "bf16";
    j["ttft_target_s"] = target > 0 ? nlohmann::json(target) : nlohmann::json(nullptr);
    j["price_per_gpu_hour"] = price > 0 ? nlohmann::json(price) : nlohmann::json(nullptr);
    j["hardware"] = hw.describe();
    j["engine"] = "analytic";
    j["configs"] = nlohmann::json::array();
    int rank = 0;
    for (const auto& o : opts) {
      const auto& a = o.result;
      nlohmann::json c{{"rank", ++rank},
                       {"tp", o.request.tp},
                       {"cp", o.request.cp},
                       {"tp_nodes", tp_nodes(o.request.tp, hw.gpus_per_node)},
                       {"gpus", o.request.gpus},
                       {"layout", to_string(o.request.layout)},
                       {"variant", to_string(a.choice.variant)},
                       {"variant_reason", a.choice.reason},
                       {"ttft_s", a.ttft_s},
                       {"decode_s_per_token", a.decode_s_per_token},
                       {"tokens_per_s", a.tokens_per_s},
                       {"memory_bytes_per_gpu", a.memory.total},
                       {"kv_cache_bytes_per_gpu", a.memory.kv_cache},
                       {"fits", o.fits},
                       {"meets_target", o.meets_target},
                       {"gpu_seconds_per_prefill", o.gpu_seconds},
                       {"why_not", o.why}};
      if (price > 0) c["cost_per_prefill"] = cost(o);
      j["configs"].push_back(c);
    }
    // What the text ends with when nothing fits: the nearest change that
    // makes a split fit (null when one fits).
    j["fit_hint"] = any_fits ? nlohmann::json(nullptr)
                             : nlohmann::json(fit_hint(r, hw, *im, target, tps, cps, cat));
    j["schema_version"] = kJsonSchemaVersion;
    std::cout << j.dump(2) << "\n";
    return f.fail_if_none && !any_fits ? 1 : 0;
  }
  std::string out = fmt::format(
      "ringsim plan --inference: {} ({:.1f}B params, {} layers), context {} tokens ({}), {} "
      "cached, at most {} x {}\n",
      r.shape.name, static_cast<double>(total_params(r.shape)) / 1e9, r.shape.layers, r.context,
      human_tokens(static_cast<double>(r.context)), r.cached, r.gpus, hw.gpu_name);
  // models/infer/search.cpp's order: the splits that fit by TTFT, then
  // cost; those that do not, closest to fitting first.
  out +=
      fmt::format("  TTFT target {}; {}{}\n\n", target > 0 ? seconds(target) : std::string("none"),
                  any_fits ? "ranked by TTFT, then cost (GPU-seconds per prefill); splits that "
                             "do not fit last"
                           : "no split fits: ranked by how far each is over the HBM, closest "
                             "first",
                  price > 0 ? fmt::format(", ${:.2f} per GPU-hour", price) : "");
  out += fmt::format("  {:>4} {:>5} {:>5} {:>5}  {:<8}{:>10}{:>12}{:>11}{:>13}{:>12}  {}\n", "rank",
                     "tp", "cp", "gpus", "variant", "TTFT", "decode/tok", "tokens/s", "mem/GPU",
                     price > 0 ? "$/prefill" : "GPU-s", "status");
  int shown = 0;
  for (const auto& o : opts) {
    if (shown >= top) break;
    const auto& a = o.result;
    out += fmt::format(
        "  {:>4} {:>5} {:>5} {:>5}  {:<8}{:>10}{:>12}{:>11.1f}{:>13}{:>12}  {}\n", ++shown,
        o.request.tp, o.request.cp, o.request.gpus, to_string(a.choice.variant), seconds(a.ttft_s),
        seconds(a.decode_s_per_token), a.tokens_per_s, human_bytes(a.memory.total),
        price > 0 ? fmt::format("{:.4f}", cost(o)) : fmt::format("{:.1f}", o.gpu_seconds),
        status(o, hw.gpus_per_node));
  }
  const InferOption* cheapest = nullptr;
  for (const auto& o : opts)
    if (o.fits && o.meets_target && (!cheapest || o.gpu_seconds < cheapest->gpu_seconds))
      cheapest = &o;
  if (!opts.empty() && opts.front().fits && opts.front().meets_target) {
    const auto& b = opts.front();
    out += fmt::format("\nfastest: tp {} ({}) x cp {} ({} GPUs), TTFT {}; {}\n", b.request.tp,
                       tp_placement(b.request.tp, hw.gpus_per_node), b.request.cp, b.request.gpus,
                       seconds(b.result.ttft_s), b.result.choice.reason);
  } else {
    out += target > 0
               ? "\nno split fits in HBM and meets the target; the rows say what each misses by\n"
               : "\nno split fits in HBM; the rows say what each misses by\n";
    out += fit_hint(r, hw, *im, target, tps, cps, cat);
  }
  // Without --ttft-target every split that fits "meets" it: say cheapest, not a target.
  if (cheapest)
    out += fmt::format("{}: tp {} ({}) x cp {} ({} GPUs), TTFT {}, {:.1f} GPU-s\n",
                       target > 0 ? "cheapest meeting the target" : "cheapest that fits",
                       cheapest->request.tp, tp_placement(cheapest->request.tp, hw.gpus_per_node),
                       cheapest->request.cp, cheapest->request.gpus,
                       seconds(cheapest->result.ttft_s), cheapest->gpu_seconds);
  std::cout << out;
  return f.fail_if_none && !any_fits ? 1 : 0;
}

}  // namespace ringsim::cli
