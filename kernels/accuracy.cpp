#include "kernels/accuracy.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace ringsim::kernels {

namespace {
// Largest Euclidean norm over the rows of a [rows, dim] tensor.
double max_row_norm(const std::vector<double>& x, int dim) {
  double best = 0;
  for (std::size_t r = 0; r + static_cast<std::size_t>(dim) <= x.size();
       r += static_cast<std::size_t>(dim)) {
    double s = 0;
    for (int e = 0; e < dim; ++e)
      s += x[r + static_cast<std::size_t>(e)] * x[r + static_cast<std::size_t>(e)];
    best = std::max(best, s);
  }
  return std::sqrt(best);
}
}  // namespace

double ToleranceModel::tau() const {
  return 16.0 * unit_roundoff *
         (std::sqrt(static_cast<double>(head_dim)) * (1.0 + score_bound) +
          std::sqrt(static_cast<double>(seq_k)));
}

double ToleranceModel::floor(double factor) const {
  return unit_roundoff > 0 ? 0.5 * smallest * factor * tau() / unit_roundoff : 0.0;
}

ToleranceModel tolerance_model(const AttnInputs& in, int kv_heads, int head_dim, bool fp64) {
  ToleranceModel m;
  m.unit_roundoff = fp64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  m.smallest = fp64 ? std::numeric_limits<double>::denorm_min()
                    : static_cast<double>(std::numeric_limits<float>::denorm_min());
  m.head_dim = head_dim;
  m.seq_k = static_cast<std::int64_t>(in.k.size() / static_cast<std::size_t>(kv_heads * head_dim));
  m.score_bound = max_row_norm(in.q, head_dim) * max_row_norm(in.k, head_dim) /
                  std::sqrt(static_cast<double>(head_dim));
  return m;
}

nlohmann::json to_json(const std::vector<ErrorStat>& errors) {
  nlohmann::json errs = nlohmann::json::array();
  for (const auto& e : errors) {
    errs.push_back({{"tensor", e.tensor},
                    {"max_abs", e.max_abs},
                    {"max_rel", e.max_rel},
                    {"tolerance", e.tolerance},
                    {"ok", e.ok}});
    if (!e.reason.empty()) errs.back()["reason"] = e.reason;
    if (!e.note.empty()) errs.back()["note"] = e.note;
  }
  return errs;
}

double max_abs_value(const std::vector<double>& x) {
  double m = 0;
  for (double v : x)
    if (std::isfinite(v)) m = std::max(m, std::fabs(v));
  return m;
}

ErrorStat compare(const std::string& tensor, const std::vector<double>& got,
                  const std::vector<double>& ref, double tolerance, double floor) {
  if (got.size() != ref.size()) throw std::invalid_argument("compare: sizes differ for " + tensor);
  ErrorStat e;
  e.tensor = tensor;
  e.tolerance = tolerance;
  if (std::isfinite(tolerance) && tolerance < floor) {
    e.tolerance = floor;
    e.note = fmt::format(
        "tolerance {:.3g} raised to the absolute floor {:.3g}: values this small are held to "
        "subnormal precision",
        tolerance, floor);
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], r = ref[i];
    double err;
    if (std::isnan(g) || std::isnan(r))
      err = std::numeric_limits<double>::infinity();
    else if (std::isinf(g) || std::isinf(r))
      err = g == r && g < 0 ? 0.0 : std::numeric_limits<double>::infinity();
    else
      err = std::fabs(g - r);
    e.max_abs = std::max(e.max_abs, err);
  }
  const double scale = max_abs_value(ref);
  e.max_rel = scale > 0 ? e.max_abs / scale : e.max_abs;
  if (!std::isfinite(tolerance) || tolerance < 0)
    e.reason = fmt::format(
        "the tolerance is {}: the inputs' scores overflow the arithmetic (scale the inputs down)",
        tolerance);
  else if (!std::isfinite(e.max_abs))
    e.reason = "a value is NaN or infinite (on the result's side, the reference's, or both)";
  e.ok = e.reason.empty() && e.max_abs <= e.tolerance;
  return e;
}

}  // namespace ringsim::kernels
