#pragma once
// A framework's execution assumptions moved by --set frameworks.NAME.FIELD
// (docs/models.md, "Moving an assumption"): the host and device cost per
// kernel, the kernels a layer issues, the layouts it implements, and its
// calibration factor. Catalog fields move in the catalog (Catalog::set);
// these live in code (execution.cpp, framework.cpp), so plan applies them.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/core/workload.hpp"

namespace ringsim {

enum class Framework;

struct FrameworkMoves {
  std::optional<double> dispatch_s, gap_s, calibration, allocator_reserve;
  std::optional<int> kernels_fwd, kernels_bwd;
  std::optional<std::vector<Layout>> layouts;
  std::vector<std::string> keys;  // the keys moved, in order (for --explain)
  bool moved(const std::string& field) const;
};

// The framework fields a --set may move, with what each means.
const std::vector<std::pair<std::string, std::string>>& framework_fields();

// The frameworks.* keys of `sets`, for the plan's framework `f`; a key that
// names another framework, an unknown field or a bad value is refused with
// one line naming --set KEY (InputError).
FrameworkMoves parse_framework_moves(const std::vector<std::pair<std::string, std::string>>& sets,
                                     Framework f);

}  // namespace ringsim
