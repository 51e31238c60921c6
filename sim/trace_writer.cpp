#include "sim/trace_writer.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/core/atomic_file.hpp"
#include "models/core/work.hpp"
#include "sim/progress.hpp"
#include "trace/writer.hpp"

namespace ringsim::sim {

bool write_trace(AtomicFile& file, const SimResult& r, const Workload& w,
                 const TopologyOptions& topo, const nlohmann::json& summary) {
  const auto n = static_cast<std::int64_t>(r.events.size());
  const bool nodes = topo.platform == Platform::Nodes || topo.platform == Platform::Torus2D ||
                     topo.platform == Platform::Torus3D;
  std::vector<trace::Lane> lanes;
  // Job mode: one process per ring (its ranks are its threads), so the rings
  // show as groups; otherwise one per node.
  const auto ring = r.job.rings > 1 ? r.job.ring_size : std::int64_t{0};
  for (std::int64_t d = 0; d < n; ++d) {
    if (ring > 0) {
      lanes.push_back({static_cast<std::int32_t>(d), d / ring, fmt::format("ring {}", d / ring),
                       fmt::format("device {} (rank {})", d, d % ring)});
      continue;
    }
    const auto pid = node_of(topo, d);
    lanes.push_back({static_cast<std::int32_t>(d), pid,
                     nodes ? fmt::format("node {}", pid) : std::string("devices"),
                     fmt::format("device {}", d)});
  }
  nlohmann::json meta;
  meta["format"] = "ringsim-trace-1";
  meta["devices"] = ring > 0 ? n : w.devices;
  if (ring > 0) meta["rings"] = r.job.rings;
  meta["steps"] = num_steps(w);
  meta["layout"] = to_string(w.layout);
  meta["engine"] = "simgrid";
  meta["platform"] = r.platform;
  meta["summary"] = summary;
  trace::WriteOptions opt;
  opt.decimals = 6;  // picoseconds: simulated times are exact to far below that
  opt.stop = [] { return interrupt_requested(); };
  return trace::write_trace(file, lanes, r.events, meta, opt);
}

bool write_csv(AtomicFile& file, const SimResult& r) {
  FormattedOut out(file);
  out.put(
      "layer,pass,device,step,kv_block,entries,start_s,compute_s,comm_bytes,comm_end_s,end_s,wait_"
      "s,stalled\n");
  for (std::size_t d = 0; d < r.rows.size(); ++d) {
    if (interrupt_requested()) return false;
    for (const auto& x : r.rows[d])
      out.put("{},{},{},{},{},{},{:.12f},{:.12f},{},{:.12f},{:.12f},{:.12f},{}\n", x.layer,
              x.bwd ? "bwd" : "fwd", d, x.step, x.kv_block, x.entries, x.start, x.compute_s,
              x.comm_bytes, x.comm_end, x.end, x.wait_s, x.stalled ? 1 : 0);
  }
  out.flush();
  return !interrupt_requested();
}

}  // namespace ringsim::sim
