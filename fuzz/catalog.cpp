// Fuzz target: `--catalog FILE.json` (Catalog::merge_json_text), merged onto the
// embedded catalog as the CLI does. A catalog the reader accepts must be usable:
// every device and cluster resolves to hardware whose small ring prediction is
// finite and positive; otherwise the reader accepted garbage.
#include "models/core/catalog.hpp"

#include <cmath>

#include "fuzz/target.hpp"
#include "models/analytic/analytic.hpp"
#include "models/core/errors.hpp"
#include "proc/resolve.hpp"

namespace ringsim::fuzz {

namespace {

void check_prediction(const Catalog& cat, const proc::HardwareSpec& hf, const std::string& what) {
  for (const DType dt : {DType::BF16, DType::FP16, DType::FP32}) {
    proc::WorkloadSpec wf;
    wf.devices = 8;
    wf.block = 1024;
    wf.dtype = dt;
    Hardware hw;
    try {
      hw = proc::resolve_hardware(hf, cat, dt);
    } catch (const InputError& e) {
      check_message("catalog", e.what(), false);  // e.g. no peak for this dtype
      continue;
    }
    if (!(hw.effective_flops() > 0) || !std::isfinite(hw.effective_flops()))
      finding("catalog: accepted " + what + " with effective FLOP/s " +
              std::to_string(hw.effective_flops()));
    const auto w = proc::resolve_workload(wf, hw);
    const auto s = analyze(w, hw);
    if (!std::isfinite(s.time_s) || !(s.time_s > 0) || !std::isfinite(s.efficiency))
      finding("catalog: accepted " + what + " predicts time " + std::to_string(s.time_s));
  }
}

}  // namespace

int catalog(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Catalog cat = Catalog::embedded();
  const Catalog before = cat;
  try {
    cat.merge_json_text(text, "--catalog fuzz.json");
  } catch (const InputError& e) {
    check_message("catalog", e.what(), false);
    // A refused file leaves the catalog as it was.
    if (cat.device_names() != before.device_names() ||
        cat.interconnect_names() != before.interconnect_names() ||
        cat.cluster_names() != before.cluster_names())
      finding("catalog: a refused file changed the catalog");
    return 0;
  }
  try {
    for (const auto& d : cat.devices()) {
      proc::HardwareSpec hf;
      hf.gpu = d.name;
      check_prediction(cat, hf, "device '" + d.name + "'");
    }
    for (const auto& c : cat.clusters()) {
      proc::HardwareSpec hf;
      hf.cluster = c.name;
      check_prediction(cat, hf, "cluster '" + c.name + "'");
    }
  } catch (const InputError& e) {
    finding(std::string("catalog: accepted, then unusable: ") + e.what());
  }
  return 0;
}

}  // namespace ringsim::fuzz

RINGSIM_FUZZ_ENTRY(catalog)
