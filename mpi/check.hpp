#pragma once
// --check: rank 0 gathers every rank's rows of O and LSE (and dQ, dK, dV after
// backward), puts them back in token order and compares them with full
// attention computed in float64 (kernels/reference.hpp) on the whole inputs.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/accuracy.hpp"
#include "mpi/inputs.hpp"
#include "mpi/ring.hpp"

namespace ringsim::mpi {

// Tolerances are `ringsim verify`'s error model (kernels/accuracy.hpp), so the
// real ring and the emulator pass or fail by the same rule.
struct CheckResult {
  bool matches = true;
  double tau = 0;                          // normwise relative tolerance
  std::vector<kernels::ErrorStat> errors;  // O, LSE[, dQ, dK, dV]
  nlohmann::json to_json() const;
  std::string line() const;  // "Matches full attention: True (...)"
};

// Collective. `bwd` may be null (forward only). The result is meaningful on rank 0.
template <typename T>
CheckResult check_against_reference(const World& w, const RingOptions& o, const FwdOut<T>& fwd,
                                    const BwdOut<T>* bwd, const FullInputs& full);

}  // namespace ringsim::mpi
