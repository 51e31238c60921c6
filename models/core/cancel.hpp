#pragma once
// Long loops (the emulator's ring steps, the float64 reference's heads,
// the profiler's points) ask here whether to stop. The command line points the
// check at its stop-signal flag (cli/stop_scope.hpp); the kernels do not know
// where a stop comes from, so data still flows one way.
#include <cstdint>

namespace ringsim {

// Thrown between two units of work once the check says stop.
struct Cancelled {};

using CancelCheck = bool (*)();

// nullptr (the default): never cancelled.
void set_cancel_check(CancelCheck check);

// Throws Cancelled when the check is set and says stop.
void throw_if_cancelled();

// Long closed forms (packed documents walk every device's steps) say how far
// they are: `done` of `total` units. The command line may draw it
// (cli/stop_scope.hpp); nullptr (the default): nobody listens.
using ProgressReport = void (*)(std::uint64_t done, std::uint64_t total);
void set_progress_report(ProgressReport report);
void report_progress(std::uint64_t done, std::uint64_t total);

}  // namespace ringsim
