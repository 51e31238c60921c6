#pragma once
// The numbers of the summary panel. Computed from the events, then replaced by
// otherData.ringsim.summary where the trace carries the simulator's own value,
// so the panel agrees with `ringsim --json` for ringsim traces and still works
// for traces from other tools.
#include <string>
#include <vector>

#include "gui/trace_model.hpp"

namespace ringsim::gui {

// One ring step; runs over several layers or both passes repeat the steps,
// so a step is keyed by (layer, pass, step).
struct StepStats {
  int step = 0;
  int layer = -1;
  PassKind pass = PassKind::Unknown;
  int devices = 0;            // devices with work in this step
  double compute_max_us = 0;  // slowest device's compute (partial + merge) in the step
  double compute_mean_us = 0;
  double transfer_max_us = 0;  // longest send of the step
  double transfer_mean_us = 0;
  double bytes = 0;  // sent by all devices in the step
};

struct SummaryValue {
  double value = 0;
  bool from_trace = false;  // taken from otherData.ringsim.summary
};

struct Summary {
  int devices = 0;
  int steps = 0;
  // Definitions when computed from events (per device d, over [0, total]):
  //   total      = last event end - first event start
  //   ideal      = sum_d busy_compute(d) / devices: all work balanced, all communication hidden
  //   efficiency = ideal / total
  //   exposed    = mean_d |comm(d) \ compute(d)|: communication nothing overlaps
  //   idle       = mean_d (total - |compute(d) U comm(d)|) / total
  // where compute(d), comm(d) are the unions of that device's intervals.
  SummaryValue total_us, ideal_us, efficiency, exposed_comm_us, idle_fraction;
  std::vector<StepStats> per_step;    // by layer, then pass, then step
  bool steps_repeat = false;          // more than one (layer, pass)
  std::vector<RunInfo::Field> other;  // the trace summary's fields not shown above
};

Summary compute_summary(const Trace& trace);  // from the events only
Summary summarize(const Trace& trace);        // events, then the trace's own summary

// "1.23 ms", "456 us", "12.0 ns": the unit that keeps 3 significant digits readable.
std::string format_us(double us);
// "16.8 MB"
std::string format_bytes(double bytes);

}  // namespace ringsim::gui
