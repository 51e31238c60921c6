#include "mpi/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "models/parse.hpp"
#include "models/work.hpp"

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

nlohmann::json summary_json(const RingOptions& o, int ranks, int hosts, const Timing& t) {
  const auto work = ring_workload(o, ranks);
  const auto n = num_steps(work);
  const auto kv = static_cast<std::uint64_t>(kv_block_elements(work));
  const auto kv_bytes = kv * static_cast<std::uint64_t>(element_bytes(o.dtype));
  const auto grad = kv * static_cast<std::uint64_t>(grad_bytes(o.dtype));
  nlohmann::json j;
  j["engine"] = "mpi";
  j["devices"] = ranks;
  j["hosts"] = hosts;
  j["block"] = o.block;
  j["seq_len"] = o.block * ranks;
  j["layout"] = to_string(o.layout);
  j["pass"] = to_string(o.pass);
  j["causal"] = o.causal;
  j["dtype"] = o.dtype;
  j["heads"] = o.heads;
  j["kv_heads"] = o.kv_heads;
  j["head_dim"] = o.head_dim;
  j["tile"] = o.tile;
  j["repeat"] = o.repeat;
  j["warmup"] = o.warmup;
  // Forward sends K and V per step; backward K, V, dK and dV.
  j["bytes_per_step"] = o.pass == Pass::Fwd ? 2 * kv_bytes : 2 * kv_bytes + 2 * grad;
  j["time_s"] = t.makespans.empty() ? 0.0 : t.makespans[static_cast<std::size_t>(t.median)];
  j["times_s"] = t.makespans;

  nlohmann::json steps = nlohmann::json::array();
  double compute_sum = 0, wait_sum = 0;
  if (!t.runs.empty()) {
    const auto& run = t.runs[static_cast<std::size_t>(t.median)];
    const auto count = run.front().steps.size();
    double prev_end = 0;
    for (std::size_t s = 0; s < count; ++s) {
      double end = 0, compute = 0, wait = 0;
      for (const auto& r : run) {
        end = std::max(end, r.steps[s].end);
        compute = std::max(compute, r.steps[s].compute_s);
        wait = std::max(wait, r.steps[s].wait_s);
      }
      const bool bwd =
          o.pass == Pass::Bwd || (o.pass == Pass::FwdBwd && s >= static_cast<std::size_t>(n));
      // The step ends when its slowest rank ends: the ring advances at that pace.
      steps.push_back({{"pass", bwd ? "bwd" : "fwd"},
                       {"step", static_cast<std::int64_t>(s) % n},
                       {"time_s", end - prev_end},
                       {"compute_s", compute},
                       {"wait_s", wait}});
      prev_end = end;
      compute_sum += compute;
      wait_sum += wait;
    }
    j["compute_s_per_step"] = count ? compute_sum / static_cast<double>(count) : 0.0;
    j["wait_s_per_step"] = count ? wait_sum / static_cast<double>(count) : 0.0;
    // Wall over CPU time of the run, the most disturbed rank's: 1 when every
    // rank had its core to itself (MPI's waits spin), more when other
    // processes took time slices.
    double contention = 1;
    for (const auto& r : run)
      if (r.cpu_s > 0) contention = std::max(contention, r.end / r.cpu_s);
    j["contention"] = contention;
    j["step_s"] = count ? j["time_s"].get<double>() / static_cast<double>(count) : 0.0;
  }
  j["steps"] = steps;
  return j;
}

std::string summary_text(const nlohmann::json& s) {
  std::string out = fmt::format(
      "ringsim-mpi: {} ranks on {} host(s), {} layout, {}, {}, block {} (sequence {}), heads {}/{} "
      "kv, head dim {}, {}\n",
      s["devices"].get<int>(), s["hosts"].get<int>(), s["layout"].get<std::string>(),
      s["causal"].get<bool>() ? "causal" : "full", s["pass"].get<std::string>(),
      s["block"].get<std::int64_t>(), s["seq_len"].get<std::int64_t>(), s["heads"].get<int>(),
      s["kv_heads"].get<int>(), s["head_dim"].get<int>(), s["dtype"].get<std::string>());
  out +=
      fmt::format("{:>5} {:>5} {:>12} {:>12} {:>12}\n", "pass", "step", "time", "compute", "wait");
  for (const auto& st : s["steps"])
    out += fmt::format("{:>5} {:>5} {:>12} {:>12} {:>12}\n", st["pass"].get<std::string>(),
                       st["step"].get<std::int64_t>(), human_seconds(st["time_s"].get<double>()),
                       human_seconds(st["compute_s"].get<double>()),
                       human_seconds(st["wait_s"].get<double>()));
  out += fmt::format("total {} (median of {} run(s)); compute and wait are the slowest rank's\n",
                     human_seconds(s["time_s"].get<double>()), s["repeat"].get<int>());
  return out;
}

}  // namespace ringsim::mpi
