#pragma once
// The numbers line of a band's header. A ringsim run states its verdict once
// (summary verdict.*: hidden or not, exposed communication); the header
// repeats those numbers rather than computing its own. Only a trace without a
// summary (the MPI ring, other tools) gets numbers measured from its events,
// and says so. Plain C++ with no Qt (unit-tested).
#include <string>

#include "gui/run_facts.hpp"
#include "gui/trace_summary.hpp"

namespace ringsim::gui {

// "total 3.11 ms · efficiency 53.0% · exposed comm 1.2 ms" for a run with a
// verdict; "... (measured from the trace)" without a summary.
std::string header_numbers(const Summary& s, const RunFacts& f);
// The run's verdict sentence (summary verdict.text), on a line of its own so
// that it is never cut; "" without a verdict.
std::string header_verdict(const RunFacts& f);
// "critical device 5 (finishes last, waits 0 us)"-style naming of the critical
// device and the faults, for the header's second line; "" when nothing to say.
std::string header_story(const RunFacts& f, int critical_device, double critical_wait_us);

}  // namespace ringsim::gui
