// A kernel profile from a PyTorch profiler trace: see trace_profile.hpp.
#include "models/core/trace_profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <tuple>

namespace ringsim {
namespace {

using GroupKey = std::tuple<bool, std::string, int, std::int64_t, bool>;

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

TracePoint make_point(const GroupKey& key, const std::vector<const AttentionCall*>& calls) {
  const auto& [backward, dtype, head_dim, length, causal] = key;
  // The largest call (most heads) stands for the group; every call's
  // per-entry time is scaled to its entries, so a group of batch sizes
  // gives one rate at this length.
  const auto* big = *std::max_element(calls.begin(), calls.end(),
                                      [](auto* a, auto* b) { return a->entries() < b->entries(); });
  const double entries = static_cast<double>(big->entries());
  std::vector<double> per_call;
  std::size_t overlapped = 0;
  for (const auto* c : calls) {
    per_call.push_back(c->seconds / static_cast<double>(c->entries()) * entries);
    overlapped += c->overlapped ? 1 : 0;
  }
  TracePoint p;
  p.point.kernel = backward ? "bwd" : "fwd";
  p.point.dtype = dtype;
  p.point.head_dim = head_dim;
  p.point.block = length;
  p.point.mask = causal ? "causal_diagonal" : "full";
  p.point.median_s = median_of(per_call);
  p.point.min_s = *std::min_element(per_call.begin(), per_call.end());
  p.point.max_s = *std::max_element(per_call.begin(), per_call.end());
  p.point.repeats = static_cast<int>(calls.size());
  p.point.entries = big->entries();
  p.heads = big->batch * big->heads;
  p.kernel = big->kernel;
  p.overlapped = overlapped;
  return p;
}

std::string iso_date(std::int64_t ns) {
  if (ns <= 0) return "unknown";
  const std::time_t s = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

TraceProfile trace_profile(const TraceCalls& calls) {
  TraceProfile out;
  std::map<GroupKey, std::vector<const AttentionCall*>> groups;
  for (const auto& c : calls.attention) {
    auto left = [&out, &c](const std::string& why) {
      auto& u = out.left_out[why];
      ++u.count;
      u.seconds += c.seconds;
    };
    // What a profile point may hold (models/core/profile.cpp): a block up to
    // 2^24, a head dim up to 4096, 4096 heads, 10^18 entries.
    const double entries = static_cast<double>(c.batch) * static_cast<double>(c.heads) *
                           static_cast<double>(c.q_len) * static_cast<double>(c.k_len);
    if (c.q_len != c.k_len)
      left("query and key lengths differ (a profile point is a square block)");
    else if (static_cast<double>(c.batch) * static_cast<double>(c.heads) > 4096)
      left("more than 4096 heads per call (batch x heads)");
    else if (c.q_len > (1 << 24) || c.head_dim > 4096 || entries > 1e18)
      left("larger than a profile point holds (2^24 tokens, head dim 4096)");
    else if (c.dtype != "bf16" && c.dtype != "fp16" && c.dtype != "fp32")
      left("a dtype profiles do not hold (fp8)");
    else if (c.seconds <= 0)
      left("no device time");
    else
      groups[{c.backward, c.dtype, c.head_dim, c.q_len, c.causal}].push_back(&c);
  }
  for (const auto& [key, list] : groups) {
    auto p = make_point(key, list);
    // A time no kernel takes (under a picosecond, over a day a call): kept out.
    if (!(p.point.median_s >= 1e-12 && p.point.max_s <= 1e6)) {
      auto& u = out.left_out["a time no kernel call takes (under 1 ps or over 10^6 s)"];
      u.count += list.size();
      continue;
    }
    out.points.push_back(std::move(p));
  }
  for (const auto& g : calls.gemm) {
    auto& s = out.gemm_by_dtype[g.dtype.empty() ? "unknown" : g.dtype];
    ++s.calls;
    s.seconds += g.seconds;
    s.flops += g.flops();
  }
  return out;
}

nlohmann::json trace_profile_json(const KinetoTrace& trace, const TraceCalls& calls,
                                  const TraceProfile& profile, const std::string& source,
                                  const std::string& device,
                                  const std::map<std::string, double>& peak) {
  nlohmann::json points = nlohmann::json::array();
  std::string kernel;
  double most = -1;
  for (const auto& p : profile.points) {
    auto j = profile_point_json(p.point, static_cast<int>(p.heads));
    j["gflops"] = flops_per_entry(p.point.head_dim, p.point.kernel == "bwd") *
                  static_cast<double>(p.point.entries) / p.point.median_s / 1e9;
    j["kernel_name"] = p.kernel;
    j["overlapped_calls"] = p.overlapped;
    points.push_back(j);
    if (p.point.median_s * p.point.repeats > most)
      most = p.point.median_s * p.point.repeats, kernel = p.kernel;
  }
  nlohmann::json gemm = nlohmann::json::array();
  for (const auto& [dtype, s] : profile.gemm_by_dtype) {
    nlohmann::json g{
        {"dtype", dtype}, {"calls", s.calls}, {"seconds", s.seconds}, {"tflops", s.rate() / 1e12}};
    const auto it = peak.find(dtype);
    g["peak_fraction"] = it != peak.end() && it->second > 0 ? nlohmann::json(s.rate() / it->second)
                                                            : nlohmann::json();
    gemm.push_back(g);
  }
  nlohmann::json comms = nlohmann::json::array();
  for (const auto& c : calls.collectives)
    comms.push_back({{"collective", to_string(c.kind)},
                     {"kernel", c.kernel},
                     {"bytes", c.bytes},
                     {"ranks", c.ranks},
                     {"time_us", c.seconds * 1e6},
                     {"busbw_GBps", c.busbw() / 1e9}});
  std::string driver = "from the trace";
  if (!trace.runtime.empty())
    driver = fmt::format("CUDA runtime {}, driver {}, {}", trace.runtime,
                         trace.driver.empty() ? "?" : trace.driver, driver);
  return {{"schema", "ringsim-profile-1"},
          {"device",
           {{"kind", "cuda"},
            {"name", trace.device_name.empty() ? "unknown GPU" : trace.device_name},
            {"driver", driver},
            {"multiprocessors", trace.sm_count},
            {"catalog_device", device.empty() ? nlohmann::json() : nlohmann::json(device)}}},
          {"date", iso_date(trace.base_time_ns)},
          {"kernel_version", "trace:" + (kernel.empty() ? std::string("none") : kernel)},
          {"method",
           "ringsim profile --from-trace: device time of each attention operator's kernels "
           "(their sum) in a torch.profiler trace, grouped by (fwd/bwd, dtype, head dim, length, "
           "mask); per-entry median, min and max over the calls, scaled to the group's largest "
           "call; gflops counts 4 d FLOPs per entry forward, 10 d backward"},
          {"source", source},
          {"points", points},
          {"gemm", gemm},
          {"collectives", comms}};
}

}  // namespace ringsim
