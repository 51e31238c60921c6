#pragma once
// A run spec's names and overrides resolved against the hardware catalog and
// the model presets: the Workload, Hardware and compute model the closed forms
// and the simulator take. Every error names its flag (InputError).
#include <memory>

#include "models/core/catalog.hpp"
#include "models/core/profile.hpp"
#include "models/core/workload.hpp"
#include "models/kernel/implementation.hpp"
#include "proc/run_spec.hpp"

namespace ringsim::proc {

// The embedded catalog, with --catalog merged in.
// The embedded catalog, the --catalog file merged in, then each catalog --set
// applied; a framework key (frameworks.NAME.FIELD) is refused unless
// `framework_keys` (plan reads those itself: models/plan/moves.hpp).
Catalog load_catalog(const HardwareSpec& h, bool framework_keys = false);
// The --model preset with the custom shape flags applied.
ModelShape resolve_shape(const WorkloadSpec& w);
Hardware resolve_hardware(const HardwareSpec& h, const Catalog& cat, DType dtype);
// The power `dev` runs at: --power-limit (refused in one line outside the
// device's power model), else the device's as deployed, else its rated power;
// 0 for a device without a power model.
double deployed_watts(const HardwareSpec& h, const Device& dev);

// The node and link flags a platform has: nodes (--gpus-per-node) on `nodes`
// and the tori; an NVLink-type link (--intra) everywhere but a fat-tree; a
// network between nodes (--inter) on `nodes` and a fat-tree.
struct PlatformFlags {
  bool gpus_per_node = false, intra = false, inter = false;
  // --nics-per-node and --nvlink-domain (nodes), --oversubscription (a spine: nodes, fattree).
  bool nics = false, nvlink_domain = false, oversubscription = false;
  bool wraparound = false;  // the tori
};
PlatformFlags platform_flags(Platform p);
// Refuses a --gpus-per-node, --intra, --inter, --nics-per-node,
// --nvlink-domain or --oversubscription given for a platform without it (one
// line naming the flag), so nothing is silently ignored.
void refuse_flags_not_on(const HardwareSpec& h, Platform p);
Workload resolve_workload(const WorkloadSpec& w, const Hardware& hw);
// The attention implementation (--kernel, the device's default, the
// roofline with --flops/--efficiency, or ringsim's kernel with --profile).
// `choose` says how the command picks the dtype, for a --profile without it
// (ProfileModel; by default --dtype, as run and minblock take it).
inline constexpr const char* kInferProfileDtype =
    "infer times attention in bf16: give a profile with bf16 points (ringsim profile --dtypes "
    "bf16)";
inline constexpr const char* kPlanProfileDtype =
    "plan times attention in bf16, or fp32 with --attention-precision fp32: give a profile with "
    "points in one of those";
std::shared_ptr<const Implementation> make_implementation(
    const HardwareSpec& h, const Catalog& cat, const Hardware& hw, DType dtype,
    const std::string& choose = kChooseProfileDtype);

}  // namespace ringsim::proc
