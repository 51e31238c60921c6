#pragma once
// The workload and hardware flags shared by run, minblock, plan, experiments.
// Values are kept as text and validated by models/parse so every error names
// its flag and the allowed range.
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

#include "models/catalog.hpp"
#include "models/profile.hpp"
#include "models/workload.hpp"

namespace ringsim::cli {

struct WorkloadFlags {
  std::string devices = "256", block = "4096", layout = "ring", pass = "fwd", dtype = "bf16";
  bool causal = true;
  std::string model = "llama3-8b";
  std::string d_model, layers, heads, kv_heads, head_dim, ffn;
  std::string ulysses_degree;  // hybrid
  std::string scope = "attention";
  std::string batch = "1";
};

struct HardwareFlags {
  std::string gpu, platform, gpus_per_node, intra, inter, cluster;
  std::string flops, efficiency, bandwidth, latency;
  std::string catalog;  // extra catalog file
  std::string profile;  // kernel profile (models/profiles)
};

// `with_sizes`: add --devices/--block (run) or not (minblock adds its own).
void add_workload_flags(CLI::App* app, WorkloadFlags& f, bool with_sizes = true);
void add_model_flags(CLI::App* app, WorkloadFlags& f);
void add_hardware_flags(CLI::App* app, HardwareFlags& f);

Catalog load_catalog(const HardwareFlags& f);
ModelShape resolve_shape(const WorkloadFlags& f);
Workload resolve_workload(const WorkloadFlags& f, const Hardware& hw);
Hardware resolve_hardware(const HardwareFlags& f, const Catalog& cat, DType dtype);
// Roofline from the catalog (and --flops/--efficiency), or the --profile.
std::unique_ptr<ComputeModel> make_compute_model(const HardwareFlags& f, const Hardware& hw,
                                                 DType dtype);

}  // namespace ringsim::cli
