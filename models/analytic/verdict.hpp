#pragma once
// The run's verdict on communication, stated once: whether it hid, how much
// was exposed and where that time came from, which steps stalled, and the
// minimum block over the whole pass. Both engines call make_verdict on their
// own timeline (the closed forms' device sums, the simulation's recorded
// device), so "hidden", "exposed" and "stalled" agree in kind between them;
// the rule is in docs/models.md, "The verdict".
#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ringsim {

// Where exposed time comes from (keys of Verdict::exposed_by_source).
inline constexpr const char* kSourceTransferWaits = "transfer_waits";  // steps waiting on a link
inline constexpr const char* kSourceDiagonal = "diagonal_step";   // causal step 0: half the work
inline constexpr const char* kSourceFinalHop = "final_hop";       // backward's dK/dV hop home
inline constexpr const char* kSourceCollectives = "collectives";  // all-to-all, all-gather, r-s
inline constexpr const char* kSourceTp = "tp_collectives";        // --tp's collectives
inline constexpr const char* kSourceEp = "ep_alltoalls";  // a MoE layer's dispatch and combine
inline constexpr const char* kSourceInterference = "interference";  // per-step costs slowed
inline constexpr const char* kSourceUnattributed = "unattributed";  // rounding of the timeline

// Where the time beyond the ideal goes (keys of Verdict::losses), the largest
// named in the verdict with what would remove it.
inline constexpr const char* kLossImbalance = "imbalance";        // busiest device above the mean
inline constexpr const char* kLossExposed = "exposed_comm";       // exposed, less interference
inline constexpr const char* kLossInterference = "interference";  // compute slowed by transfers
inline constexpr const char* kLossOverheads = "merge_launch";     // per-step merges and launches
inline constexpr const char* kLossKernelRate = "kernel_rate";     // the kernel below its best rate

// What one engine measured on the device whose finish sets the time (one
// layer's worth times the layers, all passes).
struct VerdictInputs {
  double time_s = 0;          // the run's predicted/simulated time
  double compute_only_s = 0;  // the same schedule with free links (busiest device's compute)
  double device_time_s = 0;   // the time-setting device's finish
  double device_free_s = 0;   // its own compute with free links
  // Its waits for transfers after computing, per pass (0 fwd, 1 bwd) and step
  // (summed over layers); a step of 0 s is left out.
  std::array<std::map<std::int64_t, double>, 2> step_wait_s;
  bool diagonal_step0 = false;  // step 0 computes the causal diagonal (a light step)
  double interference_s = 0;    // compute and merge slowed while transfers ran
  double final_hop_s = 0, collectives_s = 0, tp_s = 0, ep_s = 0;
  // Minimum block per pass (0: the layout does not overlap; -1: never hides;
  // nullopt: the pass does not run).
  std::array<std::optional<std::int64_t>, 2> min_block;
  std::int64_t block = 0;
  bool overlap = true;  // --overlap full
  // Slowest device's compute of the lightest and heaviest step, and where.
  double lightest_s = 0, heaviest_s = 0;
  int lightest_pass = 0, heaviest_pass = 0;
  std::int64_t lightest_step = 0, heaviest_step = 0;
  std::string collective_name = "collectives";  // "all-to-all", "all-gather", ...
  // What the time no named source explains is, where the caller knows (job
  // mode: the FSDP collectives the ring waits for); "" for the plain words.
  std::string residual_name;
  // The losses (below): the ideal time, the devices' mean own compute with
  // free links, the busiest device's merges, accumulations and launches.
  double ideal_s = 0, mean_compute_s = 0, overheads_s = 0;
  bool contiguous_causal = false;  // a causal ring (or hybrid) whose devices idle in turn
  bool slowed_devices = false;     // --straggler or --jitter: imbalance of their making
  // Packed documents: which documents make the heaviest step's busiest device
  // slow, in words (documents_imbalance, models/core/documents.hpp); "" without.
  std::string documents_why;
};

struct Verdict {
  bool hidden = false;
  double exposed_comm_s = 0;
  double tolerance_s = 0;
  std::array<std::vector<std::int64_t>, 2> stalled;  // per pass
  std::vector<std::int64_t> stalled_steps;           // both passes' steps, sorted, unique
  std::optional<std::int64_t> min_block;             // max over passes; nullopt: n/a or never hides
  bool never_hides = false;                          // some pass's transfers hide at no block
  std::array<std::optional<std::int64_t>, 2> min_block_by_pass;  // nullopt: n/a
  std::map<std::string, double> exposed_by_source;               // seconds, sums to exposed
  double lightest_step_compute_s = 0, heaviest_step_compute_s = 0;
  int lightest_pass = 0, heaviest_pass = 0;
  std::int64_t lightest_step = 0, heaviest_step = 0;
  // time - ideal, split: imbalance (busiest device's compute above the mean),
  // exposed communication (less interference), interference, merge and launch
  // overheads, the kernel below its best rate; seconds, all >= 0.
  std::map<std::string, double> losses;
  std::string largest_loss;  // a key of losses ("" when nothing is lost)
  std::string fix;           // what would remove it, in words
  std::string text;

  nlohmann::json to_json() const;
  // Throws InputError naming `origin` and the missing or mistyped key.
  static Verdict from_json(const nlohmann::json& j, const std::string& origin);
};

// Exposed time counts as zero within this fraction of the run's time: the
// time and the compute-only time are sums taken in different orders (and
// SimGrid's dates carry ~1e-16 relative error each), so a hidden run's
// difference is rounding, orders of magnitude below 1e-6 of the time.
inline constexpr double kExposedTolerance = 1e-6;

Verdict make_verdict(const VerdictInputs& in);

// "0-3, 5, 7-9": steps as compact ranges.
std::string step_ranges(const std::vector<std::int64_t>& steps);

// "min block to hide comm" in words: "7964 tokens (fwd 6663, bwd 7964)".
// With packed documents the closed form's block is no guide (a step's work
// is where the documents fall): it says so instead of a token count.
std::string min_block_text(const Verdict& v, bool overlap, bool documents = false);
// "1.042 ms (bwd step 3); lightest 521.0 us (fwd step 0)".
std::string step_compute_text(const Verdict& v);

}  // namespace ringsim
