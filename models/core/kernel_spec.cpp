#include "models/core/kernel_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "models/core/json_reader.hpp"
#include "models/core/parse.hpp"

namespace ringsim {

using nlohmann::json;

namespace {

std::string one_of(const JsonReader& r, const char* key, const std::set<std::string>& allowed) {
  const auto v = r.str(key);
  if (!allowed.count(v))
    throw r.error(fmt::format("'{}' must be one of: {}; got \"{}\"", key,
                              join({allowed.begin(), allowed.end()}, ", "), v));
  return v;
}

// An optional {"<key>": one of `allowed`, "source": ...} object named
// `name`: its choice and source; absent, the first of `allowed` and `absent`.
std::pair<std::string, std::string> optional_choice(const JsonReader& r, const char* name,
                                                    const char* key,
                                                    const std::vector<std::string>& allowed,
                                                    const std::string& absent) {
  if (!r.has(name)) return {allowed.front(), absent};
  const JsonReader o{r.origin, r.where + " " + name, r.object(name)};
  return {one_of(o, key, {allowed.begin(), allowed.end()}), o.str("source")};
}

std::vector<double> numbers(const JsonReader& r, const json& a, const std::string& key, double lo,
                            double hi) {
  if (!a.is_array() || a.empty()) throw r.error(fmt::format("'{}' must be a non-empty array", key));
  std::vector<double> v;
  for (const auto& x : a) v.push_back(r.number(x, key, lo, hi));
  return v;
}

// Counts (tile sizes, sequence lengths): a fraction is a broken file, not something to round.
std::vector<double> counts(const JsonReader& r, const json& a, const std::string& key, double lo,
                           double hi) {
  auto v = numbers(r, a, key, lo, hi);
  for (double x : v)
    if (x != std::floor(x)) throw r.error(fmt::format("'{}' must hold integers, got {:g}", key, x));
  return v;
}

TileSize tile(const JsonReader& r, const json& a, const std::string& key) {
  const auto v = counts(r, a, key, 1, 1 << 20);
  if (v.size() != 2) throw r.error(fmt::format("'{}' must be [query rows, key columns]", key));
  return {static_cast<std::int64_t>(v[0]), static_cast<std::int64_t>(v[1])};
}

ChunkScanTarget chunk_target(const JsonReader& r) {
  ChunkScanTarget t;
  t.precision = r.str("precision");
  t.matmul_peak_fraction = r.num("matmul_peak_fraction", 1e-3, 1);
  t.score_bytes_fwd = r.num("score_bytes_fwd", 0, 1e3);
  t.score_bytes_bwd = r.num("score_bytes_bwd", 0, 1e3);
  t.chunk_iteration_s = r.num("chunk_iteration_s", 0, 1);
  t.query_iteration_s = r.num("query_iteration_s", 0, 1);
  t.step_s = r.num("step_s", 0, 1);
  t.k_bytes = static_cast<int>(r.integer("k_bytes", 0, 8));
  t.source = r.str("source");
  return t;
}

ChunkScanSpec chunk_scan(const std::string& origin, const JsonReader& r) {
  const JsonReader cr{origin, r.where + " chunk_scan", r.object("chunk_scan")};
  ChunkScanSpec c;
  c.query_chunk = cr.integer("query_chunk", 1, 1 << 24);
  c.key_chunk = cr.integer("key_chunk", 1, 1 << 24);
  c.chunks_source = cr.str("chunks_source");
  for (const auto& [kind, t] : cr.object("targets").items()) {
    if (kind != "gpu" && kind != "tpu")
      throw cr.error(fmt::format("targets: '{}' is not a device kind (gpu, tpu)", kind));
    c.targets[kind] = chunk_target(JsonReader{origin, cr.where + " targets." + kind, t});
  }
  if (c.targets.empty()) throw cr.error("'targets' needs gpu or tpu");
  return c;
}

}  // namespace

KernelSpec parse_kernel_spec(const json& e, const std::string& origin, std::size_t index) {
  JsonReader r{origin, fmt::format("kernels[{}]", index), e};
  KernelSpec k;
  k.name = r.str("name");
  r.where = "kernel '" + k.name + "'";
  k.display = r.str_or("display", k.name);
  k.source = r.str("source");
  if (r.has("dtypes"))
    for (const auto& d : r.array("dtypes")) {
      if (!d.is_string()) throw r.error("'dtypes' must be an array of strings");
      parse_dtype(origin + ": " + r.where + " dtypes", d.get<std::string>());
      k.dtypes.push_back(d.get<std::string>());
    }
  k.rates = one_of(r, "rates", {"curves", "profile", "roofline", "chunk_scan"});
  k.profile = r.str_or("profile", "");
  k.curves_from_kernel = r.str_or("curves_from_kernel", "");
  if (r.has("curves_from_device")) {
    for (const auto& [dev, from] : r.object("curves_from_device").items()) {
      if (!from.is_string()) throw r.error("'curves_from_device' values must be device names");
      k.curves_from_device[dev] = from.get<std::string>();
    }
    k.curves_from_device_source = r.str("curves_from_device_source");
  }
  std::vector<double> lengths;
  if (r.has("lengths")) lengths = counts(r, r.at("lengths"), "lengths", 1, 1e12);
  if (r.has("curves")) {
    std::size_t i = 0;
    for (const auto& c : r.array("curves")) {
      JsonReader cr{origin, fmt::format("{} curves[{}]", r.where, i++), c};
      KernelCurve kc;
      kc.device = cr.str("device");
      kc.pass = one_of(cr, "pass", {"fwd", "bwd", "fwdbwd"});
      kc.mask =
          one_of(cr, "mask", {"full", "causal"}) == "full" ? CallMask::Full : CallMask::Causal;
      kc.head_dim = static_cast<int>(cr.integer("head_dim", 1, 4096));
      kc.lengths = cr.has("lengths") ? counts(cr, cr.at("lengths"), "lengths", 1, 1e12) : lengths;
      if (kc.lengths.empty()) throw cr.error("needs 'lengths' (here or on the kernel)");
      kc.tflops = numbers(cr, cr.at("tflops"), "tflops", 1e-6, 1e6);
      if (kc.tflops.size() != kc.lengths.size())
        throw cr.error(fmt::format("'tflops' has {} values for {} lengths", kc.tflops.size(),
                                   kc.lengths.size()));
      if (!std::is_sorted(kc.lengths.begin(), kc.lengths.end()) ||
          std::adjacent_find(kc.lengths.begin(), kc.lengths.end()) != kc.lengths.end())
        throw cr.error("'lengths' must be strictly ascending");
      kc.source = cr.str("source");
      kc.reading = cr.str("reading");
      k.curves.push_back(std::move(kc));
    }
  }
  if (r.has("tiles")) {
    std::size_t i = 0;
    for (const auto& t : r.array("tiles")) {
      JsonReader tr{origin, fmt::format("{} tiles[{}]", r.where, i++), t};
      KernelTiles kt;
      kt.pass = one_of(tr, "pass", {"fwd", "bwd"});
      kt.head_dim = static_cast<int>(tr.integer("head_dim", 0, 4096));
      kt.full = tile(tr, tr.at("full"), "full");
      kt.causal = tile(tr, tr.at("causal"), "causal");
      k.tiles.push_back(kt);
    }
    k.tiles_source = r.str("tiles_source");
  }
  k.rate_scale = r.has("rate_scale") ? r.num("rate_scale", 1e-3, 1e3) : 1.0;
  const JsonReader kp{origin, r.where + " kernels_per_call", r.object("kernels_per_call")};
  k.kernels_fwd = static_cast<int>(kp.integer("fwd", 0, 1000));
  k.kernels_bwd = static_cast<int>(kp.integer("bwd", 0, 1000));
  k.kernels_source = r.str("kernels_source");
  k.launch_s = r.num("launch_s", 0, 1);
  k.launch_source = r.str("launch_source");
  k.comm_library = r.str("comm_library");
  k.grad_bytes = static_cast<int>(r.integer("grad_bytes", 1, 8));
  k.grad_bytes_source = r.str("grad_bytes_source");
  std::size_t i = 0;
  for (const auto& o : r.array("ops")) {
    JsonReader orr{origin, fmt::format("{} ops[{}]", r.where, i++), o};
    StepOp op;
    op.name = orr.str("name");
    op.pass = one_of(orr, "pass", {"fwd", "bwd", "both"});
    op.when = one_of(
        orr, "when",
        {"first", "after_first", "step", "every_step", "partial", "send", "final", "deferred"});
    op.per =
        one_of(orr, "per",
               {"call_q_elems", "call_q_rows", "call_kv_elems", "block_kv_elems",
                "block_kv_elems_per_query_chunk", "all_q_elems", "all_qkv_elems", "sent_kv_elems"});
    op.bytes = orr.num("bytes", 0, 1e6);
    op.kernels = static_cast<int>(orr.integer("kernels", 0, 1000));
    op.source = orr.str("source");
    k.ops.push_back(std::move(op));
  }
  k.merge = r.str("merge");
  // Optional for catalogs written before them: the data pipeline, as every
  // built-in implementation permutes; the grouped K/V every attention kernel
  // takes; the scores on chip, as a fused kernel keeps them.
  std::tie(k.permutation, k.permutation_source) = optional_choice(
      r, "permutation", "where", {"pipeline", "layer"}, "not given: the data pipeline");
  std::tie(k.ring_kv, k.ring_kv_source) =
      optional_choice(r, "ring_kv", "heads", {"grouped", "expanded"},
                      "not given: the grouped K/V the kernel takes");
  std::tie(k.scores, k.scores_source) = optional_choice(
      r, "scores", "where", {"on_chip", "hbm"}, "not given: on chip, as a fused kernel keeps them");
  if (k.rates == "chunk_scan") k.chunk_scan = chunk_scan(origin, r);
  if (k.rates == "curves" && k.curves.empty() && k.curves_from_kernel.empty() && !r.has("curves"))
    throw r.error("rates \"curves\" needs 'curves' (may be empty) or 'curves_from_kernel'");
  return k;
}

CommLibrary parse_comm_library(const json& e, const std::string& origin, std::size_t index) {
  JsonReader r{origin, fmt::format("comm_libraries[{}]", index), e};
  CommLibrary c;
  c.name = r.str("name");
  r.where = "comm library '" + c.name + "'";
  c.display = r.str_or("display", c.name);
  c.source = r.str("source");
  static const std::set<std::string> kinds{"nvlink", "network", "pcie", "xgmi", "ici"};
  for (const auto& [kind, v] : r.object("ctas").items()) {
    if (!kinds.count(kind))
      throw r.error(fmt::format("'ctas' keys must be link kinds ({}); got \"{}\"",
                                join({kinds.begin(), kinds.end()}, ", "), kind));
    const double n = r.number(v, "ctas." + kind, 0, 100000);
    if (n != std::floor(n))
      throw r.error(fmt::format("'ctas.{}' must be an integer, got {:g}", kind, n));
    c.ctas[kind] = static_cast<int>(n);
  }
  return c;
}

}  // namespace ringsim
