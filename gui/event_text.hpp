#pragma once
// Words for one event, shared by the hover tooltip and the details panel.
#include <string>

#include "gui/trace_model.hpp"

namespace ringsim::gui {

// Short: "device 3 · partial (fwd)\nstep 1 · KV block 2\nstart ... · duration ...\nbytes ...".
std::string event_tooltip(const Trace& trace, const Event& e);
// Every field, one "label: value" per line.
std::string event_details(const Trace& trace, const Event& e);

}  // namespace ringsim::gui
