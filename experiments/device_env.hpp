#pragma once
// One catalog device as the closed-form experiments evaluate on it: its
// hardware and its default attention implementation, bf16, resolved once
// from the embedded catalog as `ringsim plan --gpu NAME` and `ringsim infer
// --gpu NAME` resolve them.
#include <memory>
#include <string>

#include "models/core/workload.hpp"
#include "models/kernel/implementation.hpp"

namespace ringsim::exp {

struct DeviceEnv {
  Hardware hw;
  std::shared_ptr<const Implementation> im;
};

// Resolved on first use and kept for the process (the catalog is embedded).
const DeviceEnv& device_env(const std::string& gpu);

}  // namespace ringsim::exp
