#include "models/plan/documents.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "models/analytic/analytic.hpp"
#include "models/core/calls.hpp"
#include "models/core/cancel.hpp"
#include "models/core/errors.hpp"
#include "models/core/work.hpp"
#include "models/plan/report.hpp"

namespace ringsim {

Spread spread_of(std::vector<double> xs) {
  Spread s;
  if (xs.empty()) return s;
  std::sort(xs.begin(), xs.end());
  const double n = static_cast<double>(xs.size());
  s.mean = std::accumulate(xs.begin(), xs.end(), 0.0) / n;
  double ss = 0;
  for (const double x : xs) ss += (x - s.mean) * (x - s.mean);
  s.stddev = std::sqrt(ss / n);
  // Nearest rank: the ceil(p n)-th smallest.
  const auto rank = [&](double p) {
    const auto k = static_cast<std::size_t>(std::ceil(p * n));
    return xs[std::clamp<std::size_t>(k, 1, xs.size()) - 1];
  };
  s.min = xs.front();
  s.max = xs.back();
  s.p10 = rank(0.1);
  s.p90 = rank(0.9);
  return s;
}

std::string DocumentPlanRow::label() const {
  return pack_matters ? fmt::format("{} / {}", config.label(), to_string(pack)) : config.label();
}

namespace {

// Seconds of one layer's attention (fwd, fwd+bwd) of one sequence packed as
// `docs`, by the analytic engine, as step_time charges its own.
std::pair<double, double> attention_per_layer(const PlanRequest& r, const Hardware& hw,
                                              const Implementation& cm, const PlanConfig& c,
                                              Pack pack, std::vector<std::int64_t> docs) {
  auto w = attention_workload(r, c);
  if (docs.size() > 1) w.documents = std::move(docs);  // one document: the causal run itself
  w.pack = pack;
  check_documents(w);
  const auto g = group_hardware(hw, c.tp);
  const double L = static_cast<double>(r.shape.layers);
  const double fwdbwd = analyze_time(w, g, cm);
  w.pass = Pass::Fwd;
  return {analyze_time(w, g, cm) / L, fwdbwd / L};
}

// Where a row's samples go while the packings are drawn one at a time.
struct RowSamples {
  std::vector<double> attn, steps;
  double fwd_sum = 0, docs = 0;
};

void add_sample(const PlanRequest& r, const Hardware& hw, const Implementation& cm,
                const DocumentPlanRow& row, const std::vector<std::int64_t>& lengths,
                RowSamples& out) {
  const auto [fwd, fwdbwd] = attention_per_layer(r, hw, cm, row.config, row.pack, lengths);
  const auto c = evaluate(r, hw, cm, row.config, AttentionOverride{fwd, fwdbwd, "analytic"});
  out.attn.push_back(fwdbwd);
  out.steps.push_back(c.time.step_time_s);
  out.fwd_sum += fwd;
  out.docs += static_cast<double>(lengths.size());
}

void settle_row(const PlanRequest& r, const Hardware& hw, const Implementation& cm,
                DocumentPlanRow& row, RowSamples& got) {
  row.attention_layer_s = spread_of(got.attn);
  row.step_time_s = spread_of(got.steps);
  const double n = static_cast<double>(got.attn.size());
  row.documents_mean = got.docs / n;
  // The row's config (tokens/s, MFU) at the mean attention.
  row.config = evaluate(r, hw, cm, row.config,
                        AttentionOverride{got.fwd_sum / n, row.attention_layer_s.mean, "analytic"});
}

// The rows: each layout in both pack modes where the layout splits documents;
// a layout a shape rule refuses is one row, with its reason.
std::vector<DocumentPlanRow> document_rows(const PlanRequest& r, const Hardware& hw,
                                           const Implementation& cm, const PlanConfig& like,
                                           const std::vector<Layout>& layouts) {
  std::vector<Layout> all = layouts;
  if (all.empty())
    all = {Layout::Ring,    Layout::Striped,   Layout::Zigzag,
           Layout::Ulysses, Layout::Allgather, Layout::Hybrid};
  if (like.cp == 1) all = {Layout::Ring};  // no CP: the layout places nothing
  std::vector<DocumentPlanRow> rows;
  for (const Layout l : all) {
    auto shape = like;
    shape.layout = l;
    const bool matters = like.cp > 1 && l != Layout::Ulysses;
    for (const Pack pack : {Pack::Sequence, Pack::Document}) {
      if (!matters && pack == Pack::Document) continue;
      DocumentPlanRow row;
      row.pack = pack;
      row.pack_matters = matters;
      row.config = evaluate(r, hw, cm, shape, std::nullopt);
      const bool refused = !row.config.evaluated;
      if (refused) row.pack_matters = false;
      rows.push_back(std::move(row));
      if (refused) break;
    }
  }
  return rows;
}

}  // namespace

std::int64_t samples_within_guard(std::uint64_t first_units, const DocumentSampling& s) {
  const auto units = static_cast<long double>(first_units) * s.samples;
  if (units <= static_cast<long double>(kMaxSamplerUnits)) return s.samples;
  const auto most = static_cast<std::int64_t>(
      std::max<std::uint64_t>(1, kMaxSamplerUnits / std::max<std::uint64_t>(1, first_units)));
  if (!s.samples_given) return most;
  throw InputError(fmt::format(
      "--samples: {} packings of {} are beyond the document sampler's size guard: the first "
      "packing cost {} work units over every row (document_work_done: device-steps and calls), "
      "{:.3g} in all, at most {:.3g}; give --samples {} or fewer",
      s.samples, s.spec.text, first_units, static_cast<double>(units),
      static_cast<double>(kMaxSamplerUnits), most));
}

DocumentPlan plan_documents(const PlanRequest& r, const Hardware& hw, const Implementation& cm,
                            const PlanConfig& like, const std::vector<Layout>& layouts,
                            const DocumentSampling& s, const SampleProgress& progress) {
  DocumentPlan p;
  p.base = like;
  p.rows = document_rows(r, hw, cm, like, layouts);
  // The packings are drawn one at a time (seed S+i), and every row is timed
  // over each before the next: memory holds one packing, not --samples of them.
  // Size guard: the first packing over every row is counted (each of its
  // closed forms is bounded by its own guard), and the rest are refused when
  // they would cost more than kMaxSamplerUnits in all.
  std::vector<RowSamples> got(p.rows.size());
  std::uint64_t timed = 0;
  for (const auto& row : p.rows) timed += row.config.evaluated ? 1 : 0;
  const auto total = timed * static_cast<std::uint64_t>(s.samples);  // the bar's; may end early
  std::uint64_t done = 0;
  const auto work0 = document_work_done();
  for (std::int64_t i = 0; i < s.samples; ++i) {
    const auto lengths =
        pack_documents("--documents", s.spec, r.context, s.seed + static_cast<std::uint64_t>(i));
    for (std::size_t k = 0; k < p.rows.size(); ++k) {
      if (!p.rows[k].config.evaluated) continue;  // a shape rule: the reason is on the config
      add_sample(r, hw, cm, p.rows[k], lengths, got[k]);
      throw_if_cancelled();
      if (progress) progress(++done, total);
    }
    if (i == 0) p.samples = samples_within_guard(document_work_done() - work0, s);
    if (i + 1 >= p.samples) break;
  }
  for (std::size_t k = 0; k < p.rows.size(); ++k)
    if (p.rows[k].config.evaluated) settle_row(r, hw, cm, p.rows[k], got[k]);
  std::stable_sort(p.rows.begin(), p.rows.end(), [](const auto& a, const auto& b) {
    if (a.config.feasible != b.config.feasible) return a.config.feasible;
    return a.config.feasible && a.step_time_s.mean < b.step_time_s.mean;
  });
  return p;
}

std::string documents_text(const DocumentPlan& p, const DocumentSampling& s) {
  std::string out = fmt::format(
      "\npacked documents: {} ({} packings, seeds {}..{}), the shape of {}; attention is one "
      "layer fwd+bwd, step is the training step\n",
      s.spec.text, p.samples, s.seed, s.seed + static_cast<std::uint64_t>(p.samples) - 1,
      p.base.label());
  if (p.samples < s.samples)
    out += fmt::format(
        "  (the default --samples {} is beyond the sampler's size guard here: {} packings fit; "
        "docs/bad-input.md)\n",
        s.samples, p.samples);
  out += fmt::format("  {:<36}{:>7}{:>12}{:>12}{:>12}{:>12}{:>12}{:>12}{:>12}\n", "layout / pack",
                     "docs", "attn mean", "attn sd", "step mean", "step p10", "step p90", "step sd",
                     "tok/s/GPU");
  for (const auto& row : p.rows) {
    if (!row.config.feasible) {
      out += fmt::format("  {:<36} {}\n", row.label(), row.config.reason());
      continue;
    }
    const auto& a = row.attention_layer_s;
    const auto& t = row.step_time_s;
    out += fmt::format("  {:<36}{:>7.1f}{:>12}{:>12}{:>12}{:>12}{:>12}{:>12}{:>12.0f}\n",
                       row.label(), row.documents_mean, seconds(a.mean), seconds(a.stddev),
                       seconds(t.mean), seconds(t.p10), seconds(t.p90), seconds(t.stddev),
                       row.config.tokens_per_s_per_gpu);
  }
  if (!p.rows.empty() && p.rows.front().config.feasible)
    out += fmt::format("  best under these documents: {} (mean step {})\n", p.rows.front().label(),
                       seconds(p.rows.front().step_time_s.mean));
  return out;
}

namespace {
nlohmann::json spread_json(const Spread& s) {
  return {{"mean", s.mean}, {"stddev", s.stddev}, {"min", s.min},
          {"p10", s.p10},   {"p90", s.p90},       {"max", s.max}};
}
}  // namespace

nlohmann::json documents_json(const DocumentPlan& p, const DocumentSampling& s) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : p.rows) {
    nlohmann::json j;
    j["config"] = row.label();
    j["layout"] = p.base.cp == 1 ? "none" : to_string(row.config.layout);
    j["pack"] = row.pack_matters ? nlohmann::json(to_string(row.pack)) : nlohmann::json(nullptr);
    j["feasible"] = row.config.feasible;
    j["infeasible"] =
        row.config.feasible ? nlohmann::json(nullptr) : nlohmann::json(row.config.reason());
    j["documents_mean"] = row.documents_mean;
    j["attention_fwdbwd_s_per_layer"] = spread_json(row.attention_layer_s);
    j["step_time_s"] = spread_json(row.step_time_s);
    j["tokens_per_s_per_gpu"] = row.config.tokens_per_s_per_gpu;
    rows.push_back(j);
  }
  const bool best = !p.rows.empty() && p.rows.front().config.feasible;
  return {{"spec", s.spec.text},
          {"samples", p.samples},
          {"seed", s.seed},
          {"shape", p.base.label()},
          {"best", best ? nlohmann::json(p.rows.front().label()) : nlohmann::json(nullptr)},
          {"rows", rows}};
}

}  // namespace ringsim
