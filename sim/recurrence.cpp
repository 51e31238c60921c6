#include "sim/recurrence.hpp"

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <stdexcept>
#include <unordered_set>

#include "sim/run.hpp"

namespace ringsim::sim {

namespace {

// A ring hop's route as SimGrid has it: its latency (summed over the links,
// in route order, as SimGrid sums it) and its slowest link's bandwidth.
struct Route {
  double latency = 0, bandwidth = 0;
};

// Reads each hop d -> next[d] from the platform; refuses two hops on one link.
std::vector<Route> ring_routes(const std::vector<simgrid::s4u::Host*>& hosts,
                               const std::vector<std::int64_t>& next) {
  std::vector<Route> routes(next.size());
  std::unordered_set<const simgrid::s4u::Link*> used;
  std::vector<simgrid::s4u::Link*> links;
  for (std::size_t d = 0; d < next.size(); ++d) {
    if (next[d] < 0) continue;
    links.clear();
    auto& r = routes[d];
    hosts[d]->route_to(hosts[static_cast<std::size_t>(next[d])], links, &r.latency);
    for (const auto* l : links) {
      if (!used.insert(l).second)
        throw std::logic_error("recurrence: link " + l->get_name() + " is on two ring hops");
      r.bandwidth =
          r.bandwidth == 0 ? l->get_bandwidth() : std::min(r.bandwidth, l->get_bandwidth());
    }
  }
  return routes;
}

// The schedule of sim/simulate.cpp's Device, every device at once, one
// operation (step, hop, reduce, dense) at a time. Clocks are SimGrid's: the
// run's seconds x k (a power of two), divided by k wherever a time is
// recorded, as the actors read their clock.
class Player {
 public:
  Player(Run& r, const std::vector<simgrid::s4u::Host*>& hosts, double k)
      : r_(r), k_(k), n_(static_cast<std::size_t>(r.n)) {
    prev_.resize(n_);
    next_.resize(n_);
    for (std::size_t d = 0; d < n_; ++d)
      std::tie(prev_[d], next_[d]) = r_.ring_neighbours(static_cast<std::int64_t>(d), 1);
    route_ = ring_routes(hosts, next_);
    for (std::size_t d = 0; d < n_; ++d)
      slowdown_.push_back(r_.interference(static_cast<std::int64_t>(d), next_[d]));
    clock_.assign(n_, 0.0);
    post_.assign(n_, 0.0);
    start_.assign(n_, 0.0);
    end_.assign(n_, 0.0);
    t0_.assign(n_, 0.0);
    tc_.assign(n_, 0.0);
    ends_.resize(n_);
    cost_.resize(n_);
  }

  void play() {
    for (int layer = 0; layer < r_.w.layers; ++layer)
      for (std::size_t pi = 0; pi < r_.passes.size(); ++pi) {
        const int pass = r_.passes[pi];
        if (pass == 1) {
          dense(layer, static_cast<int>(pi), pass);
          ep_alltoalls(layer, pass);
        }
        ring_steps(layer, static_cast<int>(pi), pass);
        if (pass == 0) {
          dense(layer, static_cast<int>(pi), pass);
          ep_alltoalls(layer, pass);
        }
      }
    for (std::size_t d = 0; d < n_; ++d) r_.rec.finished(dev(d), now(d));
  }

 private:
  Run& r_;
  double k_;
  std::size_t n_;
  std::vector<std::int64_t> prev_, next_;
  std::vector<Route> route_;
  std::vector<Interference> slowdown_;
  // Per device: its clock; its transfer to next: posted, started, ended; the
  // current step's start, compute end, phase ends and cost.
  std::vector<double> clock_, post_, start_, end_, t0_, tc_;
  std::vector<PhaseEnds> ends_;
  std::vector<StepCost> cost_;

  static std::int64_t dev(std::size_t d) { return static_cast<std::int64_t>(d); }
  double now(std::size_t d) const { return clock_[d] / k_; }
  bool ringed() const { return n_ > 1 && next_[0] >= 0; }
  void compute(std::size_t d, double seconds) { clock_[d] += seconds * k_; }

  // Every device's transfer to its successor, posted at post_: it starts once
  // the successor has posted its receive (the mailbox's rendez-vous), then
  // the route's latency and the bytes at its bandwidth, alone on its links.
  void transfers(std::uint64_t bytes) {
    for (std::size_t d = 0; d < n_; ++d) {
      const auto& rt = route_[d];
      start_[d] = std::max(post_[d], post_[static_cast<std::size_t>(next_[d])]);
      end_[d] = (start_[d] + rt.latency) + static_cast<double>(bytes) / rt.bandwidth;
    }
  }
  // Device d's send (to next) and receive (from prev), in the run's seconds.
  CommTimes comm(std::size_t d) const {
    const auto p = static_cast<std::size_t>(prev_[d]);
    return {start_[d] / k_, end_[d] / k_, start_[p] / k_, end_[p] / k_};
  }
  // Waits for the receive and the send: the later of them and the clock.
  void wait_both(std::size_t d) {
    clock_[d] = std::max({clock_[d], end_[static_cast<std::size_t>(prev_[d])], end_[d]});
  }

  // The actor's `overlapped`: the compute slowed while the send runs, at full
  // speed after it. It waits for the send at most the slowed phases, so its
  // clock is then the send's end either way; if the send ended first, the
  // rest of the phases runs after it.
  double overlapped(std::size_t d, bool busy) {
    const auto& f = slowdown_[d];
    const auto& cost = cost_[d];
    const double t0 = t0_[d];
    if (f.compute == 1 && f.memory == 1) {
      if (busy) compute(d, cost.total());
      return now(d);
    }
    if (!busy) return t0;
    const double timeout = clock_[d] + overlap_phases(cost, f, 1e300) * k_;
    const bool send_first = end_[d] <= timeout;
    clock_[d] = end_[d];
    ends_[d] = overlap_phase_ends(cost, f, now(d) - t0);
    if (send_first) {
      const double rest = t0 + ends_[d].merge - now(d);
      if (rest > 0) compute(d, rest);
    }
    return t0 + ends_[d].merge;
  }

  // One step of every device: cost and post (after the compute with
  // --overlap none), the transfers, the compute, the waits, the record.
  void step(int layer, int pi, int pass, std::int64_t s) {
    const auto bytes = r_.bytes[pass].ring;
    const bool overlap = r_.o.hardware.overlap;
    const bool xfer = ringed() && s + 1 < r_.steps;
    for (std::size_t d = 0; d < n_; ++d) {
      t0_[d] = now(d);
      cost_[d] = r_.cost(dev(d), layer, pass, s, xfer && bytes > 0);
      const auto& c = cost_[d];
      ends_[d] = {c.launch_s, c.launch_s + c.attention_s, c.total()};
      if (!(xfer && overlap)) {
        if (c.total() > 0) compute(d, c.total());
        tc_[d] = now(d);
      }
      post_[d] = clock_[d];
    }
    if (xfer) transfers(bytes);
    for (std::size_t d = 0; d < n_; ++d) {
      const bool busy = cost_[d].total() > 0;
      if (xfer && overlap) tc_[d] = overlapped(d, busy);
      CommTimes ct;
      if (xfer) {
        wait_both(d);
        ct = comm(d);
      }
      r_.record_step(dev(d), layer, pi, s, cost_[d], busy, ends_[d], t0_[d], tc_[d], now(d), xfer,
                     bytes, ct, prev_[d], next_[d]);
    }
  }

  void ring_steps(int layer, int pi, int pass) {
    for (std::int64_t s = 0; s < r_.steps; ++s) {
      if (interrupt_requested()) throw Interrupted{};
      step(layer, pi, pass, s);
    }
    if (pass == 1 && ringed() && r_.bytes[1].final_hop) final_hop(layer, pass);
    for (std::size_t d = 0; d < n_; ++d) {
      const double red = r_.reduce_seconds(dev(d), layer, pass);
      if (red <= 0) continue;
      const double t0 = now(d);
      compute(d, red);
      r_.rec.reduce(dev(d), layer, pi, pass, t0, now(d));
    }
  }

  // Backward: dK/dV of the block held last, one hop home.
  void final_hop(int layer, int pass) {
    const auto fb = r_.bytes[1].final_hop;
    for (std::size_t d = 0; d < n_; ++d) {
      t0_[d] = now(d);
      post_[d] = clock_[d];
    }
    transfers(fb);
    for (std::size_t d = 0; d < n_; ++d) {
      wait_both(d);
      r_.rec.hop_time(dev(d), now(d) - t0_[d]);
      r_.rec.final_hop(dev(d), layer, pass, fb, comm(d), prev_[d], next_[d],
                       r_.kv(dev(d), r_.steps - 1), r_.kv(dev(d), 0));
    }
  }

  // --ep: the MoE layer's dispatch and combine after the dense part, as
  // the actors sleep them (Run::ep_s): the same on every device, no link.
  void ep_alltoalls(int layer, int pass) {
    if (r_.ep_s[pass] <= 0) return;
    for (std::size_t d = 0; d < n_; ++d) {
      const double t0 = now(d);
      compute(d, r_.ep_s[pass]);
      r_.rec.ep_alltoalls(dev(d), layer, pass, t0, now(d), r_.ep_bytes);
    }
  }

  void dense(int layer, int pi, int pass) {
    if (r_.dense_s[pass] <= 0) return;
    for (std::size_t d = 0; d < n_; ++d) {
      const double t0 = now(d);
      compute(d, r_.dense_seconds(dev(d), layer, pass));
      r_.rec.dense(dev(d), layer, pi, pass, t0, now(d));
    }
  }
};

}  // namespace

void play_recurrence(Run& run, const std::vector<simgrid::s4u::Host*>& hosts, double time_scale) {
  Player(run, hosts, time_scale).play();
}

}  // namespace ringsim::sim
