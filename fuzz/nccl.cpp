// Fuzz target: nccl-tests output (`ringsim hardware --import-nccl-tests`,
// parse_nccl_tests and nccl_tests_kind). Any bytes must be refused with one
// InputError line or read as a usable run: at least 2 ranks and 2 sizes,
// sizes strictly ascending, positive finite times, and a curve whose time is
// finite, positive and non-decreasing past the largest size.
#include <cmath>
#include <string>

#include "fuzz/target.hpp"
#include "models/core/errors.hpp"
#include "models/core/nccl_tests.hpp"

namespace ringsim::fuzz {

namespace {

void check_run(const NcclTestsRun& r) {
  if (r.ranks < 2 || r.nodes < 1 || r.nodes > r.ranks) finding("nccl: ranks or nodes out of range");
  if (r.rows.size() < 2) finding("nccl: fewer than 2 sizes accepted");
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    if (!(r.rows[i].time_us > 0) || !std::isfinite(r.rows[i].time_us))
      finding("nccl: a non-positive time accepted");
    if (i > 0 && !(r.rows[i].bytes > r.rows[i - 1].bytes)) finding("nccl: sizes not ascending");
  }
  const auto c = r.curve("fuzz");
  const double big = c.points.back().first;
  for (double b : {1.0, c.points.front().first * 1.5, big, 4 * big}) {
    const double t = c.seconds(b, r.ranks);
    if (!(t > 0) || !std::isfinite(t)) finding("nccl: the curve gave a non-positive time");
  }
  if (c.seconds(4 * big, 2 * r.ranks) < c.seconds(big, 2 * r.ranks))
    finding("nccl: the curve shrinks past the largest size");
}

}  // namespace

int nccl(const std::uint8_t* data, std::size_t size) {
  if (size > 16384) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)nccl_tests_kind(text, "fuzz_all_reduce.txt");
  for (auto k : {MeasuredKind::AllReduce, MeasuredKind::SendRecv}) {
    try {
      check_run(parse_nccl_tests(text, "--import-nccl-tests fuzz.txt", k));
    } catch (const InputError& e) {
      check_message("nccl", e.what(), true);
    }
  }
  return 0;
}

}  // namespace ringsim::fuzz

RINGSIM_FUZZ_ENTRY(nccl)
