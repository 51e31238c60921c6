#include "trace/writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <stdexcept>

#include "models/core/atomic_file.hpp"

namespace ringsim::trace {

const char* pass_name(Pass p) {
  return p == Pass::Fwd ? "fwd" : p == Pass::Bwd ? "bwd" : "";
}

namespace {

std::string quoted(const std::string& s) {
  return nlohmann::json(s).dump();
}

}  // namespace

bool write_trace(const std::string& path, const std::string& flag, const std::vector<Lane>& lanes,
                 const std::vector<std::vector<Event>>& events, const nlohmann::json& ringsim,
                 const WriteOptions& options) {
  AtomicFile file(path, flag);
  if (!write_trace(file, lanes, events, ringsim, options)) return false;
  file.commit();
  return true;
}

bool write_trace(AtomicFile& file, const std::vector<Lane>& lanes,
                 const std::vector<std::vector<Event>>& events, const nlohmann::json& ringsim,
                 const WriteOptions& options) {
  if (events.size() != lanes.size())
    throw std::invalid_argument("write_trace: one event list per lane");
  FormattedOut out(file);
  out.put("{{\n\"displayTimeUnit\": \"ns\",\n\"traceEvents\": [\n");
  bool first = true;
  auto sep = [&] {
    if (!first) out.put(",\n");
    first = false;
  };
  std::set<std::int64_t> named;
  for (const auto& l : lanes) {
    if (named.insert(l.pid).second) {
      sep();
      out.put(
          R"({{"name": "process_name", "ph": "M", "pid": {}, "tid": 0, "args": {{"name": {}}}}})",
          l.pid, quoted(l.process));
    }
    sep();
    out.put(R"({{"name": "thread_name", "ph": "M", "pid": {}, "tid": {}, "args": {{"name": {}}}}})",
            l.pid, l.device, quoted(l.thread));
  }
  const int p = options.decimals;
  std::vector<const Event*> order;
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    if (options.stop && options.stop()) return false;
    order.clear();
    for (const auto& e : events[i]) order.push_back(&e);
    std::stable_sort(order.begin(), order.end(), [](const Event* a, const Event* b) {
      if (a->start != b->start) return a->start < b->start;
      return std::strcmp(phase_name(a->phase), phase_name(b->phase)) < 0;
    });
    const auto& l = lanes[i];
    for (const Event* e : order) {
      sep();
      out.put(R"({{"name": "{}", "cat": "{}", "ph": "X", "pid": {}, "tid": {}, "ts": {:.{}f}, )",
              phase_name(e->phase), category_name(phase_category(e->phase)), l.pid, l.device,
              e->start, p);
      out.put(R"("dur": {:.{}f}, "args": {{"device": {}, "step": {}, "kv_block": {}, "bytes": {})",
              e->dur, p, l.device, e->step, e->kv_block, e->bytes);
      if (e->phase == Phase::Partial) out.put(R"(, "entries": {})", e->entries);
      if (e->executed > 0) out.put(R"(, "executed": {})", e->executed);
      if (e->peer >= 0) out.put(R"(, "peer": {})", e->peer);
      if (e->round >= 0) out.put(R"(, "round": {})", e->round);
      if (e->pass != Pass::Unknown) out.put(R"(, "pass": "{}")", pass_name(e->pass));
      if (e->layer >= 0) out.put(R"(, "layer": {})", e->layer);
      out.put("}}}}");
    }
  }
  out.put("\n],\n\"otherData\": {{\"ringsim\": {}}}\n}}\n", ringsim.dump());
  out.flush();
  return !(options.stop && options.stop());
}

}  // namespace ringsim::trace
