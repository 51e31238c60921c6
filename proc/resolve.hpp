#pragma once
// A run spec's names and overrides resolved against the hardware catalog and
// the model presets: the Workload, Hardware and compute model the closed forms
// and the simulator take. Every error names its flag (InputError).
#include <memory>

#include "models/core/catalog.hpp"
#include "models/core/profile.hpp"
#include "models/core/workload.hpp"
#include "proc/run_spec.hpp"

namespace ringsim::proc {

// The embedded catalog, with --catalog merged in.
Catalog load_catalog(const HardwareSpec& h);
// The --model preset with the custom shape flags applied.
ModelShape resolve_shape(const WorkloadSpec& w);
Hardware resolve_hardware(const HardwareSpec& h, const Catalog& cat, DType dtype);
Workload resolve_workload(const WorkloadSpec& w, const Hardware& hw);
// Roofline from the catalog (and --flops/--efficiency), or the --profile.
std::unique_ptr<ComputeModel> make_compute_model(const HardwareSpec& h, const Hardware& hw,
                                                 DType dtype);

}  // namespace ringsim::proc
