#include "sim/guard.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "models/analytic/tp_collectives.hpp"
#include "models/core/errors.hpp"
#include "models/core/parse.hpp"
#include "models/core/work.hpp"
#include "sim/simulate.hpp"

namespace ringsim::sim {

namespace {

// Resident cost per object, measured with /usr/bin/time on SimGrid 3.32
// (docs/sim.md, "Size guard"): a host with its actor (small stack, mostly
// untouched), a full-duplex link (two link objects and their constraints), a
// mailbox, and what the process needs before the first host.
constexpr double kBaseBytes = 48.0 * (1 << 20);
constexpr double kPerDevice = 40.0 * 1024;
constexpr double kPerLink = 2.0 * 1024;
constexpr double kPerMailbox = 512;
// Bytes of output per recorded event / row (the formats' typical line length).
constexpr double kTraceLine = 240;
constexpr double kCsvLine = 130;

std::uint64_t clamp_u64(double x) {
  return x >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(std::max(0.0, x));
}

double link_count(const TopologyOptions& t) {
  const double n = static_cast<double>(t.devices);
  switch (t.platform) {
    case Platform::Flat:
      return n;
    case Platform::Torus2D:
      return 2 * n;
    case Platform::Torus3D:
      return 3 * n;
    case Platform::Nodes:
    case Platform::FatTree: {
      const double leaves =
          std::ceil(n / t.leaf_ports) + (t.platform == Platform::Nodes ? t.gpus_per_node : 0);
      return 2 * n + leaves * t.leaf_ports;
    }
  }
  return n;
}

// What a collective's transfer costs SimGrid, in ring transfers (one link):
// a route is one constraint per link, so the cost grows with the links it
// crosses. Ring neighbours are one link apart on every platform (the ring is
// laid along the flat ring and snaked through a torus); an all-to-all over `u`
// consecutive devices reaches peers 1 .. u-1 away, which on a flat ring of n is
// min(r, n - r) links and on a torus about the sum of the dimensions' average
// distances; a switched fabric is a few hops whatever the peer (counted as
// one, as its measured cost was). Measured here (SimGrid 3.32, same activity
// count): a 256-device Ulysses run on a flat ring (64 links per transfer on
// average) took 3.5x the ring's time, 1024 devices (256 links) 10x; both fit
// 1 + (links - 1) / 26.
constexpr double kLinksPerTransfer = 26;
double a2a_links(const TopologyOptions& t, double u) {
  if (u <= 1) return 1;
  const double n = static_cast<double>(t.devices);
  switch (t.platform) {
    case Platform::Flat: {
      double sum = 0;
      for (double r = 1; r < u; ++r) sum += std::min(r, n - r);
      return sum / (u - 1);
    }
    case Platform::Torus2D:
    case Platform::Torus3D: {
      const int rank = t.platform == Platform::Torus2D ? 2 : 3;
      const double side = std::pow(std::min(u, n), 1.0 / rank);
      return std::max(1.0, rank * side / 4);
    }
    default:
      return 1;
  }
}

}  // namespace

SizeEstimate estimate_size(const Workload& w, const TopologyOptions& t, bool trace, bool csv) {
  // Actors are the simulated devices (a symmetric run simulates one period);
  // the schedule's steps and rounds come from the whole workload.
  const double n = static_cast<double>(w.devices), steps = static_cast<double>(num_steps(w));
  const double actors = static_cast<double>(t.devices);
  // --tp: each device's group adds tp - 1 hosts with an actor and a port each
  // (and a port for the device); per pass of --scope layer, 4 ring collectives
  // (2 on a MoE layer: tp_ring_collectives_per_pass) of tp - 1 rounds in
  // which every GPU sends (events: the device's rounds).
  const double tp = std::max(t.tp, 1);
  const double tp_rounds =
      w.tp > 1 && w.scope == Scope::Layer ? tp_ring_collectives_per_pass(w) * (tp - 1) : 0;
  // A MoE layer's dispatch and combine: one timed event per pass.
  const bool dispatch = is_moe(w.shape) && w.scope == Scope::Layer && (w.ep > 1 || w.tp > 1);
  const double u = static_cast<double>(w.ulysses());
  const double layers = w.layers;
  double per_layer = 0, events = 0, rows = 0;  // per device and layer
  for (int pass = 0; pass < 2; ++pass) {
    if ((pass == 0 && w.pass == Pass::Bwd) || (pass == 1 && w.pass == Pass::Fwd)) continue;
    double acts = 2 * steps, ev = 4 * steps;  // exec + transfer; partial, send, recv, wait
    if (w.layout == Layout::Ulysses || w.layout == Layout::Hybrid)
      acts += 2 * (u - 1) * (1 + (a2a_links(t, u) - 1) / kLinksPerTransfer), ev += 2 * (u - 1);
    if (w.layout == Layout::Allgather)
      acts += (pass ? 2 : 1) * (n - 1), ev += (pass ? 2 : 1) * (n - 1);
    if (w.scope == Scope::Layer) acts += 1, ev += 1;
    if (dispatch) acts += 1, ev += 1;
    acts += tp_rounds * tp, ev += tp_rounds;
    per_layer += acts;
    events += ev;
    rows += steps;
  }
  SizeEstimate e;
  e.activities = clamp_u64(actors * layers * per_layer);
  const double tp_peers = actors * (tp - 1), tp_ports = tp > 1 ? actors * tp : 0;
  double mem = kBaseBytes + actors * kPerDevice + link_count(t) * kPerLink +
               actors * (2 + 2 * (u - 1)) * kPerMailbox +
               tp_peers * (kPerDevice + 2 * kPerMailbox) + tp_ports * kPerLink;
  mem += layers * 2 * steps * 9;  // per-step statistics
  if (trace) {
    mem += actors * layers * events * sizeof(Event);
    e.trace_bytes = clamp_u64(actors * layers * events * kTraceLine);
  }
  if (csv) {
    mem += actors * layers * rows * sizeof(StepRow);
    e.csv_bytes = clamp_u64(actors * layers * rows * kCsvLine);
  }
  e.memory_bytes = clamp_u64(mem);
  return e;
}

SizeEstimate estimate_recurrence_size(const Workload& w, const TopologyOptions& t, bool trace,
                                      bool csv) {
  auto e = estimate_size(w, t, trace, csv);
  // A host without its actor's stack and context (measured: 1024 devices,
  // 58 MB peak), and no mailboxes.
  constexpr double kPerHost = 4.0 * 1024;
  const double hosts = static_cast<double>(t.devices) * std::max(t.tp, 1);
  const double saved =
      hosts * (kPerDevice - kPerHost) + static_cast<double>(t.devices) * 2 * kPerMailbox;
  // The recorder keeps every wait of every device for the verdict (16 bytes
  // each; at most one per device-step): at 4096 devices most of the 216 MiB
  // measured, and past 10K devices gigabytes, so it is counted here.
  const double device_steps = static_cast<double>(w.devices) * static_cast<double>(num_steps(w)) *
                              w.layers * (w.pass == Pass::FwdBwd ? 2 : 1);
  e.memory_bytes = clamp_u64(static_cast<double>(e.memory_bytes) - saved + 16 * device_steps);
  e.activities = clamp_u64(static_cast<double>(e.activities) / kRecurrencePerActivity);
  return e;
}

void add_job_size(SizeEstimate& e, const Workload& w, const TopologyOptions& t, bool fsdp) {
  const double n = static_cast<double>(t.devices);
  // Per layer, FSDP's ring collectives, each kFsdpStages stages of one flow
  // and one timed wait per rank: an all-gather forward, an all-gather and a
  // reduce-scatter backward; each device an actor and two mailboxes more.
  const double collectives = (w.pass != Pass::Bwd ? 1 : 0) + (w.pass != Pass::Fwd ? 2 : 0);
  if (fsdp) {
    e.activities = clamp_u64(static_cast<double>(e.activities) +
                             n * 2 * static_cast<double>(kFsdpStages) * collectives *
                                 static_cast<double>(w.layers));
    e.memory_bytes =
        clamp_u64(static_cast<double>(e.memory_bytes) + n * (kPerDevice + 2 * kPerMailbox));
  }
  // The link meter: both directions of every link, a few hundred bins each.
  e.memory_bytes =
      clamp_u64(static_cast<double>(e.memory_bytes) + link_count(t) * 2 * 512 * sizeof(double));
}

Budget default_budget() {
  Budget b;
  b.max_activities = std::uint64_t{1} << 29;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const double phys = pages > 0 && page > 0 ? static_cast<double>(pages) * page : 4.0 * (1 << 30);
  b.max_memory_bytes = clamp_u64(0.8 * phys);
  return b;
}

Budget budget_from_flags(const std::string& max_activities, const std::string& max_memory) {
  auto b = default_budget();
  if (!max_activities.empty())
    b.max_activities = static_cast<std::uint64_t>(
        parse_count("--max-activities", max_activities, 1, std::int64_t{1} << 50));
  if (!max_memory.empty())
    b.max_memory_bytes = static_cast<std::uint64_t>(
        parse_count("--max-memory", max_memory, 1 << 20, std::int64_t{1} << 50));
  return b;
}

void check_budget(const SizeEstimate& e, const Budget& b) {
  if (e.activities <= b.max_activities && e.memory_bytes <= b.max_memory_bytes) return;
  const bool acts = e.activities > b.max_activities;
  throw InputError(fmt::format(
      "{}: this simulation needs about {:.3g} activities and {} of memory{} (budget {:.3g} "
      "activities, "
      "{}); use --engine analytic (closed forms, instant){}, or raise {}",
      acts ? "--max-activities" : "--max-memory", static_cast<double>(e.activities),
      human_bytes(static_cast<double>(e.memory_bytes)),
      e.trace_bytes
          ? fmt::format(" with a {} trace", human_bytes(static_cast<double>(e.trace_bytes)))
          : "",
      static_cast<double>(b.max_activities), human_bytes(static_cast<double>(b.max_memory_bytes)),
      e.trace_bytes || e.csv_bytes ? ", drop --trace/--csv" : "",
      acts ? "--max-activities" : "--max-memory"));
}

}  // namespace ringsim::sim
