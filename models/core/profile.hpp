#pragma once
// Compute models: how long a step's blockwise attention takes.
// - RooflineModel: entries * FLOPs per entry / (peak * efficiency).
// - ProfileModel: measured kernel times (models/profiles/*.json, written by
//   `ringsim profile`), per score entry, interpolated in log(block) between
//   measured sizes. Schema: models/profiles/README.md.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "models/core/calls.hpp"
#include "models/core/workload.hpp"

namespace ringsim {

// FLOPs per score entry: QK^T (2d) + PV (2d) forward (Ring Attention sec. 3);
// backward recomputes QK^T and does dV, dP, dQ, dK: five GEMMs vs two, 2.5x
// (FlashAttention-2 sec. 3.1 counts backward as 2.5x forward FLOPs).
double flops_per_entry(int head_dim, bool backward);

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;
  // Seconds for `entries` score entries of a step whose query block has
  // `block` tokens. `partial_mask`: the step's block is partly masked (causal
  // diagonal, striped, zigzag); kernels run those at a different rate.
  virtual double seconds(std::uint64_t entries, std::int64_t block, int head_dim, bool backward,
                         bool partial_mask) const = 0;
  // Seconds to merge one step's partial output (O and LSE of `rows` query
  // rows, heads included) into the running one: the online-softmax rescale
  // of a ring step after the first. Memory-bound, O(rows x head_dim), so it
  // matters only at small blocks. 0 unless the model measured it (a profile
  // with "merge" points); the roofline counts FLOPs of the two GEMMs only.
  virtual double merge_seconds(std::uint64_t /*rows*/, std::int64_t /*block*/,
                               int /*head_dim*/) const {
    return 0;
  }
  // Smallest block the model can time (a profile's smallest measured block);
  // 0: any block.
  virtual std::int64_t min_block() const { return 0; }
  // FLOP/s this model reaches at a given block (for reports and minblock).
  double achieved_flops(std::int64_t block, int head_dim, bool backward, bool partial_mask) const;
  virtual std::string name() const = 0;  // "roofline" or "profile:<device name>"

  // Seconds of the device's work for one kernel call (no launch): by
  // default its full part at the full rate of a block of max(q, k) and its
  // causal square at the masked rate of a block of q (split_call).
  virtual double call_seconds(const KernelCall& c, int head_dim, bool backward) const;
  // Seconds of one varlen launch that runs every call of `calls` at once
  // (flash_attn_varlen_func over a step's documents, cu_seqlens): by default
  // the sum of the calls' times; models that see the GPU's waves time the
  // launch's thread blocks together (KernelModel).
  virtual double launch_seconds(const std::vector<KernelCall>& calls, int head_dim,
                                bool backward) const;
  // Pairs the call computes: its visible pairs, or more where the kernel
  // works in tiles (call_tile_pairs).
  virtual std::uint64_t executed_pairs(const KernelCall& c, int /*head_dim*/,
                                       bool /*backward*/) const {
    return call_pairs(c);
  }
  // Useful FLOP/s of an unmasked square call of `length` tokens: the rate
  // the ideal time divides the total work by.
  virtual double nominal_flops(std::int64_t length, int head_dim, bool backward) const;
};

class RooflineModel final : public ComputeModel {
 public:
  explicit RooflineModel(double effective_flops) : flops_(effective_flops) {}
  double seconds(std::uint64_t entries, std::int64_t block, int head_dim, bool backward,
                 bool partial_mask) const override;
  std::string name() const override { return "roofline"; }
  double nominal_flops(std::int64_t, int, bool) const override { return flops_; }

 private:
  double flops_;
};

struct ProfilePoint {
  std::string kernel;  // fwd | bwd | merge
  std::string dtype;   // fp32 | fp64 | bf16 | fp16
  int head_dim = 0;
  std::int64_t block = 0;
  std::string mask;  // full | causal_diagonal
  double median_s = 0, min_s = 0, max_s = 0;
  int repeats = 0;
  std::uint64_t entries = 0;  // score entries the timed call computed (merge: rows merged)
};

struct Profile {
  std::string schema, device_kind, device_name, driver, date, kernel_version;
  std::vector<ProfilePoint> points;
};

// One point as the schema writes it (models/profiles/README.md): the fields
// parse_profile reads, and `heads` per call. Writers add their own extras.
nlohmann::json profile_point_json(const ProfilePoint& p, int heads);

// Reads and validates a profile; throws InputError naming `path` on any problem.
Profile read_profile(const std::string& path);
Profile parse_profile(const std::string& text, const std::string& origin);

// How run and minblock pick a profile's dtype, for a profile without it.
inline constexpr const char* kChooseProfileDtype = "pass --dtype with one of those";

class ProfileModel final : public ComputeModel {
 public:
  // Uses the points for `dtype`; errors if the profile has none for it,
  // saying `choose` (how the command picks the dtype).
  ProfileModel(Profile p, const std::string& dtype, const std::string& origin,
               const std::string& choose = kChooseProfileDtype);
  double seconds(std::uint64_t entries, std::int64_t block, int head_dim, bool backward,
                 bool partial_mask) const override;
  double merge_seconds(std::uint64_t rows, std::int64_t block, int head_dim) const override;
  bool has_merge() const;
  std::string name() const override { return "profile:" + profile_.device_name; }
  std::int64_t min_block() const override;
  std::int64_t max_block() const;
  const Profile& profile() const { return profile_; }

 private:
  // (kernel, head_dim, mask) -> sorted (block, seconds per entry)
  using Key = std::tuple<std::string, int, std::string>;
  std::map<Key, std::vector<std::pair<std::int64_t, double>>> curves_;
  Profile profile_;
  std::string origin_;
  double per_entry(const Key& key, std::int64_t block) const;
};

}  // namespace ringsim
