#pragma once
// Reads the standard output of NVIDIA's nccl-tests (all_reduce_perf,
// all_gather_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf): the
// "# Using devices" rank lines (GPUs, hosts) and the results table
// (size count type [redop [root]] time algbw busbw #wrong, out-of-place then
// in-place). Any layout nccl-tests has printed since 2.0 is read by its
// column header; a leading '#' may be missing (text pasted through markdown).
// Bad input is one InputError line naming the file: no table, a truncated
// row, mixed GPUs, a table whose busbw/algbw is not the collective's factor.
#include <string>
#include <vector>

#include "models/core/measured_curve.hpp"

namespace ringsim {

struct NcclTestsRow {
  double bytes = 0;
  double time_us = 0;           // out-of-place (in-place where nccl-tests printed none)
  double algbw = 0, busbw = 0;  // GB/s as printed
};

struct NcclTestsRun {
  MeasuredKind kind = MeasuredKind::AllReduce;
  int ranks = 0, nodes = 0;
  std::string gpu;
  std::vector<std::string> hosts;
  std::vector<NcclTestsRow> rows;
  // As a curve (sizes ascending, seconds), `source` naming the file.
  MeasuredCurve curve(const std::string& source) const;
};

// The collective named in the text (the command nccl-tests' users paste with
// it, "all_reduce_perf") or else in the file name; nullopt when neither names
// exactly one.
std::optional<MeasuredKind> nccl_tests_kind(const std::string& text, const std::string& file);

// `origin` names the file in messages; `kind` is the collective (from the
// caller: nccl_tests_kind or the user's KIND=FILE).
NcclTestsRun parse_nccl_tests(const std::string& text, const std::string& origin,
                              MeasuredKind kind);

}  // namespace ringsim
