#include "gui/header_text.hpp"

#include <cstdio>

namespace ringsim::gui {

namespace {

std::string pct(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", f * 100);
  return buf;
}

}  // namespace

std::string header_numbers(const Summary& s, const RunFacts& f) {
  const std::string dot = " \u00b7 ";
  std::string out =
      "total " + format_us(s.total_us.value) + dot + "efficiency " + pct(s.efficiency.value);
  if (f.infer_ttft_us >= 0) {
    // infer's own numbers: the ring's exposed transfers, TP apart.
    out += dot + "TTFT " + format_us(f.infer_ttft_us);
    if (f.infer_ring_exposed_us >= 0)
      out += dot + "ring transfers exposed " + format_us(f.infer_ring_exposed_us);
    if (f.infer_tp_us >= 0) out += dot + "TP all-reduces " + format_us(f.infer_tp_us);
    return out + " (infer's summary)";
  }
  if (f.has_verdict) {
    // The simulator's one verdict, as `ringsim run` prints it (its sentence
    // is header_verdict's own line).
    if (f.verdict_exposed_us >= 0) out += dot + "exposed comm " + format_us(f.verdict_exposed_us);
    return out;
  }
  if (f.has_summary && s.exposed_comm_us.from_trace)
    return out + dot + "exposed comm " + format_us(s.exposed_comm_us.value) + " (run summary)" +
           dot + "idle " + pct(s.idle_fraction.value);
  return out + dot + "exposed comm " + format_us(s.exposed_comm_us.value) + dot + "idle " +
         pct(s.idle_fraction.value) + " (measured from the trace)";
}

std::string header_verdict(const RunFacts& f) {
  if (!f.has_verdict) return "";
  if (!f.verdict_text.empty()) return f.verdict_text;
  if (f.verdict_hidden.empty()) return "";
  return f.verdict_hidden == "true" ? "communication hidden" : "communication exposed";
}

std::string header_story(const RunFacts& f, int critical_device, double critical_wait_us) {
  std::string out;
  if (critical_device >= 0) {
    out = "critical device " + std::to_string(critical_device) + " (finishes last, waits " +
          format_us(critical_wait_us) + ")";
    if (f.critical_device >= 0 && f.critical_device != critical_device)
      out += ", busiest per the run summary: " + std::to_string(f.critical_device);
  }
  const std::string job = job_line(f);
  if (!job.empty()) out += (out.empty() ? "" : "  \u00b7  ") + job;
  const std::string faults = faults_line(f);
  if (!faults.empty()) out += (out.empty() ? "" : "  \u00b7  ") + faults;
  return out;
}

}  // namespace ringsim::gui
