#pragma once
// "Export for Perfetto": the loaded (and possibly filtered) events written
// back out through the project's one trace writer (trace::write_trace), so
// the file follows docs/trace-format.md - one track per device and activity,
// flows from send to receive - and opens in ui.perfetto.dev. Devices are
// grouped into node processes when the run's metadata says how (run_facts).
// Plain C++ with no Qt.
#include <nlohmann/json.hpp>
#include <string>

#include "gui/run_facts.hpp"
#include "gui/trace_model.hpp"

namespace ringsim::gui {

// otherData.ringsim rebuilt from what the reader kept: format, layout,
// devices, steps, and the summary unflattened ("a.b" -> {"a": {"b": ...}};
// "faults.straggler.0.device" -> an array again).
nlohmann::json run_metadata(const Trace& trace);

// Writes `trace` to `path` (whole or not at all). Throws ringsim::InputError
// with one line naming the path on I/O errors.
void export_perfetto(const Trace& trace, const RunFacts& facts, const std::string& path);

}  // namespace ringsim::gui
