#pragma once
// Small traces written in the test, straight from docs/trace-format.md, so the
// GUI tests need no simulator. The schedule is a plain ring: on step s device d
// computes on KV block (d - s) mod N while it sends that block on and receives
// the next one; under a causal mask a contiguous ring skips blocks after its
// own and does half of its own, a striped layout does about half of each.
#include <QString>
#include <string>

namespace ringsim::gui::test {

struct RingSpec {
  int devices = 4;
  int steps = -1;               // -1: a full ring, one step per device
  std::string layout = "ring";  // "ring" or "striped" (only matters when causal)
  bool causal = false;
  double compute_us = 100;  // one full block
  double transfer_us = 60;  // one K/V block over one link
  long long bytes = 16777216;
  double ts_offset = 0;      // added to every ts (traces need not start at 0)
  bool run_info = true;      // otherData.ringsim with devices/steps/layout
  std::string summary_json;  // otherData.ringsim.summary, raw JSON; empty: none
};

std::string ring_trace_json(const RingSpec& spec);
// Writes `text` to a fresh file under the system temp dir and returns its path.
QString write_temp(const std::string& text, const QString& name);

}  // namespace ringsim::gui::test
