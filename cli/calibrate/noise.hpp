#pragma once
// The machine's timing noise, measured before calibrate measures anything
// else: the same fixed piece of CPU work timed again and again on this
// process's core. On idle cores the times agree to a percent or two; under
// load other processes take time slices and the spread grows. A measured
// ring time cannot resolve a model error smaller than this spread, so the
// report states it and --max-noise refuses a machine above a limit.
#include <nlohmann/json.hpp>

namespace ringsim::cli::calibrate {

struct Noise {
  double spread = 0;      // (p90 - p10) / median of the probe's times
  double contention = 1;  // the probe's wall time over its CPU time (1: undisturbed)
  int samples = 0;
  double median_s = 0;  // one sample's median time
  nlohmann::json to_json() const;
};

// `samples` timings of about 2 ms of arithmetic each (about 0.1 s in all).
Noise measure_noise(int samples = 40);

}  // namespace ringsim::cli::calibrate
