#include "mpi/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "models/core/parse.hpp"
#include "models/core/work.hpp"

namespace ringsim::mpi {

namespace {

constexpr int kPerStep = 4;  // start, end, compute, wait

}  // namespace

Timing gather_timing(const World& w, const std::vector<RankRun>& mine) {
  const auto steps = mine.empty() ? 0 : mine.front().steps.size();
  const std::size_t per_run = 2 + kPerStep * steps;
  std::vector<double> flat;
  for (const auto& r : mine) {
    flat.insert(flat.end(), {r.end, r.cpu_s});
    for (const auto& s : r.steps) flat.insert(flat.end(), {s.start, s.end, s.compute_s, s.wait_s});
  }
  std::vector<double> all(w.rank == 0 ? flat.size() * static_cast<std::size_t>(w.size) : 0);
  RS_MPI(MPI_Gather(flat.data(), static_cast<int>(flat.size()), MPI_DOUBLE, all.data(),
                    static_cast<int>(flat.size()), MPI_DOUBLE, 0, w.comm));
  Timing t;
  if (w.rank != 0) return t;
  t.runs.assign(mine.size(), std::vector<RankRun>(static_cast<std::size_t>(w.size)));
  for (int r = 0; r < w.size; ++r)
    for (std::size_t k = 0; k < mine.size(); ++k) {
      const double* p = &all[(static_cast<std::size_t>(r) * mine.size() + k) * per_run];
      auto& run = t.runs[k][static_cast<std::size_t>(r)];
      run.end = p[0];
      run.cpu_s = p[1];
      for (std::size_t s = 0; s < steps; ++s) {
        const double* q = p + 2 + kPerStep * s;
        run.steps.push_back({q[0], q[1], q[2], q[3]});
      }
    }
  for (const auto& ranks : t.runs) {
    double m = 0;
    for (const auto& r : ranks) m = std::max(m, r.end);
    t.makespans.push_back(m);
  }
  std::vector<int> order(t.makespans.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return t.makespans[a] < t.makespans[b]; });
  t.median = order.empty() ? 0 : order[(order.size() - 1) / 2];
  return t;
}

std::vector<std::string> gather_hosts(const World& w) {
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  RS_MPI(MPI_Get_processor_name(name, &len));
  return gather_strings(w, std::string(name, static_cast<std::size_t>(len)));
}

RingSummary summary_of(const RingOptions& o, int ranks, int hosts, const Timing& t) {
  const auto work = ring_workload(o, ranks);
  const auto n = num_steps(work);
  const auto kv = static_cast<std::uint64_t>(kv_block_elements(work));
  const auto kv_bytes = kv * static_cast<std::uint64_t>(element_bytes(o.dtype));
  const auto grad = kv * static_cast<std::uint64_t>(grad_bytes(o.dtype));
  RingSummary s;
  s.devices = ranks;
  s.hosts = hosts;
  s.block = o.block;
  s.seq_len = o.block * ranks;
  s.layout = to_string(o.layout);
  s.pass = to_string(o.pass);
  s.causal = o.causal;
  s.dtype = o.dtype;
  s.heads = o.heads;
  s.kv_heads = o.kv_heads;
  s.head_dim = o.head_dim;
  s.tile = o.tile;
  s.threads = o.threads;
  s.repeat = o.repeat;
  s.warmup = o.warmup;
  // Forward sends K and V per step; backward K, V, dK and dV.
  s.bytes_per_step = o.pass == Pass::Fwd ? 2 * kv_bytes : 2 * kv_bytes + 2 * grad;
  s.time_s = t.makespans.empty() ? 0.0 : t.makespans[static_cast<std::size_t>(t.median)];
  s.times_s = t.makespans;
  if (t.runs.empty()) return s;
  const auto& run = t.runs[static_cast<std::size_t>(t.median)];
  const auto count = run.front().steps.size();
  double prev_end = 0, compute_sum = 0, wait_sum = 0;
  for (std::size_t k = 0; k < count; ++k) {
    double end = 0, compute = 0, wait = 0;
    for (const auto& r : run) {
      end = std::max(end, r.steps[k].end);
      compute = std::max(compute, r.steps[k].compute_s);
      wait = std::max(wait, r.steps[k].wait_s);
    }
    const bool bwd =
        o.pass == Pass::Bwd || (o.pass == Pass::FwdBwd && k >= static_cast<std::size_t>(n));
    // The step ends when its slowest rank ends: the ring advances at that pace.
    s.steps.push_back(
        {bwd ? "bwd" : "fwd", static_cast<std::int64_t>(k) % n, end - prev_end, compute, wait});
    prev_end = end;
    compute_sum += compute;
    wait_sum += wait;
  }
  if (count == 0) return s;
  s.compute_s_per_step = compute_sum / static_cast<double>(count);
  s.wait_s_per_step = wait_sum / static_cast<double>(count);
  // Wall over CPU time of the run, the most disturbed rank's: 1 when every
  // rank had its core to itself (MPI's waits spin), more when other
  // processes took time slices.
  for (const auto& r : run)
    if (r.cpu_s > 0) s.contention = std::max(s.contention, r.end / r.cpu_s);
  s.step_s = s.time_s / static_cast<double>(count);
  return s;
}

}  // namespace ringsim::mpi
