#include "models/report.hpp"

#include <fmt/format.h>

#include "models/memory.hpp"
#include "models/parse.hpp"

namespace ringsim {

nlohmann::json summary_json(const Summary& s) {
  const auto& w = s.workload;
  nlohmann::json j;
  j["devices"] = w.devices;
  j["block"] = w.block;
  j["seq_len"] = w.seq_len();
  j["layout"] = to_string(w.layout);
  if (w.layout == Layout::Hybrid) {
    j["ulysses_degree"] = w.ulysses();
    j["ring_degree"] = w.ring_degree();
  }
  j["pass"] = to_string(w.pass);
  j["causal"] = w.causal;
  j["dtype"] = to_string(w.dtype);
  j["model"] = w.shape.name;
  j["heads"] = w.shape.heads;
  j["kv_heads"] = w.shape.kv_heads;
  j["head_dim"] = w.shape.head_dim;
  j["layers"] = w.layers;
  j["scope"] = w.scope == Scope::Layer ? "layer" : "attention";
  j["hardware"] = s.hardware;
  j["compute_s_per_step"] = s.compute_s_per_step;
  j["merge_s_per_step"] = s.merge_s_per_step;
  j["comm_s_per_step"] = s.comm_s_per_step;
  j["overlap"] = s.overlap ? "full" : "none";
  j["bytes_per_step"] = s.bytes_per_step;
  if (s.min_block > 0)
    j["min_block"] = s.min_block;
  else
    j["min_block"] = nullptr;  // no overlap in this layout, or never hides
  j["overlapped"] = s.overlapped;
  j["time_s"] = s.time_s;
  j["ideal_time_s"] = s.ideal_time_s;
  j["efficiency"] = s.efficiency;
  j["exposed_comm_s"] = s.exposed_comm_s;
  j["collective_s"] = s.collective_s;
  j["other_s"] = s.other_s;
  j["memory_bytes_per_device"] = s.memory_bytes_per_device;
  nlohmann::json mem = nlohmann::json::object();
  for (const auto& it : attention_memory(w).items) mem[it.name] = it.bytes;
  j["memory_breakdown"] = mem;
  j["engine"] = s.engine;
  j["compute_model"] = s.compute_model;
  return j;
}

std::string summary_text(const Summary& s) {
  const auto& w = s.workload;
  std::string out;
  auto row = [&](const std::string& k, const std::string& v) {
    out += fmt::format("  {:<26}{}\n", k, v);
  };
  out += fmt::format("ringsim: {} x {} tokens = {} ({} tokens), {} layout, {}, {}{}\n", w.devices,
                     w.block, human_tokens(static_cast<double>(w.seq_len())), w.seq_len(),
                     to_string(w.layout), to_string(w.pass), w.causal ? "causal" : "non-causal",
                     w.layout == Layout::Hybrid
                         ? fmt::format(" (ulysses {} x ring {})", w.ulysses(), w.ring_degree())
                         : "");
  row("model", fmt::format("{} ({} heads, {} KV heads, head dim {}), {}", w.shape.name,
                           w.shape.heads, w.shape.kv_heads, w.shape.head_dim, to_string(w.dtype)));
  row("hardware", s.hardware);
  row("engine / compute model", s.engine + " / " + s.compute_model);
  row("compute per step", human_seconds(s.compute_s_per_step) + " (busiest device, heaviest step)");
  row(w.layout == Layout::Ulysses || w.layout == Layout::Allgather ? "collectives"
                                                                   : "transfer per step",
      fmt::format("{} ({})", human_seconds(s.comm_s_per_step),
                  human_bytes(static_cast<double>(s.bytes_per_step))));
  if (s.merge_s_per_step > 0)
    row("merge per step", human_seconds(s.merge_s_per_step) + " (included above)");
  if (!s.overlap)
    row("transfer overlap", "none (--overlap none: each transfer follows its compute)");
  row("min block to hide comm", s.min_block > 0
                                    ? fmt::format("{} tokens", s.min_block)
                                    : (s.min_block < 0 ? "never hides"
                                       : !s.overlap    ? "n/a (--overlap none)"
                                                       : "n/a (no overlap in this layout)"));
  row("communication hidden", s.overlapped ? "yes" : "no");
  row("time", fmt::format("{}{}", human_seconds(s.time_s),
                          w.layers > 1 ? fmt::format(" ({} layers)", w.layers) : " (one layer)"));
  row("ideal time", human_seconds(s.ideal_time_s));
  row("efficiency", fmt::format("{:.1f}%", 100 * s.efficiency));
  row("exposed communication", human_seconds(s.exposed_comm_s));
  row("memory per device", human_bytes(static_cast<double>(s.memory_bytes_per_device)) +
                               " (attention buffers, one layer)");
  return out;
}

}  // namespace ringsim
