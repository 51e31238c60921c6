#pragma once
// Striped Attention's published striped-over-ring speedups (Brandon et al.,
// arXiv 2311.09431, Tables 3-5), grouped into the series the
// seed-reproduction experiment sweeps. The numbers live once, as `ringsim
// validate` cases of models/data/validation.json (source
// striped-attention-2311): each case is a striped `ringsim run` and its ring
// baseline, so the experiment evaluates the same commands the scoreboard runs.
#include <cstdint>
#include <string>
#include <vector>

#include "models/plan/validation.hpp"
#include "proc/run_spec.hpp"

namespace ringsim::exp::seed {

inline constexpr const char* kStripedSource = "striped-attention-2311";

struct StripedPoint {
  std::int64_t block = 0;       // tokens per device (n_seq / sequence parallel)
  double tms = 0, speedup = 0;  // the paper's Theoretical Maximum Speedup; measured
  const ValidationCase* c = nullptr;
};

// One table's model on one mesh (model parallel mp, sequence parallel sp).
struct StripedSeries {
  std::string table;    // "Table 3", ...
  std::string setting;  // "A100", "TPU v4"
  std::string model;    // the seed model whose shape the case runs ("1B", ...)
  int mp = 1, sp = 1;
  int key_chunk = 0;
  std::vector<StripedPoint> points;  // in the file's order (block ascending)
};

// The series of the embedded validation set, in its order; throws InputError
// for a case that is not a striped run over a ring baseline of a seed model.
const std::vector<StripedSeries>& striped_tables();

// A point's run: the case's flags (striped) or its baseline's (ring).
proc::RunSpec striped_spec(const StripedPoint& p, Layout layout);

}  // namespace ringsim::exp::seed
