#pragma once
// What a simulation records while the device actors play the schedule: the
// statistics every run reports (per-step maxima, stalls, busy time, the
// critical device), and, when asked, every activity (--trace) and every
// device-step (--csv). The schedule (sim/simulate.cpp) says what happened and
// when; this class decides what to keep. No SimGrid here: times are seconds of
// simulated clock, handed over as numbers.
#include <cstdint>
#include <vector>

#include "models/kernel/implementation.hpp"
#include "sim/simulate.hpp"

namespace ringsim::sim {

// One transfer's two ends as SimGrid timed them.
struct CommTimes {
  double send_start = 0, send_end = 0, recv_start = 0, recv_end = 0;
};

// One ring step of one device: start, end of the launch stall, end of the
// partial (the kernel calls), end of the compute (after the merge or
// accumulate), end of the step (after its transfer); and the compute's
// length without interference (what free links would have taken).
struct StepTimes {
  double t0 = 0, tl = 0, tp = 0, tc = 0, te = 0;
  double free_s = 0;
};

class Recorder {
 public:
  // `n` simulated devices; `passes` in order (0 fwd, 1 bwd); `steps` per pass.
  Recorder(const SimOptions& o, std::int64_t n, std::int64_t steps, std::vector<int> passes);

  // A ring step. `bytes` 0: no transfer (then `comm` is ignored). `prev`/`next`:
  // the ring neighbours; `kv`/`kv_next`: the block computed on and the one received.
  void step(std::int64_t d, int layer, int pi, std::int64_t s, const StepTimes& t, bool computed,
            const StepCost& cost, std::uint64_t bytes, const CommTimes& comm, std::int64_t prev,
            std::int64_t next, std::int32_t kv, std::int32_t kv_next);
  // The pass's reduce phase (final casts, deferred corrections).
  void reduce(std::int64_t d, int layer, int pi, int pass, double t0, double t1);
  // Backward's last dK/dV hop home, after the ring steps.
  void final_hop(std::int64_t d, int layer, int pass, std::uint64_t bytes, const CommTimes& comm,
                 std::int64_t prev, std::int64_t next, std::int32_t kv_sent,
                 std::int32_t kv_received);
  // One round of a collective.
  void round(std::int64_t d, Phase ph, int layer, int pass, std::int32_t r, double t0, double t1,
             std::uint64_t bytes, std::int64_t peer, std::int64_t block);
  void collective_time(std::int64_t d, double seconds);
  // Device d spent `seconds` in backward's final hop (posting to both ends done).
  void hop_time(std::int64_t d, double seconds);
  // --tp: a pass's TP collectives on device d's group took `seconds`.
  void tp_time(std::int64_t d, double seconds);
  // --ep: a MoE layer's dispatch and combine of one pass on device d (one
  // event, phase all-to-all, `bytes` per all-to-all).
  void ep_alltoalls(std::int64_t d, int layer, int pass, double t0, double t1, std::uint64_t bytes);
  // Transfers simulated for hosts that are not devices (a TP group's other GPUs).
  void extra_activities(std::uint64_t n) { res_.activities += n; }
  // --scope layer's projections and MLP.
  void dense(std::int64_t d, int layer, int pi, int pass, double t0, double t1);
  void finished(std::int64_t d, double t);
  // Job mode: device d's FSDP collectives ran until t (its finish is the later).
  void busy_until(std::int64_t d, double t);

  bool all_finished() const;
  // Moves the results out, totals and stalls computed (call once, after the run).
  SimResult take();
  SimResult& result() { return res_; }

 private:
  const SimOptions& o_;
  const Workload& w_;
  std::int64_t n_, steps_;
  std::vector<int> passes_;
  // Per (layer, pass, step) slot: the slowest compute and whether anyone stalled.
  std::vector<double> slot_compute_;
  std::vector<char> slot_stalled_;
  std::vector<double> dense_max_, reduce_max_;  // per (layer, pass)
  std::vector<double> collective_, other_;      // per device
  std::vector<double> tp_;                      // per device: TP collectives
  std::vector<double> ep_;                      // per device: MoE dispatch + combine
  std::vector<double> free_;                    // per device: compute free links would leave
  // Per device, for the verdict: compute slowed by transfers, the final hop,
  // and each wait after a step's compute (pass, step, seconds).
  std::vector<double> interference_, hop_;
  struct Wait {
    int pass;
    std::int32_t step;
    double s;
  };
  std::vector<std::vector<Wait>> waits_;
  std::vector<char> finished_;
  SimResult res_;

  std::size_t slot(int layer, int pi, std::int64_t step) const;
  void event(std::int64_t d, Event e);
  void comm_events(std::int64_t d, int layer, int pass, std::int32_t step, std::uint64_t bytes,
                   const CommTimes& c, std::int64_t prev, std::int64_t next, std::int32_t kv_sent,
                   std::int32_t kv_received);
};

}  // namespace ringsim::sim
