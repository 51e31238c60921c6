#include "sim/trace_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "models/work.hpp"
#include "sim/atomic_file.hpp"
#include "sim/progress.hpp"

namespace ringsim::sim {

namespace {

// Buffers formatted text and hands it to the file in large pieces.
class Sink {
 public:
  explicit Sink(AtomicFile& f) : f_(f) {}
  template <typename... Args>
  void put(fmt::format_string<Args...> s, Args&&... args) {
    fmt::format_to(std::back_inserter(buf_), s, std::forward<Args>(args)...);
    if (buf_.size() > (1u << 20)) flush();
  }
  void flush() {
    f_.write(std::string_view(buf_.data(), buf_.size()));
    buf_.clear();
  }

 private:
  AtomicFile& f_;
  fmt::memory_buffer buf_;
};

// Microseconds, the unit of the trace format, to the picosecond.
double us(double s) {
  return s * 1e6;
}

}  // namespace

bool write_trace(const std::string& path, const SimResult& r, const Workload& w,
                 const TopologyOptions& topo, const nlohmann::json& summary) {
  AtomicFile file(path, "--trace");
  Sink out(file);
  out.put("{{\n\"displayTimeUnit\": \"ns\",\n\"traceEvents\": [\n");
  const auto n = static_cast<std::int64_t>(r.events.size());
  const bool nodes = topo.platform == Platform::Nodes || topo.platform == Platform::Torus2D ||
                     topo.platform == Platform::Torus3D;
  bool first = true;
  auto sep = [&] {
    if (!first) out.put(",\n");
    first = false;
  };
  std::int64_t last_pid = -1;
  for (std::int64_t d = 0; d < n; ++d) {
    const auto pid = node_of(topo, d);
    if (pid != last_pid) {
      sep();
      out.put(
          R"({{"name": "process_name", "ph": "M", "pid": {}, "tid": 0, "args": {{"name": "{}"}}}})",
          pid, nodes ? fmt::format("node {}", pid) : std::string("devices"));
      last_pid = pid;
    }
    sep();
    out.put(
        R"({{"name": "thread_name", "ph": "M", "pid": {}, "tid": {}, "args": {{"name": "device {}"}}}})",
        pid, d, d);
  }
  std::vector<const Event*> order;
  for (std::int64_t d = 0; d < n; ++d) {
    if (interrupt_requested()) return false;
    const auto& ev = r.events[static_cast<std::size_t>(d)];
    order.clear();
    for (const auto& e : ev) order.push_back(&e);
    std::stable_sort(order.begin(), order.end(), [](const Event* a, const Event* b) {
      if (a->start != b->start) return a->start < b->start;
      return std::strcmp(phase_name(a->phase), phase_name(b->phase)) < 0;
    });
    const auto pid = node_of(topo, d);
    for (const Event* e : order) {
      sep();
      out.put(
          R"({{"name": "{}", "cat": "{}", "ph": "X", "pid": {}, "tid": {}, "ts": {:.6f}, "dur": {:.6f}, )",
          phase_name(e->phase), phase_category(e->phase), pid, d, us(e->start),
          us(e->end - e->start));
      out.put(R"("args": {{"device": {}, "step": {}, "kv_block": {}, "bytes": {})", d, e->step,
              e->kv_block, e->bytes);
      if (e->phase == Phase::Partial) out.put(R"(, "entries": {})", e->entries);
      if (e->peer >= 0) out.put(R"(, "peer": {})", e->peer);
      if (e->round >= 0) out.put(R"(, "round": {})", e->round);
      out.put(R"(, "pass": "{}", "layer": {}}}}})", e->bwd ? "bwd" : "fwd", e->layer);
    }
  }
  nlohmann::json meta;
  meta["format"] = "ringsim-trace-1";
  meta["devices"] = w.devices;
  meta["steps"] = num_steps(w);
  meta["layout"] = to_string(w.layout);
  meta["engine"] = "simgrid";
  meta["platform"] = r.platform;
  meta["summary"] = summary;
  out.put("\n],\n\"otherData\": {{\"ringsim\": {}}}\n}}\n", meta.dump());
  out.flush();
  if (interrupt_requested()) return false;
  file.commit();
  return true;
}

bool write_csv(const std::string& path, const SimResult& r) {
  AtomicFile file(path, "--csv");
  Sink out(file);
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
  if (interrupt_requested()) return false;
  file.commit();
  return true;
}

}  // namespace ringsim::sim
