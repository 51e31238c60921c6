#pragma once
// `plan --documents DIST --samples N`: the planner's layouts under packed
// documents. A length distribution has no single packing, so each layout (and
// pack mode, where the layout splits documents) is timed over N packings drawn
// with seeds S, S+1, ..., S+N-1 (sample i is `ringsim run --documents DIST
// --seed S+i`): the attention of one sequence by the analytic engine, then the
// whole training step with that attention (as the SimGrid re-check replaces
// it). The rows keep the best config's shape (CP, TP, PP, micro-batch) and
// change only the layout and pack mode, so their spread is the packing's.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/core/documents.hpp"
#include "models/plan/plan.hpp"

namespace ringsim {

// Mean and spread of a sample: p10 and p90 by nearest rank, stddev over n
// (the population's: the samples are all the packings evaluated).
struct Spread {
  double mean = 0, stddev = 0, min = 0, p10 = 0, p90 = 0, max = 0;
};
Spread spread_of(std::vector<double> xs);

struct DocumentSampling {
  DocumentSpec spec;
  std::int64_t samples = 16;
  std::uint64_t seed = 0;
  // Given by the user: refused beyond the size guard. The default is cut to
  // the packings that fit instead, and the table says so.
  bool samples_given = true;
};

struct DocumentPlanRow {
  PlanConfig config;  // the shape with this layout, timed with the mean attention
  Pack pack = Pack::Sequence;
  bool pack_matters = true;   // false for Ulysses and no CP: every token is local
  Spread attention_layer_s;   // fwd+bwd of one layer, one sequence
  Spread step_time_s;         // the training step, per sample
  double documents_mean = 0;  // documents per packed sequence, mean over samples
  std::string label() const;  // "zigzag cp 8 / document"
};

struct DocumentPlan {
  PlanConfig base;           // the config whose shape every row keeps
  std::int64_t samples = 0;  // packings timed: --samples, or the default cut to the guard
  // Feasible rows by mean step time (best first), then the infeasible.
  std::vector<DocumentPlanRow> rows;
};

// Called after each packing is timed with how many are done of how many
// (a progress bar's tick); long runs check for a stop there too
// (models/core/cancel.hpp).
using SampleProgress = std::function<void(std::uint64_t done, std::uint64_t total)>;

// The sampler's size guard: every row times every packing with the closed
// forms. The first packing is timed over every row while its work is
// counted (document_work_done, a count of device-steps and calls, the same
// on every machine); the run is refused, naming --samples and the most that
// fit, when that count times --samples passes kMaxSamplerUnits (about 20 s
// here at the edge, docs/bad-input.md); the default --samples is cut to them. Each closed form is
// bounded by its own guard (check_documents_size), so the first packing is too.
inline constexpr std::uint64_t kMaxSamplerUnits = std::uint64_t{1} << 25;
// The packings to time when the first cost `first_units`: all of them, or
// (the default --samples) the most that fit, said in the table's header.
// Throws InputError naming --samples for a given count beyond the guard.
std::int64_t samples_within_guard(std::uint64_t first_units, const DocumentSampling& s);

// Every layout of `layouts` (all six when empty) in both pack modes, with
// `like`'s shape. Throws InputError when a sampled packing does not fit, or
// (naming --samples, after the first packing) beyond the size guard.
DocumentPlan plan_documents(const PlanRequest& r, const Hardware& hw, const Implementation& cm,
                            const PlanConfig& like, const std::vector<Layout>& layouts,
                            const DocumentSampling& s, const SampleProgress& progress = {});

// The table under the plan's (text) and its `documents` object (JSON).
std::string documents_text(const DocumentPlan& p, const DocumentSampling& s);
nlohmann::json documents_json(const DocumentPlan& p, const DocumentSampling& s);

}  // namespace ringsim
