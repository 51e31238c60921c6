#pragma once
// What the planner assumed for one configuration, each with its value, its
// source and the flag or --set key that moves it (`plan --explain`, and the
// "assumptions" array of `plan --json`; docs/models.md, "Moving an
// assumption").
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/core/catalog.hpp"
#include "models/core/workload.hpp"

namespace ringsim {

struct PlanRequest;

struct AssumptionRow {
  std::string what, value;  // "GEMM efficiency", "0.744"
  std::string key;          // the --set key (devices.h100-sxm.gemm_efficiency)
  std::string flag;         // a dedicated flag that also moves it ("--flops"), or ""
  std::string source;       // where the value comes from ("moved by --set" once moved)
};

// The assumptions behind a plan on `hw`: the device's compute and memory
// rates, the attention kernel's rate and merge work, the links the job
// crosses, the framework's execution costs, layouts and calibration.
std::vector<AssumptionRow> plan_assumptions(const PlanRequest& r, const Hardware& hw,
                                            const Catalog& cat);
std::string assumptions_text(const std::vector<AssumptionRow>& rows);
nlohmann::json assumptions_json(const std::vector<AssumptionRow>& rows);

}  // namespace ringsim
