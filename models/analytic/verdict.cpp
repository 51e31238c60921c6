#include "models/analytic/verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "models/core/errors.hpp"
#include "models/core/parse.hpp"

namespace ringsim {

namespace {

using nlohmann::json;

const char* pass_name(int p) {
  return p ? "bwd" : "fwd";
}
const char* pass_word(int p) {
  return p ? "backward" : "forward";
}

}  // namespace

std::string step_ranges(const std::vector<std::int64_t>& steps) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < steps.size();) {
    std::size_t j = i;
    while (j + 1 < steps.size() && steps[j + 1] == steps[j] + 1) ++j;
    parts.push_back(j == i ? std::to_string(steps[i]) : fmt::format("{}-{}", steps[i], steps[j]));
    i = j + 1;
  }
  return join(parts, ", ");
}

namespace {

json opt_json(const std::optional<std::int64_t>& v) {
  return v ? json(*v) : json(nullptr);
}

// What would remove a loss, for this run (the verdict's last clause).
std::string loss_fix(const std::string& kind, const VerdictInputs& in, const Verdict& v) {
  if (kind == kLossImbalance) {
    if (!in.documents_why.empty()) return in.documents_why;
    if (in.contiguous_causal)
      return "the causal mask leaves devices idle in turn: use zigzag (or striped), which give "
             "every device the same work";
    if (in.slowed_devices)
      return "a slowed device (--straggler, --jitter) holds the ring back: find and replace it";
    return "devices do unequal work in this layout: zigzag gives every device the same";
  }
  if (kind == kLossExposed) {
    if (v.never_hides) return "no block hides the transfers on this link: a faster link";
    if (in.overlap && v.min_block && in.block < *v.min_block)
      return fmt::format("use a block of at least {} tokens per device (min block)", *v.min_block);
    const auto by = [&](const char* k) {
      const auto it = v.exposed_by_source.find(k);
      return it == v.exposed_by_source.end() ? 0.0 : it->second;
    };
    if (by(kSourceCollectives) >= by(kSourceFinalHop) &&
        by(kSourceCollectives) >= by(kSourceTransferWaits) && by(kSourceCollectives) > 0)
      return "the " + in.collective_name +
             " runs with no compute beside it: use zigzag, whose ring transfers hide behind "
             "compute";
    if (!in.overlap) return "--overlap none: transfers that overlap compute (GPU-direct) hide it";
    if (by(kSourceFinalHop) >= by(kSourceTransferWaits))
      return "the final dK/dV hop home, which no block hides: a larger block makes it a smaller "
             "share";
    return "a larger block hides more of each transfer";
  }
  if (kind == kLossInterference)
    return "the communication library's SMs and memory traffic slow compute while transfers run: "
           "a larger block makes the transfers a smaller share";
  if (kind == kLossOverheads)
    return "per-step merges and launches: a larger block (fewer steps for the same sequence) "
           "amortises them";
  return "the kernel below its best rate (short or masked tiles): a larger block runs nearer its "
         "peak";
}

// Splits time - ideal into the losses and names the largest (v.losses,
// largest_loss, fix). The parts are estimates on one timeline: imbalance
// from the mean device, the kernel's rate from what is left.
void rank_losses(const VerdictInputs& in, Verdict& v) {
  const auto src = [&](const char* k) {
    const auto it = v.exposed_by_source.find(k);
    return it == v.exposed_by_source.end() ? 0.0 : it->second;
  };
  const double interference = src(kSourceInterference);
  v.losses = {{kLossImbalance, std::max(0.0, in.compute_only_s - in.mean_compute_s)},
              {kLossExposed, std::max(0.0, v.exposed_comm_s - interference)},
              {kLossInterference, interference},
              {kLossOverheads, in.overheads_s},
              {kLossKernelRate, std::max(0.0, in.mean_compute_s - in.overheads_s - in.ideal_s)}};
  double best = v.tolerance_s;
  for (const auto& [k, x] : v.losses)
    if (x > best) {
      best = x;
      v.largest_loss = k;
    }
  if (!v.largest_loss.empty()) v.fix = loss_fix(v.largest_loss, in, v);
}

const char* loss_words(const std::string& kind) {
  if (kind == kLossImbalance) return "imbalance";
  if (kind == kLossExposed) return "exposed communication";
  if (kind == kLossInterference) return "interference";
  if (kind == kLossOverheads) return "merge and launch overheads";
  return "the kernel's rate";
}

// "; largest loss: imbalance 12.3 ms (41% of the time): use zigzag ..."
std::string largest_loss_text(const Verdict& v, double time_s) {
  if (v.largest_loss.empty()) return "";
  const double x = v.losses.at(v.largest_loss);
  return fmt::format("; largest loss: {} {} ({:.0f}% of the time): {}", loss_words(v.largest_loss),
                     human_seconds(x), time_s > 0 ? 100 * x / time_s : 0.0, v.fix);
}

}  // namespace

Verdict make_verdict(const VerdictInputs& in) {
  Verdict v;
  v.exposed_comm_s = std::max(0.0, in.time_s - in.compute_only_s);
  v.tolerance_s = kExposedTolerance * in.time_s;
  v.lightest_step_compute_s = in.lightest_s;
  v.heaviest_step_compute_s = in.heaviest_s;
  v.lightest_pass = in.lightest_pass;
  v.heaviest_pass = in.heaviest_pass;
  v.lightest_step = in.lightest_step;
  v.heaviest_step = in.heaviest_step;

  // The minimum block of the whole pass: the largest over the passes run.
  v.min_block_by_pass = in.min_block;
  for (const auto& m : in.min_block) {
    if (!m) continue;
    if (*m < 0) v.never_hides = true;
    if (*m > 0 && (!v.min_block || *m > *v.min_block)) v.min_block = *m;
  }
  if (v.never_hides) v.min_block.reset();
  for (auto& m : v.min_block_by_pass)
    if (m && *m == 0) m.reset();  // the layout does not overlap: n/a

  // Sources, as the time-setting device spent them. Its time beyond its own
  // free compute is split into them; the part they do not name is rounding
  // of the timeline ("unattributed"). Where that device computes less than
  // the busiest one (compute_only_s), part of its waiting was for a slower
  // device's compute, not for a link: every source is scaled by
  // exposed / (device time - device free), so they sum to the exposed time.
  double diag = 0, waits = 0;
  for (int p = 0; p < 2; ++p)
    for (const auto& [s, w] : in.step_wait_s[static_cast<std::size_t>(p)])
      (in.diagonal_step0 && s == 0 ? diag : waits) += w;
  std::map<std::string, double> raw{{kSourceTransferWaits, waits},
                                    {kSourceDiagonal, diag},
                                    {kSourceFinalHop, in.final_hop_s},
                                    {kSourceCollectives, in.collectives_s},
                                    {kSourceTp, in.tp_s},
                                    {kSourceEp, in.ep_s},
                                    {kSourceInterference, in.interference_s}};
  double named = 0;
  for (const auto& [k, x] : raw) named += x;
  const double residual = std::max(0.0, in.device_time_s - in.device_free_s - named);
  raw[kSourceUnattributed] = residual;
  const double total = named + residual;
  const double scale = total > 0 ? v.exposed_comm_s / total : 0.0;
  for (const auto& [k, x] : raw) v.exposed_by_source[k] = x * scale;
  if (total <= 0) v.exposed_by_source[kSourceUnattributed] = v.exposed_comm_s;

  // Stalled steps: those whose share of the waits is above the tolerance
  // shared out among the steps that waited, so steps are listed exactly
  // when the waits together expose more than the tolerance.
  std::size_t waiting = 0;
  for (const auto& m : in.step_wait_s)
    for (const auto& [s, w] : m) waiting += w > 0 ? 1 : 0;
  if ((waits + diag) * scale > v.tolerance_s && waiting > 0) {
    const double per_step = v.tolerance_s / static_cast<double>(waiting);
    std::set<std::int64_t> all;
    for (int p = 0; p < 2; ++p)
      for (const auto& [s, w] : in.step_wait_s[static_cast<std::size_t>(p)])
        if (w * scale > per_step) {
          v.stalled[static_cast<std::size_t>(p)].push_back(s);
          all.insert(s);
        }
    v.stalled_steps.assign(all.begin(), all.end());
  }
  // Hidden when the steps' transfers are: nothing but interference and the
  // final dK/dV hop is exposed beyond the tolerance. No block size removes
  // those two (interference is compute slowed while a hidden transfer runs;
  // the last hop has no step after it), and the minimum block (minblock.cpp)
  // is the block above which the steps' transfers hide: so the two agree.
  // The two as the schedule charges them (not their attributed shares, which
  // the engines split differently when devices wait on one another).
  const double interference = std::min(v.exposed_comm_s, in.interference_s);
  const double final_hop = std::min(v.exposed_comm_s - interference, in.final_hop_s);
  v.hidden = v.exposed_comm_s - interference - final_hop <= v.tolerance_s;
  rank_losses(in, v);

  if (v.hidden) {
    v.text = "communication hidden: no step waited on a transfer";
    if (v.min_block) v.text += fmt::format(" (block {} >= min block {})", in.block, *v.min_block);
    if (final_hop > v.tolerance_s)
      v.text += fmt::format("; the final dK/dV hop home, which no block hides, takes {}",
                            human_seconds(final_hop));
    if (interference > v.tolerance_s)
      v.text += fmt::format("; the transfers slow the compute they run under by {} (interference)",
                            human_seconds(interference));
    v.text += largest_loss_text(v, in.time_s);
    return v;
  }
  // Each source above the tolerance, largest first.
  std::vector<std::pair<double, std::string>> parts;
  auto stalled_words = [&](bool diagonal) {
    std::vector<std::string> w;
    for (int p = 0; p < 2; ++p) {
      std::vector<std::int64_t> steps;
      for (auto s : v.stalled[static_cast<std::size_t>(p)])
        if ((in.diagonal_step0 && s == 0) == diagonal) steps.push_back(s);
      if (!steps.empty())
        w.push_back(fmt::format("{} step{} {}", pass_word(p), steps.size() > 1 ? "s" : "",
                                step_ranges(steps)));
    }
    return join(w, " and ");
  };
  for (const auto& [k, x] : v.exposed_by_source) {
    if (x <= v.tolerance_s) continue;
    std::string what;
    if (k == kSourceTransferWaits) {
      const auto steps = stalled_words(false);
      what = steps.empty() ? "steps waiting on transfers" : steps + " waiting on transfers";
      if (!in.overlap) what += " (--overlap none: each transfer follows its compute)";
    } else if (k == kSourceDiagonal) {
      const auto steps = stalled_words(true);
      what = fmt::format(
          "the diagonal step ({}: the causal mask halves its work) waiting on its "
          "transfer",
          steps.empty() ? std::string("step 0") : steps);
    } else if (k == kSourceFinalHop) {
      what = "the final dK/dV hop home after the last backward step";
    } else if (k == kSourceCollectives) {
      what = "the " + in.collective_name + ", which no compute overlaps";
    } else if (k == kSourceTp) {
      what = "the TP collectives";
    } else if (k == kSourceEp) {
      what = "the MoE token dispatch and combine";
    } else if (k == kSourceInterference) {
      what = "interference: compute and merges slowed while transfers run";
    } else {
      what = in.residual_name.empty() ? "time the sources above do not name" : in.residual_name;
    }
    parts.emplace_back(x, fmt::format("{} ({})", what, human_seconds(x)));
  }
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> words;
  for (const auto& p : parts) words.push_back(p.second);
  v.text = fmt::format("communication exposed: {}, from {}", human_seconds(v.exposed_comm_s),
                       words.empty() ? std::string("the schedule") : join(words, "; "));
  // Why, where the block is the reason.
  std::vector<std::string> why;
  for (int p = 0; p < 2; ++p) {
    const auto& m = in.min_block[static_cast<std::size_t>(p)];
    if (!m || *m == 0 || !in.overlap) continue;
    if (*m < 0)
      why.push_back(fmt::format("no block hides the {} transfers", pass_name(p)));
    else if (in.block < *m)
      why.push_back(fmt::format("block {} < min block {} for {}", in.block, *m, pass_name(p)));
  }
  if (!why.empty()) v.text += " (" + join(why, "; ") + ")";
  v.text += largest_loss_text(v, in.time_s);
  return v;
}

std::string min_block_text(const Verdict& v, bool overlap, bool documents) {
  if (documents)
    return "n/a with packed documents: each step's work is where the documents fall (the "
           "stalled steps say which waited)";
  const auto& f = v.min_block_by_pass[0];
  const auto& b = v.min_block_by_pass[1];
  auto one = [](const std::optional<std::int64_t>& m) {
    return *m < 0 ? std::string("never") : std::to_string(*m);
  };
  std::string per;
  if (f && b)
    per = fmt::format(" (fwd {}, bwd {})", one(f), one(b));
  else if (f || b)
    per = fmt::format(" ({})", f ? "fwd" : "bwd");
  if (v.never_hides) return "never hides" + per;
  if (v.min_block) return fmt::format("{} tokens{}", *v.min_block, per);
  return overlap ? "n/a (no overlap in this layout)" : "n/a (--overlap none)";
}

std::string step_compute_text(const Verdict& v) {
  return fmt::format("{} ({} step {}); lightest {} ({} step {})",
                     human_seconds(v.heaviest_step_compute_s), pass_name(v.heaviest_pass),
                     v.heaviest_step, human_seconds(v.lightest_step_compute_s),
                     pass_name(v.lightest_pass), v.lightest_step);
}

json Verdict::to_json() const {
  json by = json::object();
  for (const auto& [k, x] : exposed_by_source) by[k] = x;
  return {{"hidden", hidden},
          {"exposed_comm_s", exposed_comm_s},
          {"tolerance_s", tolerance_s},
          {"stalled_steps", stalled_steps},
          {"stalled_steps_by_pass", {{"fwd", stalled[0]}, {"bwd", stalled[1]}}},
          {"min_block", opt_json(min_block)},
          {"never_hides", never_hides},
          {"min_block_by_pass",
           {{"fwd", opt_json(min_block_by_pass[0])}, {"bwd", opt_json(min_block_by_pass[1])}}},
          {"exposed_by_source", by},
          {"lightest_step_compute_s", lightest_step_compute_s},
          {"heaviest_step_compute_s", heaviest_step_compute_s},
          {"lightest_step", {{"pass", pass_name(lightest_pass)}, {"step", lightest_step}}},
          {"heaviest_step", {{"pass", pass_name(heaviest_pass)}, {"step", heaviest_step}}},
          {"losses", losses},
          {"largest_loss", largest_loss.empty() ? json(nullptr) : json(largest_loss)},
          {"fix", fix.empty() ? json(nullptr) : json(fix)},
          {"text", text}};
}

Verdict Verdict::from_json(const json& j, const std::string& origin) {
  auto bad = [&](const std::string& key, const char* what) {
    return InputError(
        fmt::format("{}: the summary's 'verdict.{}' is missing or not {}", origin, key, what));
  };
  if (!j.is_object()) throw InputError(origin + ": the summary's 'verdict' is not an object");
  auto at = [&](const json& o, const char* key, const std::string& path, auto is,
                const char* what) -> const json& {
    const auto it = o.find(key);
    if (it == o.end() || !is(*it)) throw bad(path, what);
    return *it;
  };
  auto num = [](const json& x) { return x.is_number(); };
  auto intg = [](const json& x) { return x.is_number_integer(); };
  auto boolean = [](const json& x) { return x.is_boolean(); };
  auto obj = [](const json& x) { return x.is_object(); };
  auto opt_int = [](const json& x) { return x.is_null() || x.is_number_integer(); };
  auto ints = [](const json& x) {
    return x.is_array() &&
           std::all_of(x.begin(), x.end(), [](const json& e) { return e.is_number_integer(); });
  };
  auto get_opt = [](const json& x) {
    return x.is_null() ? std::optional<std::int64_t>() : x.get<std::int64_t>();
  };
  auto step_of = [&](const char* key, int& pass, std::int64_t& step) {
    const auto& o = at(j, key, key, obj, "an object with pass and step");
    const auto& p = at(
        o, "pass", std::string(key) + ".pass",
        [](const json& x) { return x == "fwd" || x == "bwd"; }, "fwd or bwd");
    pass = p == "bwd" ? 1 : 0;
    step = at(o, "step", std::string(key) + ".step", intg, "an integer").get<std::int64_t>();
  };
  Verdict v;
  v.hidden = at(j, "hidden", "hidden", boolean, "true or false").get<bool>();
  v.exposed_comm_s = at(j, "exposed_comm_s", "exposed_comm_s", num, "a number").get<double>();
  v.tolerance_s = at(j, "tolerance_s", "tolerance_s", num, "a number").get<double>();
  v.stalled_steps = at(j, "stalled_steps", "stalled_steps", ints, "an array of integers")
                        .get<std::vector<std::int64_t>>();
  const auto& sp = at(j, "stalled_steps_by_pass", "stalled_steps_by_pass", obj, "an object");
  for (int p = 0; p < 2; ++p)
    v.stalled[static_cast<std::size_t>(p)] =
        at(sp, pass_name(p), std::string("stalled_steps_by_pass.") + pass_name(p), ints,
           "an array of integers")
            .get<std::vector<std::int64_t>>();
  v.min_block = get_opt(at(j, "min_block", "min_block", opt_int, "an integer or null"));
  v.never_hides = at(j, "never_hides", "never_hides", boolean, "true or false").get<bool>();
  const auto& mb = at(j, "min_block_by_pass", "min_block_by_pass", obj, "an object");
  for (int p = 0; p < 2; ++p)
    v.min_block_by_pass[static_cast<std::size_t>(p)] =
        get_opt(at(mb, pass_name(p), std::string("min_block_by_pass.") + pass_name(p), opt_int,
                   "an integer or null"));
  const auto& by = at(j, "exposed_by_source", "exposed_by_source", obj, "an object");
  for (const auto& [k, x] : by.items()) {
    if (!x.is_number()) throw bad("exposed_by_source." + k, "a number");
    v.exposed_by_source[k] = x.get<double>();
  }
  v.lightest_step_compute_s =
      at(j, "lightest_step_compute_s", "lightest_step_compute_s", num, "a number").get<double>();
  v.heaviest_step_compute_s =
      at(j, "heaviest_step_compute_s", "heaviest_step_compute_s", num, "a number").get<double>();
  step_of("lightest_step", v.lightest_pass, v.lightest_step);
  step_of("heaviest_step", v.heaviest_pass, v.heaviest_step);
  for (const auto& [k, x] : at(j, "losses", "losses", obj, "an object").items()) {
    if (!x.is_number()) throw bad("losses." + k, "a number");
    v.losses[k] = x.get<double>();
  }
  auto opt_str = [&](const char* key) {
    const auto& x = at(
        j, key, key, [](const json& e) { return e.is_null() || e.is_string(); },
        "a string or null");
    return x.is_null() ? std::string() : x.get<std::string>();
  };
  v.largest_loss = opt_str("largest_loss");
  v.fix = opt_str("fix");
  v.text = at(
               j, "text", "text", [](const json& x) { return x.is_string(); }, "a string")
               .get<std::string>();
  return v;
}

}  // namespace ringsim
