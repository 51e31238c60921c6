#pragma once
// The simulation's outputs as files: --trace (Chrome Trace Event JSON, exactly
// docs/trace-format.md) and --csv (one row per device per step). Both are
// written in a fixed order with fixed-precision numbers, so identical inputs
// give byte-identical files, and through AtomicFile, so Ctrl-C or a full disk
// never leaves half a file.
#include <nlohmann/json.hpp>
#include <string>

#include "models/core/atomic_file.hpp"
#include "models/core/workload.hpp"
#include "sim/simulate.hpp"
#include "sim/topology.hpp"

namespace ringsim::sim {

// `summary` goes to otherData.ringsim.summary. Throws InputError naming
// the file's flag on I/O errors; returns false if interrupted.
// Into an open file, left uncommitted: a run commits its outputs together
// (commit_all), so Ctrl-C between them leaves neither.
bool write_trace(AtomicFile& file, const SimResult& r, const Workload& w,
                 const TopologyOptions& topo, const nlohmann::json& summary);

// Columns: layer,pass,device,step,kv_block,entries,start_s,compute_s,
// comm_bytes,comm_end_s,end_s,wait_s,stalled.
bool write_csv(AtomicFile& file, const SimResult& r);

}  // namespace ringsim::sim
