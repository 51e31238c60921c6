#include "experiments/device_env.hpp"

#include <map>
#include <mutex>

#include "models/core/catalog.hpp"
#include "proc/resolve.hpp"

namespace ringsim::exp {

const DeviceEnv& device_env(const std::string& gpu) {
  static std::mutex m;
  static std::map<std::string, DeviceEnv> resolved;
  const std::lock_guard<std::mutex> lock(m);
  if (const auto it = resolved.find(gpu); it != resolved.end()) return it->second;
  proc::HardwareSpec hs;
  hs.gpu = gpu;
  DeviceEnv e;
  e.hw = proc::resolve_hardware(hs, Catalog::embedded(), DType::BF16);
  e.im = proc::make_implementation(hs, Catalog::embedded(), e.hw, DType::BF16);
  return resolved.emplace(gpu, std::move(e)).first->second;
}

}  // namespace ringsim::exp
