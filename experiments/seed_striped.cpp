#include "experiments/seed_striped.hpp"

#include <fmt/format.h>

#include "experiments/seed_published.hpp"
#include "models/core/errors.hpp"

namespace ringsim::exp::seed {

namespace {

InputError bad(const ValidationCase& c, const std::string& why) {
  return InputError(fmt::format("models/data/validation.json: case '{}': {}", c.id, why));
}

std::string setting_of(const ValidationCase& c, const proc::HardwareSpec& h) {
  if (h.gpu == "tpu-v4") return "TPU v4";
  if (h.cluster == "dgx-a100") return "A100";
  throw bad(c, "neither --gpu tpu-v4 nor --cluster dgx-a100");
}

std::string model_of(const ValidationCase& c, const proc::WorkloadSpec& w) {
  for (const auto& m : seed_models())
    if (w.d_model == m.d_model && w.heads == m.heads && w.ffn == m.ffn) return m.name;
  throw bad(c, "its shape is none of the seed models'");
}

StripedSeries& series_for(std::vector<StripedSeries>& all, const StripedSeries& key) {
  for (auto& s : all)
    if (s.table == key.table && s.model == key.model && s.mp == key.mp && s.sp == key.sp) return s;
  return all.emplace_back(key);
}

std::vector<StripedSeries> build() {
  std::vector<StripedSeries> all;
  for (const auto& c : embedded_validation().cases) {
    if (c.source != kStripedSource) continue;
    StripedPoint p{0, 0, c.published, &c};
    const auto striped = striped_spec(p, Layout::Striped);
    const auto& w = striped.workload;
    if (!c.also_published.count("tms")) throw bad(c, "no also_published.tms");
    p.tms = c.also_published.at("tms");
    p.block = w.block;
    StripedSeries key{
        c.table, setting_of(c, striped.hardware), model_of(c, w),
        w.tp,    static_cast<int>(w.devices),     striped.hardware.key_chunk.value_or(0),
        {}};
    series_for(all, key).points.push_back(p);
  }
  return all;
}

}  // namespace

proc::RunSpec striped_spec(const StripedPoint& p, Layout layout) {
  const auto& c = *p.c;
  auto spec =
      proc::parse_run_args(case_words(layout == Layout::Striped ? c.args : c.baseline_args));
  if (spec.workload.layout != layout || c.metric != "speedup")
    throw bad(c, "not a speedup of --layout striped over --layout ring");
  return spec;
}

const std::vector<StripedSeries>& striped_tables() {
  static const std::vector<StripedSeries> t = build();
  return t;
}

}  // namespace ringsim::exp::seed
