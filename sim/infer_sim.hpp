#pragma once
// The SimGrid model of inference: one actor per GPU (tp x cp of them, TP
// inside a node, CP ranks across nodes) playing every layer of a prefill or
// one decode step on the simulated cluster. Each layer: the dense work
// (projections, MLP, norms), the attention ring (pass-kv or pass-q) with its
// transfers overlapping the compute, pass-q's all-to-all of partial outputs
// (decode: the gather to rank 0 and the result sent back) and their merge,
// then the two TP all-reduces as ring reduce-scatter + all-gather rounds on
// the node's links; with EP across CP ranks, the experts' dispatch and
// combine (a decode step's all-reduce) at the closed form's time. The work of every phase comes
// from one InferLayer (models/infer/infer.hpp), the same the closed forms sum, so the two engines
// differ only where the network does (docs/inference.md).
//
// SimGrid allows one engine per process: simulate_infer() may be called once,
// and not after simulate().
#include <cstdint>
#include <string>
#include <vector>

#include "models/infer/infer.hpp"
#include "sim/faults.hpp"
#include "sim/guard.hpp"
#include "sim/options.hpp"
#include "sim/topology.hpp"
#include "trace/event.hpp"

namespace ringsim::sim {

// The request plays its prefill (every layer, then the output head for the
// last token) and then one decode step (every layer and the head again), as
// a serving engine would; SimGrid allows one engine per process, so both run
// in one simulation.
struct InferSimOptions {
  InferRequest request;
  Hardware hardware;
  InferLayer prefill, decode;
  // A chunked-attention model's (Llama 4's) chunked layers, played where
  // layer_attends_in_chunks says (the global ones above elsewhere).
  InferLayer prefill_chunked, decode_chunked;
  double prefill_head_s = 0, decode_head_s = 0;
  bool with_decode = true;
  NetworkModel network = NetworkModel::Exact;
  bool record_events = false;  // --trace
  bool progress = false;
  // infer --straggler GPU:F, --degrade LINK:F, --jitter S: a slow GPU slows
  // every compute it runs (attention, dense, merge, head), a degraded link
  // every transfer on it; the closed forms stay fault-free.
  Faults faults;
};

// Busiest GPU, all layers: seconds in each phase (waits for transfers
// included in attention_s, return_s and tp_s, as the closed forms count them).
struct InferSimPhases {
  double attention_s = 0, return_s = 0, merge_s = 0, dense_s = 0, tp_s = 0, head_s = 0;
  double ep_s = 0;  // EP across CP ranks: dispatch and combine, or decode's all-reduce
};

struct InferSimResult {
  double ttft_s = 0;    // when the last GPU finished the prefill
  double decode_s = 0;  // from then until the last GPU finished the decode step
  InferSimPhases prefill, decode;
  std::uint64_t activities = 0;  // execs + transfers simulated
  std::string platform;          // Topology::describe()
  bool interrupted = false;
  std::vector<std::vector<trace::Event>> events;  // per GPU, in time order
};

// What the simulation will cost (activities, memory, trace size), for
// check_budget (sim/guard.hpp) before it starts.
SizeEstimate estimate_infer_size(const InferSimOptions& o);

// Runs the simulation. Throws InputError for inputs the platform rejects and
// std::runtime_error if it deadlocks or an actor fails.
InferSimResult simulate_infer(const InferSimOptions& o);

}  // namespace ringsim::sim
