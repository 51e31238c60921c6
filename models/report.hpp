#pragma once
// The run summary as JSON (the keys users' scripts read) and as a human table.
#include <nlohmann/json.hpp>
#include <string>

#include "models/analytic.hpp"

namespace ringsim {

// Keys: devices, block, seq_len, layout, pass, causal, dtype, model, hardware,
// compute_s_per_step, comm_s_per_step, bytes_per_step, min_block, overlapped,
// time_s, ideal_time_s, efficiency, exposed_comm_s, memory_bytes_per_device,
// engine, compute_model, ... (docs/cli.md lists them all).
nlohmann::json summary_json(const Summary& s);
std::string summary_text(const Summary& s);

}  // namespace ringsim
