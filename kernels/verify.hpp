#pragma once
// One exactness check, as `ringsim verify` runs it: the ring emulator against
// the float64 reference (O, LSE and, with backward, dQ, dK, dV), plus the
// emulator's work counts against the analytic model's closed forms.
#include <string>
#include <vector>

#include "kernels/accuracy.hpp"
#include "kernels/emulator.hpp"

namespace ringsim::kernels {

struct VerifyReport {
  ToleranceModel tolerance;
  std::vector<ErrorStat> errors;  // O, LSE[, dQ, dK, dV]
  EmulatorResult result;
  std::string work_mismatch;  // empty when every count equals models/core/work.hpp
  bool passed() const;
};

// Compares every device-step of `r` with models/core/work.hpp: kv_source,
// step_entries (forward and backward), ring_elements_per_step after every step
// but the last, and the backward hop home (dK + dV of one block). Returns the
// first difference, or "" when all agree.
std::string check_work_counts(const Workload& w, const EmulatorResult& r);

// `tolerance_factor` scales every tolerance (tests use a tiny one to see a check fail).
VerifyReport verify_run(const Workload& w, const AttnInputs& in, bool fp64, bool backward,
                        const BlockOpts& kernel = {}, double tolerance_factor = 1.0);

}  // namespace ringsim::kernels
