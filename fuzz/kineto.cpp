// Fuzz target: PyTorch profiler traces (`ringsim profile --from-trace`:
// parse_kineto_trace, trace_calls, trace_profile). Any bytes must be refused
// with one InputError line or read into calls with positive shapes and finite,
// non-negative times; a profile built from them must be one the profile
// reader accepts (what --from-trace writes, `--profile FILE` reads).
#include <cmath>
#include <string>

#include "fuzz/target.hpp"
#include "models/core/errors.hpp"
#include "models/core/kineto_trace.hpp"
#include "models/core/profile.hpp"
#include "models/core/trace_profile.hpp"

namespace ringsim::fuzz {

namespace {

void check_calls(const TraceCalls& c) {
  for (const auto& a : c.attention) {
    if (a.batch < 1 || a.heads < 1 || a.q_len < 1 || a.k_len < 1 || a.head_dim < 1)
      finding("kineto: an attention call with a non-positive shape");
    if (!(a.seconds >= 0) || !std::isfinite(a.seconds)) finding("kineto: a bad attention time");
  }
  for (const auto& g : c.gemm)
    if (g.m < 1 || g.n < 1 || g.k < 1 || g.batch < 1) finding("kineto: a GEMM with a bad shape");
  for (const auto& n : c.collectives)
    if (!(n.bytes > 0) || n.ranks < 1 || !std::isfinite(n.busbw()))
      finding("kineto: a collective with a bad size");
}

}  // namespace

int kineto(const std::uint8_t* data, std::size_t size) {
  if (size > 65536) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto trace = parse_kineto_trace(text, "--from-trace fuzz.json");
    const auto calls = trace_calls(trace);
    check_calls(calls);
    const auto profile = trace_profile(calls);
    if (profile.points.empty()) return 0;
    const auto doc = trace_profile_json(trace, calls, profile, "fuzz.json", "", {});
    try {
      (void)parse_profile(doc.dump(), "fuzz profile");
    } catch (const InputError& e) {
      finding(std::string("kineto: wrote a profile the reader refuses: ") + e.what());
    }
  } catch (const InputError& e) {
    check_message("kineto", e.what(), true);
  }
  return 0;
}

}  // namespace ringsim::fuzz

RINGSIM_FUZZ_ENTRY(kineto)
