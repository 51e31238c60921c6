#include "mpi/pingpong.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/parse.hpp"

namespace ringsim::mpi {

namespace {

constexpr int kWarmup = 3;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

// Round trips (seconds each) of `bytes` between ranks 0 and 1.
std::vector<double> round_trips(const World& w, std::vector<char>& buf, std::int64_t bytes,
                                int iters, bool exchange) {
  std::vector<double> t;
  const int peer = 1 - w.rank, n = static_cast<int>(bytes);
  char* send = buf.data();
  char* recv = buf.data() + bytes;
  for (int i = -kWarmup; i < iters; ++i) {
    const double t0 = now();
    if (exchange) {
      RS_MPI(MPI_Sendrecv(send, n, MPI_CHAR, peer, 1, recv, n, MPI_CHAR, peer, 1, w.comm,
                          MPI_STATUS_IGNORE));
    } else if (w.rank == 0) {
      RS_MPI(MPI_Send(send, n, MPI_CHAR, peer, 0, w.comm));
      RS_MPI(MPI_Recv(recv, n, MPI_CHAR, peer, 0, w.comm, MPI_STATUS_IGNORE));
    } else {
      RS_MPI(MPI_Recv(recv, n, MPI_CHAR, peer, 0, w.comm, MPI_STATUS_IGNORE));
      RS_MPI(MPI_Send(send, n, MPI_CHAR, peer, 0, w.comm));
    }
    if (i >= 0) t.push_back(now() - t0);
  }
  return t;
}

// The line t = L + bytes / B through the points of at least kFitFrom bytes.
// From there on MPIs use their rendezvous protocol (OpenMPI's shared memory
// switches above 4 KiB), whose handshake is the latency a ring step's
// messages pay; the smallest, eager messages are faster and would
// understate it. Theil-Sen: the slope is the median of the pairwise slopes
// and L the median of t - bytes / B, so one disturbed size on a busy machine
// does not tilt the line the way a least-squares fit would.
constexpr std::int64_t kFitFrom = 8 << 10;

struct Line {
  double latency = 0, bandwidth = 0;
};

Line fit_line(const std::vector<PingPongPoint>& pts, bool exchange) {
  std::vector<const PingPongPoint*> big;
  for (const auto& p : pts)
    if (p.bytes >= kFitFrom) big.push_back(&p);
  if (big.size() < 2) {  // --pp-max below the fit range: the two largest sizes measured
    big.clear();
    for (std::size_t i = pts.size() >= 2 ? pts.size() - 2 : 0; i < pts.size(); ++i)
      big.push_back(&pts[i]);
  }
  auto t = [&](const PingPongPoint* p) { return exchange ? p->exchange_s : p->one_way_s; };
  std::vector<double> slopes;
  for (std::size_t i = 0; i < big.size(); ++i)
    for (std::size_t j = i + 1; j < big.size(); ++j)
      slopes.push_back((t(big[j]) - t(big[i])) /
                       static_cast<double>(big[j]->bytes - big[i]->bytes));
  Line l;
  if (slopes.empty()) {  // a single size: no slope, all of it counts as bandwidth
    if (!big.empty() && t(big.front()) > 0)
      l.bandwidth = static_cast<double>(big.front()->bytes) / t(big.front());
    return l;
  }
  const double m = median(slopes);
  if (!(m > 0)) return l;
  l.bandwidth = 1.0 / m;
  std::vector<double> intercepts;
  for (const auto* p : big) intercepts.push_back(t(p) - static_cast<double>(p->bytes) * m);
  l.latency = std::max(0.0, median(intercepts));
  return l;
}

}  // namespace

PingPongResult pingpong(const World& w, const RingOptions& o) {
  PingPongResult res;
  RS_MPI(MPI_Barrier(w.comm));
  if (w.rank < 2) {
    std::vector<char> buf(static_cast<std::size_t>(2 * o.pp_max_bytes), 1);
    for (std::int64_t b = o.pp_min_bytes; b <= o.pp_max_bytes; b *= 2) {
      PingPongPoint p;
      p.bytes = b;
      p.one_way_s = median(round_trips(w, buf, b, o.pp_iters, false)) / 2;
      p.exchange_s = median(round_trips(w, buf, b, o.pp_iters, true));
      res.points.push_back(p);
      if (b > o.pp_max_bytes / 2) break;  // the next doubling would pass the largest size
    }
  }
  RS_MPI(MPI_Barrier(w.comm));
  if (w.rank != 0 || res.points.empty()) return res;
  res.small_latency_s = res.points.front().one_way_s;
  const auto one = fit_line(res.points, false), both = fit_line(res.points, true);
  res.latency_s = one.latency;
  res.bandwidth_Bps = one.bandwidth;
  res.exchange_latency_s = both.latency;
  res.exchange_bandwidth_Bps = both.bandwidth;
  return res;
}

nlohmann::json PingPongResult::to_json() const {
  nlohmann::json j;
  j["latency_s"] = latency_s;
  j["bandwidth_Bps"] = bandwidth_Bps;
  j["small_message_latency_s"] = small_latency_s;
  j["exchange_latency_s"] = exchange_latency_s;
  j["fit_from_bytes"] = kFitFrom;
  j["exchange_bandwidth_Bps"] = exchange_bandwidth_Bps;
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& p : points)
    pts.push_back({{"bytes", p.bytes}, {"one_way_s", p.one_way_s}, {"exchange_s", p.exchange_s}});
  j["points"] = pts;
  return j;
}

std::string PingPongResult::text() const {
  std::string out =
      fmt::format("{:>12} {:>12} {:>12} {:>14}\n", "bytes", "one-way", "exchange", "one-way GB/s");
  for (const auto& p : points)
    out +=
        fmt::format("{:>12} {:>12} {:>12} {:>14.3f}\n", p.bytes, human_seconds(p.one_way_s),
                    human_seconds(p.exchange_s), static_cast<double>(p.bytes) / p.one_way_s / 1e9);
  out += fmt::format(
      "line t = L + bytes / B through messages of {} KiB and more: L {}, B {:.3f} GB/s per "
      "direction\n(smallest message {}; both directions busy: L {}, B {:.3f} GB/s)\n",
      kFitFrom >> 10, human_seconds(latency_s), bandwidth_Bps / 1e9, human_seconds(small_latency_s),
      human_seconds(exchange_latency_s), exchange_bandwidth_Bps / 1e9);
  return out;
}

}  // namespace ringsim::mpi
