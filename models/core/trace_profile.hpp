#pragma once
// A kernel profile (schema ringsim-profile-1, models/profiles/README.md) from
// the calls a PyTorch profiler trace holds: the attention calls become
// measured points that `run`, `plan` and `infer --profile FILE` read as the
// attention's rates; the GEMMs and NCCL calls found ride along as
// information (rates, bus bandwidths) for the report and docs/own-cluster.md.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/core/profile.hpp"
#include "models/core/trace_calls.hpp"

namespace ringsim {

// One profile point from the square attention calls of one shape.
struct TracePoint {
  ProfilePoint point;
  std::int64_t heads = 0;      // batch x query heads of the calls
  std::string kernel;          // the kernel's short name
  std::size_t overlapped = 0;  // calls that overlapped another stream's kernel
};

struct TraceGemmSummary {
  std::size_t calls = 0;
  double seconds = 0, flops = 0;
  double rate() const { return seconds > 0 ? flops / seconds : 0; }
};

struct TraceProfile {
  std::vector<TracePoint> points;
  // Attention calls kept out of the profile, by reason (non-square, too many heads).
  std::map<std::string, Unattributed> left_out;
  std::map<std::string, TraceGemmSummary> gemm_by_dtype;
};

// Groups the attention calls by (fwd/bwd, dtype, head dim, length, mask):
// median, min and max of their per-entry times, scaled to the largest call.
TraceProfile trace_profile(const TraceCalls& calls);

// The profile document: `source` names the trace (a file name, not a path),
// `peak` (FLOP/s per dtype, by the catalog device `device` the user or the
// trace's device name chose; empty when none) gives each GEMM rate's share.
nlohmann::json trace_profile_json(const KinetoTrace& trace, const TraceCalls& calls,
                                  const TraceProfile& profile, const std::string& source,
                                  const std::string& device,
                                  const std::map<std::string, double>& peak);

}  // namespace ringsim
