#include "cli/nccl_import.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "models/analytic/collectives.hpp"
#include "models/core/atomic_file.hpp"
#include "models/core/errors.hpp"
#include "models/core/input_file.hpp"
#include "models/core/nccl_tests.hpp"
#include "models/core/parse.hpp"
#include "models/core/schema.hpp"
#include "proc/resolve.hpp"

namespace ringsim::cli {
namespace {

constexpr const char* kFlag = "--import-nccl-tests";
// nccl-tests' text output for a sweep of sizes is kilobytes; a log with NCCL
// INFO lines of a large job a few MiB.
constexpr std::uintmax_t kMaxBytes = 64u << 20;
// The largest message whose sendrecv time is read as a hop's latency.
constexpr double kLatencyBytes = 64 * 1024;

struct Imported {
  std::string file;
  NcclTestsRun run;
  MeasuredCurve curve;     // run.curve(file): the times and busbw every report reads
  bool inter = false;      // the tier: across nodes
  std::string link;        // the cluster's interconnect for that tier
  double nominal = 0;      // its datasheet bandwidth for the GPUs of one node, bytes/s
  double model_error = 0;  // worst |busbw(model with the overlay) / measured - 1|
};

// One --import-nccl-tests argument: FILE, or KIND=FILE naming the collective.
struct Arg {
  std::optional<MeasuredKind> kind;
  std::string path;
};
Arg split_arg(const std::string& arg) {
  if (const auto eq = arg.find('='); eq != std::string::npos)
    if (auto k = parse_measured_kind(arg.substr(0, eq))) return {k, arg.substr(eq + 1)};
  return {std::nullopt, arg};
}

// `hw`: the cluster as the catalog resolves it (its links and NICs).
Imported read_one(const Arg& a, const std::string& text, const std::string& cluster,
                  const Hardware& hw, const Catalog& cat) {
  Imported m;
  m.file = a.path;
  const auto kind = a.kind ? a.kind : nccl_tests_kind(text, m.file);
  if (!kind)
    throw InputError(
        fmt::format("{} {}: cannot tell which nccl-tests binary wrote it; name it "
                    "as KIND={} with KIND one of {}",
                    kFlag, m.file, m.file, join(measured_kind_names(), ", ")));
  m.run = parse_nccl_tests(text, fmt::format("{} {}", kFlag, m.file), *kind);
  m.curve = m.run.curve(m.file);
  m.inter = m.run.nodes > 1;
  const int per_node = m.run.ranks / m.run.nodes;
  if (m.run.ranks % m.run.nodes != 0 || per_node > hw.gpus_per_node)
    throw InputError(fmt::format(
        "{} {}: {} GPUs on {} host(s); cluster '{}' has {} GPUs per node (a file from another "
        "cluster?)",
        kFlag, m.file, m.run.ranks, m.run.nodes, cluster, hw.gpus_per_node));
  m.link = m.inter ? hw.inter_name : hw.intra_name;
  const double bw = cat.interconnect(m.link).bandwidth;
  // Across nodes a node's egress is its GPUs' NICs (collective_link's rule),
  // the unit nccl-tests' busbw fills; point-to-point, one GPU's share of its NIC.
  const double per_nic = hw.gpus_per_nic();
  m.nominal = !m.inter                          ? bw
              : *kind == MeasuredKind::SendRecv ? bw / per_nic
                                                : bw * per_node / per_nic;
  return m;
}

}  // namespace

namespace {

nlohmann::json curve_json(const Imported& m) {
  const auto& r = m.run;
  nlohmann::json pts = nlohmann::json::array();
  for (std::size_t i = 0; i < r.rows.size(); ++i)
    pts.push_back({r.rows[i].bytes, r.rows[i].time_us, std::round(m.curve.busbw(i) / 1e7) / 100});
  return {{"collective", to_string(r.kind)},
          {"ranks", r.ranks},
          {"nodes", r.nodes},
          {"gpu", r.gpu},
          {"source", fmt::format("nccl-tests {}_perf output {} ({} x {} on {} host(s))",
                                 to_string(r.kind), m.file, r.ranks, r.gpu, r.nodes)},
          {"columns", {"bytes", "time_us", "busbw_GBps"}},
          {"points", pts}};
}

double largest_busbw(const Imported& m) {
  return m.curve.busbw(m.curve.points.size() - 1);
}

// One tier's patch: the curves, and the catalog's scalar fields refitted
// from them so that what does not read curves (the ring step's transfer,
// SimGrid's links) sees the same fabric.
nlohmann::json tier_patch(const std::string& link, const std::vector<const Imported*>& ms) {
  nlohmann::json p{{"name", link}, {"patch", true}, {"measured", nlohmann::json::array()}};
  const Imported* coll = nullptr;
  for (const auto* m : ms) {
    p["measured"].push_back(curve_json(*m));
    const auto k = m->run.kind;
    if (k == MeasuredKind::AllReduce ||
        (!coll && (k == MeasuredKind::ReduceScatter || k == MeasuredKind::AllGather)))
      coll = m;
    if (k == MeasuredKind::SendRecv) {
      const double bw = largest_busbw(*m);
      p["p2p_efficiency"] = std::clamp(bw / m->nominal, 0.01, 1.0);
      p["p2p_efficiency_source"] = fmt::format(
          "measured: nccl-tests sendrecv_perf {}: {:.2f} GB/s at {:.0f} bytes of {:.1f} GB/s "
          "nominal (capped at 1)",
          m->file, bw / 1e9, m->run.rows.back().bytes, m->nominal / 1e9);
      // A hop's latency only from a small message: at 1 MiB the time is
      // mostly bandwidth (and protocol), not latency.
      const auto& small = m->run.rows.front();
      if (small.bytes <= kLatencyBytes) {
        p["latency"] = std::max(0.0, small.time_us * 1e-6 - small.bytes / bw);
        p["latency_source"] = fmt::format(
            "measured: nccl-tests sendrecv_perf {}: {:.2f} us at {:.0f} bytes (the smallest "
            "size) less those bytes at {:.2f} GB/s",
            m->file, small.time_us, small.bytes, bw / 1e9);
        p["latency_range"] = nullptr;  // a measured value, not an assumption with a range
        p["latency_range_source"] = nullptr;
      }
    }
  }
  if (coll) {
    const double bw = largest_busbw(*coll);
    p["collective_efficiency"] = std::clamp(bw / coll->nominal, 0.01, 1.0);
    p["collective_efficiency_source"] = fmt::format(
        "measured: nccl-tests {}_perf {}: busbw {:.2f} GB/s at {:.0f} bytes over {} GPUs on {} "
        "host(s), of {:.1f} GB/s nominal (capped at 1)",
        to_string(coll->run.kind), coll->file, bw / 1e9, coll->run.rows.back().bytes,
        coll->run.ranks, coll->run.nodes, coll->nominal / 1e9);
  }
  return p;
}

nlohmann::json overlay(const std::vector<Imported>& all) {
  std::vector<std::string> links;
  for (const auto& m : all)
    if (std::find(links.begin(), links.end(), m.link) == links.end()) links.push_back(m.link);
  nlohmann::json o{{"interconnects", nlohmann::json::array()}};
  for (const auto& link : links) {
    std::vector<const Imported*> ms;
    for (const auto& m : all)
      if (m.link == link) ms.push_back(&m);
    o["interconnects"].push_back(tier_patch(link, ms));
  }
  return o;
}

std::optional<Collective> model_collective(MeasuredKind k) {
  if (k == MeasuredKind::AllReduce) return Collective::AllReduce;
  if (k == MeasuredKind::AllGather) return Collective::AllGather;
  if (k == MeasuredKind::ReduceScatter) return Collective::ReduceScatter;
  return std::nullopt;
}

// Each measured size through the model as every command runs it (the
// catalog with the overlay, the cluster resolved): its worst busbw error.
void replay(std::vector<Imported>& all, const Hardware& hw) {
  for (auto& m : all) {
    const auto& r = m.run;
    const double f = bus_factor(r.kind, r.ranks);
    const CollectiveGroup g{r.ranks, r.ranks / r.nodes};
    for (std::size_t i = 0; i < r.rows.size(); ++i) {
      const auto& row = r.rows[i];
      double t = 0;
      if (const auto c = model_collective(r.kind)) {
        t = collective_time(*c, row.bytes, g, hw).seconds;
      } else if (r.kind == MeasuredKind::SendRecv) {
        // The ring step's transfer: one hop's latency plus the bytes at the
        // point-to-point rate (what run, minblock and plan charge).
        t = (m.inter ? hw.inter_lat : hw.intra_lat) +
            row.bytes / (m.inter ? hw.inter_bw : hw.intra_bw);
      } else {
        m.model_error = -1;  // all-to-all: stored, not read by the model yet
        break;
      }
      m.model_error = std::max(m.model_error, std::abs(f * row.bytes / t / m.curve.busbw(i) - 1));
    }
  }
}

}  // namespace

namespace {

void print_text(const std::vector<Imported>& all, const std::string& cluster,
                const std::string& out) {
  std::cout << fmt::format("nccl-tests imported for cluster '{}' -> {} (--catalog {})\n", cluster,
                           out, out);
  for (const auto& m : all) {
    const auto& r = m.run;
    std::cout << fmt::format("  {}: {} over {} x {} on {} host(s) -> {} ({}), {} sizes {} .. {}\n",
                             m.file, to_string(r.kind), r.ranks, r.gpu, r.nodes, m.link,
                             m.inter ? "across nodes" : "in a node", r.rows.size(),
                             human_bytes(r.rows.front().bytes), human_bytes(r.rows.back().bytes));
    std::cout << fmt::format(
        "      busbw {:.2f} GB/s at the largest size ({:.0f}% of {:.1f} GB/s nominal); "
        "{:.2f} us at the smallest\n",
        largest_busbw(m) / 1e9, 100 * largest_busbw(m) / m.nominal, m.nominal / 1e9,
        r.rows.front().time_us);
    if (m.model_error < 0)
      std::cout << "      stored; the all-to-all model (Ulysses) does not read measured curves "
                   "yet\n";
    else if (r.kind == MeasuredKind::SendRecv)
      std::cout << fmt::format(
          "      ring step model (latency + bytes at the fitted rate): worst "
          "point {:.1f}% off\n",
          100 * m.model_error);
    else
      std::cout << fmt::format(
          "      the collectives model with the overlay reproduces every "
          "size within {:.2f}%\n",
          100 * m.model_error);
  }
}

nlohmann::json report_json(const std::vector<Imported>& all, const std::string& cluster,
                           const std::string& out) {
  nlohmann::json j{{"schema_version", kJsonSchemaVersion}, {"cluster", cluster}, {"out", out}};
  j["files"] = nlohmann::json::array();
  for (const auto& m : all)
    j["files"].push_back({{"file", m.file},
                          {"collective", to_string(m.run.kind)},
                          {"ranks", m.run.ranks},
                          {"nodes", m.run.nodes},
                          {"gpu", m.run.gpu},
                          {"interconnect", m.link},
                          {"tier", m.inter ? "inter" : "intra"},
                          {"sizes", m.run.rows.size()},
                          {"busbw_largest", largest_busbw(m)},
                          {"nominal_bandwidth", m.nominal},
                          {"floor_s", m.run.rows.front().time_us * 1e-6},
                          // null: all-to-all, not read by the model yet
                          {"model_max_error", m.model_error < 0 ? nlohmann::json(nullptr)
                                                                : nlohmann::json(m.model_error)}});
  return j;
}

}  // namespace

int import_nccl_tests(const NcclImportFlags& f, const Catalog& cat) {
  // The inputs first: a wrong path is named before a missing flag.
  std::vector<Arg> args;
  std::vector<std::string> texts;
  for (const auto& arg : f.files) {
    args.push_back(split_arg(arg));
    texts.push_back(read_input_file(kFlag, args.back().path, kMaxBytes));
  }
  if (f.cluster.empty())
    throw InputError(std::string(kFlag) +
                     ": needs --cluster NAME (whose interconnects the "
                     "measurements replace; `ringsim hardware` lists them)");
  if (f.out.empty()) throw InputError(std::string(kFlag) + ": needs --out FILE (the overlay)");
  // The overlay may not replace a log it imports.
  std::vector<PathArg> ins;
  for (const auto& a : args) ins.push_back({kFlag, a.path});
  if (!f.catalog.empty()) ins.push_back({"--catalog", f.catalog});
  check_outputs({{"--out", f.out}}, ins);
  (void)cat.cluster(f.cluster);  // an unknown name: one line with did-you-mean
  proc::HardwareSpec h;
  h.cluster = f.cluster;
  const auto plain = proc::resolve_hardware(h, cat, DType::BF16);
  std::vector<Imported> all;
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto m = read_one(args[i], texts[i], f.cluster, plain, cat);
    for (const auto& o : all)
      if (o.link == m.link && o.run.kind == m.run.kind)
        throw InputError(
            fmt::format("{}: {} and {} both time {} on {} (one file per collective "
                        "and tier)",
                        kFlag, o.file, m.file, to_string(m.run.kind), m.link));
    all.push_back(std::move(m));
  }
  const auto text = overlay(all).dump(2) + "\n";
  Catalog merged = cat;
  // A bad overlay is the logs' doing, not the file it is about to be written to.
  std::vector<std::string> logs;
  for (const auto& a : args) logs.push_back(a.path);
  merged.merge_json_text(
      text, fmt::format("{} {} (the overlay built from them)", kFlag, join(logs, ", ")));
  replay(all, proc::resolve_hardware(h, merged, DType::BF16));
  AtomicFile file(f.out, "--out");
  file.write(text);
  file.commit();
  if (f.json)
    std::cout << report_json(all, f.cluster, f.out).dump(2) << "\n";
  else
    print_text(all, f.cluster, f.out);
  return 0;
}

}  // namespace ringsim::cli
