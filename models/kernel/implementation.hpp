#pragma once
// A ring attention implementation on one device: the kernel's rates (a
// ComputeModel), the memory-bound work around its calls (StepOp), launch
// latency and how its communication library slows compute while a transfer
// is in flight. Both engines time a device-step with these functions, so the
// closed forms and the SimGrid actors charge the same phases:
//   launch      host launch time the device's work does not cover
//   partial     the attention kernel calls
//   merge       forward: folding the step's partial output into the running one
//   accumulate  backward: adding the step's dQ/dK/dV into the running sums
//   reduce      once per pass: the final casts, and deferred corrections
// Derivations: docs/models.md, "Per-step costs" and "Overlap interference".
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/core/catalog.hpp"
#include "models/core/profile.hpp"
#include "models/core/workload.hpp"

namespace ringsim {

// How much slower compute runs while the device's own transfer is in flight.
struct Interference {
  double compute = 1;  // attention kernels: SMs / (SMs - CTAs the comm library takes)
  double memory = 1;   // merge/accumulate: 1 / (1 - HBM traffic of the copy / HBM bandwidth)
  int ctas = 0;        // CTAs the library takes on this link kind
  std::string link_kind;
};

struct StepCost {
  double launch_s = 0, attention_s = 0, merge_s = 0;  // merge_s: merge (fwd) or accumulate (bwd)
  double loop_s = 0;  // of launch_s: a scan's loop control (ChunkScanModel::loop_seconds)
  std::uint64_t useful_pairs = 0, executed_pairs = 0;
  double total() const { return launch_s + attention_s + merge_s; }
};

class ChunkScanModel;

class Implementation {
 public:
  // The bare model: the rates alone, no ops, launch or interference (what
  // a roofline or profile model meant before implementations existed).
  explicit Implementation(std::shared_ptr<const ComputeModel> rates);
  // `spec` on `device` (catalog data); hbm_bandwidth from the device.
  Implementation(const KernelSpec& spec, std::shared_ptr<const ComputeModel> rates,
                 const Device& device, const CommLibrary* comm);

  const ComputeModel& rates() const { return *rates_; }
  std::shared_ptr<const ComputeModel> rates_ptr() const { return rates_; }
  const std::string& kernel() const { return kernel_; }
  const std::string& merge_style() const { return merge_; }
  std::string name() const { return rates_->name(); }
  int grad_bytes() const { return grad_bytes_; }
  // Bytes per K element on the ring (0: the dtype's; the seed sends K in fp32).
  int k_bytes() const;
  // The JAX chunk scan behind the rates, or null (models/kernel/chunk_scan.hpp).
  const ChunkScanModel* chunk_scan() const { return scan_.get(); }
  // Where striped and zigzag reorder the sequence: "pipeline" or "layer" (KernelSpec).
  const std::string& permutation() const { return permutation_; }
  bool permutes_per_layer() const { return permutation_ == "layer"; }
  // KV heads of the blocks the ring passes: the query heads where the code
  // around the kernel repeats K/V before the call (KernelSpec ring_kv).
  int ring_kv_heads(const Workload& w) const {
    return expands_kv_ ? w.shape.heads : w.shape.kv_heads;
  }
  bool expands_kv() const { return expands_kv_; }
  // The kernel writes the scores to HBM (KernelSpec scores): standard
  // attention, whose probabilities' dropout is one more op.
  bool scores_in_hbm() const { return scores_in_hbm_; }
  // Query chunks x key chunks one step's scan walks (0 x 0 without a chunk scan).
  std::pair<std::int64_t, std::int64_t> scan_grid(const Workload& w) const;
  double launch_s() const { return launch_s_; }
  const std::vector<StepOp>& ops() const { return ops_; }
  // Interference on a link of `kind` moving `bandwidth` bytes/s each way.
  Interference interference(const std::string& kind, double bandwidth) const;

  // One device-step: its calls (models/core/calls.hpp), the ops of the step,
  // and the launch time they leave uncovered. `sends`: the step sends a block.
  StepCost step(const Workload& w, std::int64_t device, std::int64_t step, bool backward,
                bool sends) const;
  // The reduce phase after the last step of a pass: final ops, deferred ops
  // of every computing step, their launches.
  double reduce(const Workload& w, std::int64_t device, bool backward) const;
  // One device running the whole sequence (the single-device baseline), in
  // the tiles it runs fastest: seconds for the pass, launch included.
  double single_device(const Workload& w, bool backward) const;

  // Public so tests can build one by hand.
  std::vector<StepOp> ops_;
  double launch_s_ = 0;
  int kernels_fwd_ = 0, kernels_bwd_ = 0;
  int grad_bytes_ = 4;
  double hbm_bandwidth_ = 0;
  int sm_count_ = 0;
  CommLibrary comm_;
  bool dma_ = false;  // the library drives transfers without the device's SMs or merge traffic
  bool expands_kv_ = false;
  std::string permutation_ = "pipeline";
  bool scores_in_hbm_ = false;

 private:
  std::shared_ptr<const ComputeModel> rates_;
  std::shared_ptr<const ChunkScanModel> scan_;
  std::string kernel_ = "model", merge_ = "none modelled";

  double op_seconds(const StepOp& op, double units) const;
};

// A compute model as an implementation with nothing around its calls; it
// refers to `cm`, which must outlive it.
Implementation bare_implementation(const ComputeModel& cm);

// End of a device's compute in a step whose transfer lasts `window` seconds
// from the step's start: launch first (unslowed), then the kernels slowed by
// f.compute, then the merge slowed by f.memory, each slowed only while the
// window is open. window <= 0: no slowdown.
double overlap_phases(const StepCost& c, const Interference& f, double window);

// The boundaries of those phases (ends of launch, attention, merge), for traces.
struct PhaseEnds {
  double launch = 0, attention = 0, merge = 0;
};
PhaseEnds overlap_phase_ends(const StepCost& c, const Interference& f, double window);

// The implementation a run uses: `kernel` ("" = the device's default, or
// the roofline when --flops/--efficiency are given), with its rates from the
// catalog, the roofline, or a profile (`profile`: a --profile file's model).
struct ImplementationChoice {
  std::string kernel;                           // --kernel
  std::shared_ptr<const ComputeModel> profile;  // --profile, if any
  bool roofline_overrides = false;              // --flops / --efficiency given
  // --query-chunk-size / --key-chunk-size (0: the kernel's defaults); only a
  // chunk-scan kernel (ringattention-jax) takes them.
  std::int64_t query_chunk = 0, key_chunk = 0;
};
std::shared_ptr<const Implementation> make_implementation(const Catalog& cat, const Hardware& hw,
                                                          DType dtype,
                                                          const ImplementationChoice& choice);

}  // namespace ringsim
