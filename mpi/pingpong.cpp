#include "mpi/pingpong.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/core/parse.hpp"

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

// One forward ring step's transfer between ranks 0 and 1, `bytes` in all as
// two messages each way; the rank spins `spin_s` between posting and waiting.
// Returns the time from posting to the end of the wait and the wait alone.
std::pair<double, double> ring_step(const World& w, std::vector<char>& buf, std::int64_t bytes,
                                    double spin_s) {
  const int peer = 1 - w.rank, half = static_cast<int>(bytes / 2);
  char* send = buf.data();
  char* recv = buf.data() + bytes;
  MPI_Request r[4];
  const double t0 = now();
  RS_MPI(MPI_Irecv(recv, half, MPI_CHAR, peer, 10, w.comm, &r[0]));
  RS_MPI(MPI_Irecv(recv + half, half, MPI_CHAR, peer, 11, w.comm, &r[1]));
  RS_MPI(MPI_Isend(send, half, MPI_CHAR, peer, 10, w.comm, &r[2]));
  RS_MPI(MPI_Isend(send + half, half, MPI_CHAR, peer, 11, w.comm, &r[3]));
  while (now() - t0 < spin_s) {
  }
  const double t1 = now();
  RS_MPI(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
  const double t2 = now();
  return {t2 - t0, t2 - t1};
}

// The line t = L + bytes / B through the points of at least kFitFrom bytes.
// From there on MPIs use their rendezvous protocol (OpenMPI's shared memory
// switches above 4 KiB), whose handshake is the latency a ring step's
// messages pay; the smallest, eager messages are faster and would
// understate it. Theil-Sen: the slope is the median of the pairwise slopes
// and L the median of t - bytes / B, so one disturbed size on a busy machine
// does not tilt the line the way a least-squares fit would.

struct Line {
  double latency = 0, bandwidth = 0;
};

// Which time of a point a line goes through.
enum class Series { OneWay, Exchange, RingStep };

double series(const PingPongPoint& p, Series s) {
  switch (s) {
    case Series::OneWay:
      return p.one_way_s;
    case Series::Exchange:
      return p.exchange_s;
    default:
      return p.ring_step_s;
  }
}

// `from`: the smallest size fitted. A ring step sends two messages of half
// its bytes, so its line starts at twice kFitFrom (each message rendezvous).
Line fit_line(const std::vector<PingPongPoint>& pts, Series which, std::int64_t from) {
  std::vector<const PingPongPoint*> big;
  for (const auto& p : pts)
    if (p.bytes >= from) big.push_back(&p);
  if (big.size() < 2) {  // --pp-max below the fit range: the two largest sizes measured
    big.clear();
    for (std::size_t i = pts.size() >= 2 ? pts.size() - 2 : 0; i < pts.size(); ++i)
      big.push_back(&pts[i]);
  }
  auto t = [&](const PingPongPoint* p) { return series(*p, which); };
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
      std::vector<double> t;
      for (int i = -kWarmup; i < o.pp_iters; ++i) {
        const double x = ring_step(w, buf, b, 0).first;
        if (i >= 0) t.push_back(x);
      }
      p.ring_step_s = median(t);
      res.points.push_back(p);
      if (b > o.pp_max_bytes / 2) break;  // the next doubling would pass the largest size
    }
    // The overlap probe at a small, a middle and the largest ring-step size
    // (eager and rendezvous protocols can differ). Both ranks spin for the
    // same time: rank 0's ring_step_s, sent to rank 1.
    for (const std::int64_t want :
         {std::int64_t{16} << 10, std::int64_t{256} << 10, o.pp_max_bytes}) {
      const PingPongPoint* p = nullptr;
      for (const auto& x : res.points)
        if (x.bytes <= want) p = &x;
      if (!p || (!res.overlap_points.empty() && res.overlap_points.back().bytes == p->bytes))
        continue;
      double spin = 2 * p->ring_step_s;
      // Only ranks 0 and 1 are here: point to point, not a collective.
      const int peer = 1 - w.rank;
      if (w.rank == 0)
        RS_MPI(MPI_Send(&spin, 1, MPI_DOUBLE, peer, 20, w.comm));
      else
        RS_MPI(MPI_Recv(&spin, 1, MPI_DOUBLE, peer, 20, w.comm, MPI_STATUS_IGNORE));
      std::vector<double> wait;
      for (int i = -kWarmup; i < std::max(5, o.pp_iters / 5); ++i) {
        // Both post together, as ring ranks do after a step.
        RS_MPI(MPI_Sendrecv(nullptr, 0, MPI_CHAR, peer, 21, nullptr, 0, MPI_CHAR, peer, 21, w.comm,
                            MPI_STATUS_IGNORE));
        const double x = ring_step(w, buf, p->bytes, spin).second;
        if (i >= 0) wait.push_back(x);
      }
      OverlapPoint q;
      q.bytes = p->bytes;
      q.spin_s = spin;
      q.residual_s = median(wait);
      q.overlap = std::clamp(1.0 - q.residual_s / p->ring_step_s, 0.0, 1.0);
      res.overlap_points.push_back(q);
    }
  }
  RS_MPI(MPI_Barrier(w.comm));
  if (w.rank != 0 || res.points.empty()) return res;
  res.small_latency_s = res.points.front().one_way_s;
  const auto one = fit_line(res.points, Series::OneWay, kFitFrom),
             both = fit_line(res.points, Series::Exchange, kFitFrom),
             ring = fit_line(res.points, Series::RingStep, 2 * kFitFrom);
  res.ring_latency_s = ring.latency;
  res.ring_bandwidth_Bps = ring.bandwidth;
  std::vector<double> ov;
  for (const auto& q : res.overlap_points) ov.push_back(q.overlap);
  res.overlap = ov.empty() ? 1.0 : median(ov);
  res.latency_s = one.latency;
  res.bandwidth_Bps = one.bandwidth;
  res.exchange_latency_s = both.latency;
  res.exchange_bandwidth_Bps = both.bandwidth;
  return res;
}

}  // namespace ringsim::mpi
