#pragma once
// How far a result may sit from the float64 reference, and the comparison.
//
// Error model (rounding-error analysis in the style of Higham, "Accuracy and
// Stability of Numerical Algorithms", ch. 3, using the typical sqrt(n) growth
// of accumulated rounding rather than the worst-case n):
//   - a score is a length-d dot product: error ~ sqrt(d) u |S|, |S| <= Smax,
//     Smax = scale * max_i |q_i| * max_j |k_j| (Cauchy-Schwarz);
//   - exp turns an absolute score error e into a relative error e of P, so
//     O = sum_j P_j V_j and the LSE inherit it (times max|V| for O);
//   - the sums over up to S keys add ~ sqrt(S) u.
// Normwise relative tolerance  tau = 16 u (sqrt(d) (1 + Smax) + sqrt(S)),
// u = 2^-24 (fp32) or 2^-53 (fp64); 16 covers the spread of the maximum over
// many entries. Applied as |O - O_ref| <= tau max|V|, |LSE - LSE_ref| <= tau,
// |dX - dX_ref| <= tau max|dX_ref| for the gradients. A wrong mask, a missed
// block or a bad merge gives errors of order 1, far above tau.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/emulator.hpp"

namespace ringsim::kernels {

struct ToleranceModel {
  double unit_roundoff = 0;  // u
  double score_bound = 0;    // Smax
  int head_dim = 1;
  std::int64_t seq_k = 1;
  double smallest = 0;  // eta: the smallest positive (subnormal) value of the result's type
  double tau() const;
  // The absolute floor of any tolerance, for a tau scaled by `factor`.
  double floor(double factor = 1) const;
};

ToleranceModel tolerance_model(const AttnInputs& in, int kv_heads, int head_dim, bool fp64);

struct ErrorStat {
  std::string tensor;
  double max_abs = 0;    // max |got - ref|; inf if a value is NaN or where only one side is -inf
  double max_rel = 0;    // max_abs / max |ref| (normwise)
  double tolerance = 0;  // on max_abs
  bool ok = true;
  // Why the check could not judge, when a number is not finite (empty otherwise).
  std::string reason;
  // Set when the tolerance was raised to the absolute floor (see above).
  std::string note;
};

// Entries equal to -inf on both sides (fully masked LSE rows) agree; any other
// infinity or NaN on either side is an infinite error. The check fails, with a
// reason, whenever the error or the tolerance is not finite: an overflowed
// input makes both infinite, and inf <= inf must not read as a match.
// A finite tolerance below `floor` is raised to it, with a note.
ErrorStat compare(const std::string& tensor, const std::vector<double>& got,
                  const std::vector<double>& ref, double tolerance, double floor = 0);

double max_abs_value(const std::vector<double>& x);

// The comparison as `--json` prints it (verify, ringsim-mpi): one object per
// tensor, with "reason" and "note" only when set.
nlohmann::json to_json(const std::vector<ErrorStat>& errors);

}  // namespace ringsim::kernels
