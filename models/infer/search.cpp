#include "models/infer/search.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/core/cancel.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/infer/size_guard.hpp"
#include "models/plan/basics.hpp"

namespace ringsim {

namespace {

std::vector<std::int64_t> powers_up_to(std::int64_t limit) {
  std::vector<std::int64_t> p;
  for (std::int64_t x = 1; x <= limit; x *= 2) p.push_back(x);
  return p;
}

// Usable first (by TTFT, then cost), then those that miss the target (by
// TTFT), then those that do not fit (closest to fitting first).
int rank_class(const InferOption& o) {
  if (!o.fits) return 2;
  return o.meets_target ? 0 : 1;
}

}  // namespace

std::vector<InferOption> search_inference(const InferRequest& base, const Hardware& hw,
                                          const Implementation& im, double ttft_target,
                                          const std::vector<std::int64_t>& tp_degrees,
                                          const std::vector<std::int64_t>& cp_degrees,
                                          bool fitting_only) {
  // TP past the node is searched too: its all-reduces then cross the NICs
  // and cost more, which the ranking weighs, but it may be the only split
  // whose weights fit (Llama 3 405B in bf16 at 1M tokens on 128 H100s).
  const auto tps = tp_degrees.empty() ? powers_up_to(base.gpus) : tp_degrees;
  // The closed forms cost O(cp^2) per split (every rank's every step), so
  // the automatic search stops where the training planner's does.
  auto cps_of = [&](std::int64_t tp) {
    return cp_degrees.empty() ? powers_up_to(std::min(base.gpus / tp, kMaxAutoCp)) : cp_degrees;
  };
  // Progress over the splits (long contexts take about a second each under
  // chunked attention), and a stop signal ends the search at the next one.
  std::uint64_t total = 0, done = 0;
  for (const auto tp : tps)
    for (const auto cp : cps_of(tp)) total += tp * cp <= base.gpus ? 1 : 0;
  std::vector<InferOption> out;
  std::string first_rule, rule_flag;  // rule_flag: the flag every refusal names, or ""
  bool one_flag = true;
  for (const auto tp : tps) {
    for (const auto cp : cps_of(tp)) {
      if (tp * cp > base.gpus) continue;
      throw_if_cancelled();
      report_progress(done++, total);
      InferOption o;
      o.request = base;
      o.request.tp = tp;
      o.request.cp = cp;
      o.request.gpus = tp * cp;
      try {
        check_request(o.request);
        check_tokens_per_rank(o.request);  // too many tokens per rank for this split
      } catch (const InputError& e) {
        const std::string what = e.what(), flag = what.substr(0, what.find(':'));
        if (first_rule.empty()) {
          first_rule = what;
          rule_flag = flag;
        }
        one_flag = one_flag && flag == rule_flag;
        continue;  // a split the model or the context cannot take: not listed
      }
      // Only the splits that can fit (the fit hint's search): memory is
      // cheap beside the closed forms' rank-steps, so a split whose memory
      // misses the HBM under both variants is not timed.
      if (fitting_only &&
          std::min(infer_memory(o.request, hw, InferVariant::PassKv).total,
                   infer_memory(o.request, hw, InferVariant::PassQ).total) > hw.hbm_bytes)
        continue;
      o.result = infer(o.request, hw, im);
      o.fits = o.result.memory.fits();
      o.meets_target = ttft_target <= 0 || o.result.ttft_s <= ttft_target;
      o.gpu_seconds = static_cast<double>(tp * cp) * o.result.ttft_s;
      if (!o.fits)
        o.why = fmt::format("needs {} of {} HBM per GPU", human_bytes(o.result.memory.total),
                            human_bytes(o.result.memory.hbm));
      else if (!o.meets_target)
        o.why =
            fmt::format("TTFT {:.3g} s misses the {:.3g} s target", o.result.ttft_s, ttft_target);
      out.push_back(std::move(o));
    }
  }
  if (out.empty()) {
    // Every split refused by one flag's rule (an odd --cached): that flag is
    // what to change, not the GPU count.
    // A context that no given --cp divides: the CP degree the user fixed is
    // what to change (the context is what they want served).
    const bool by_flag = one_flag && rule_flag.rfind("--", 0) == 0 && rule_flag != "--gpus" &&
                         rule_flag.find(' ') == std::string::npos;
    const bool by_cp = by_flag && !cp_degrees.empty() && rule_flag == "--context";
    throw InputError(
        fmt::format("{}: no TP x CP split of at most {} GPUs can serve this request ({})",
                    by_cp     ? std::string("--cp")
                    : by_flag ? rule_flag
                              : std::string("--gpus"),
                    base.gpus, first_rule));
  }
  std::stable_sort(out.begin(), out.end(), [](const InferOption& a, const InferOption& b) {
    const int ca = rank_class(a), cb = rank_class(b);
    if (ca != cb) return ca < cb;
    if (ca == 2)
      return a.result.memory.total - a.result.memory.hbm <
             b.result.memory.total - b.result.memory.hbm;
    if (a.result.ttft_s != b.result.ttft_s) return a.result.ttft_s < b.result.ttft_s;
    return a.gpu_seconds < b.gpu_seconds;
  });
  return out;
}

std::int64_t tp_nodes(std::int64_t tp, int gpus_per_node) {
  const auto per = std::max<std::int64_t>(1, gpus_per_node);
  return (tp + per - 1) / per;
}

std::string tp_placement(std::int64_t tp, int gpus_per_node) {
  const auto n = tp_nodes(tp, gpus_per_node);
  return n <= 1 ? "inside a node" : fmt::format("across {} nodes", n);
}

}  // namespace ringsim
