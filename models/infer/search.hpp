#pragma once
// Inference capacity planning (`ringsim plan --inference`): every TP x CP
// split of at most --gpus GPUs that can serve the request, timed by the
// closed forms (models/infer/infer.hpp), ranked: those that fit in HBM and
// meet the TTFT target first, by TTFT, then by cost (GPU-seconds per
// request); then those that miss the target; then those that do not fit.
#include <cstdint>
#include <string>
#include <vector>

#include "models/infer/infer.hpp"

namespace ringsim {

struct InferOption {
  InferRequest request;  // tp, cp, gpus = tp x cp set
  InferResult result;
  bool fits = false, meets_target = false;
  std::string why;         // not usable: the rule or memory term; "" when fits
  double gpu_seconds = 0;  // gpus x TTFT: the cost of one prefill
};

// `base`: the request with gpus = the most GPUs to use; tp and cp are
// searched (tp: powers of two up to --gpus that the heads allow, across
// nodes too, since a model too big for one node's TP may need it; cp:
// powers of two the context divides into, at most kMaxAutoCp = 1024). `ttft_target` 0: no target.
// `fitting_only`: leave out (untimed) the splits whose memory misses the HBM
// under both variants. Throws InputError when no split can even be formed.
std::vector<InferOption> search_inference(const InferRequest& base, const Hardware& hw,
                                          const Implementation& im, double ttft_target,
                                          const std::vector<std::int64_t>& tp_degrees = {},
                                          const std::vector<std::int64_t>& cp_degrees = {},
                                          bool fitting_only = false);

// Where a TP group of `tp` GPUs sits on nodes of `gpus_per_node`: "inside a
// node", or "across N nodes" when it spans them (its all-reduces then cross
// the NICs: models/analytic/collectives.hpp).
std::string tp_placement(std::int64_t tp, int gpus_per_node);
// Nodes one TP group spans (1 inside a node).
std::int64_t tp_nodes(std::int64_t tp, int gpus_per_node);

}  // namespace ringsim
