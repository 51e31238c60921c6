// Fuzz target: `--catalog FILE.json` (Catalog::merge_json_text), merged onto the
// embedded catalog as the CLI does. A catalog the reader accepts must be usable:
// every device and cluster resolves to hardware whose small ring prediction is
// finite and positive; otherwise the reader accepted garbage.
#include "models/catalog.hpp"

#include <cmath>

#include "fuzz/target.hpp"
#include "models/analytic.hpp"
#include "models/errors.hpp"
#include "sim/cli/workload_flags.hpp"

namespace ringsim::fuzz {

namespace {

void check_prediction(const Catalog& cat, cli::HardwareFlags hf, const std::string& what) {
  for (const char* dt : {"bf16", "fp16", "fp32"}) {
    cli::WorkloadFlags wf;
    wf.devices = "8";
    wf.block = "1024";
    wf.dtype = dt;
    Hardware hw;
    try {
      hw = cli::resolve_hardware(hf, cat, parse_dtype("--dtype", dt));
    } catch (const InputError& e) {
      check_message("catalog", e.what(), false);  // e.g. no peak for this dtype
      continue;
    }
    if (!(hw.effective_flops() > 0) || !std::isfinite(hw.effective_flops()))
      finding("catalog: accepted " + what + " with effective FLOP/s " +
              std::to_string(hw.effective_flops()));
    const auto w = cli::resolve_workload(wf, hw);
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
      cli::HardwareFlags hf;
      hf.gpu = d.name;
      check_prediction(cat, hf, "device '" + d.name + "'");
    }
    for (const auto& c : cat.clusters()) {
      cli::HardwareFlags hf;
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
