#pragma once
// Hardware catalog: devices, interconnects and cluster presets, each number with
// its source. The default catalog is embedded at build time (models/data/
// catalog.json); --catalog FILE.json adds or replaces entries by name.
#include <map>
#include <string>
#include <vector>

#include "models/core/kernel_spec.hpp"
#include "models/core/measured_curve.hpp"
#include "models/core/workload.hpp"

namespace ringsim {

// A catalog number whose source is "assumption: ..." and the range it could
// plausibly take (the "<field>_range" key beside it, with its reason), for
// the planner's sensitivity report (docs/plan.md, "Uncertainty").
struct Assumption {
  std::string what;   // "mi300x gemm_efficiency", "nvlink4 latency"
  std::string owner;  // the device or interconnect it belongs to
  std::string field;  // gemm_efficiency | attention_efficiency | latency
  double value = 0, low = 0, high = 0;
  std::string source;        // the field's own source ("assumption: ...")
  std::string range_source;  // why the range is what it is
};

// How the device's clock, and so every compute peak, follows its power limit
// (docs/models.md, "Hardware as deployed"): the peak scales as
// ((P - static_w) / (tdp_w - static_w))^(1/3), 1 at the rated power.
struct PowerModel {
  double tdp_w = 0, static_w = 0;  // 0: no power model in the catalog
  std::string source;
  bool present() const { return tdp_w > 0; }
  // The clock (and peak) fraction at `watts`; 1 at or above tdp_w.
  double clock_scale(double watts) const;
};

// A CUDA/HIP context with lazy module loading, where the catalog gives none:
// "around 400MB if CUDA >= 11.7 is used and lazy module loading enabled"
// (a PyTorch maintainer, pytorch/pytorch issue 109888).
inline constexpr double kDefaultContextBytes = 400e6;

struct Device {
  std::string name, display, kind;  // kind: gpu | tpu
  std::string family;               // architecture family (hopper, ampere, ...): calibration's key
  double peak_bf16 = 0, peak_fp16 = 0, peak_fp32 = 0;  // FLOP/s, dense; 0 = unsupported
  double hbm_bytes = 0, hbm_bandwidth = 0;
  // Fraction of peak an attention kernel reaches where the kernel has no
  // published curve for this device (and the roofline kernel's rate).
  double attention_efficiency = 0;
  double gemm_efficiency = 0;  // fraction of peak a large bf16 matmul reaches
  // FP8 (the planner's --precision fp8): dense FP8 peak (0 = no FP8 tensor
  // cores) and the fraction of it a large FP8 GEMM reaches, with sources.
  double peak_fp8 = 0, fp8_gemm_efficiency = 0;
  std::string fp8_source, fp8_gemm_source;
  int sm_count = 0;  // SMs (NVIDIA), CUs (AMD); 0: not a GPU
  // TPUs: the data-centre network between slices, per chip (the host's DCN
  // bandwidth over the chips it serves) and per hop; 0: no multi-slice tier.
  double dcn_bandwidth_per_chip = 0, dcn_latency = 0;
  std::string dcn_source;
  std::string default_kernel;  // what a PyTorch or JAX user gets on it today
  std::string default_platform, default_intra, default_inter;
  int default_gpus_per_node = 8;
  std::string source, efficiency_source, gemm_source, sm_source, default_kernel_source;
  std::vector<Assumption> assumptions;  // assumed fields that carry a range
  // As deployed: the power model, the power the device runs at when no
  // --power-limit is given (0: its rated power), the compute die whose
  // published kernel curves it shares, achievable HBM streaming fraction, the
  // GEMM library's thread-block tiles (tile and wave quantization).
  PowerModel power;
  double default_power_w = 0;
  std::string default_power_source, same_compute_as;
  double hbm_efficiency = 1;
  std::string hbm_efficiency_source;
  // Memory as the device's own tools report it (hbm_bytes: nvidia-smi's
  // total, rocm-smi's, or JAX's bytes_limit on a TPU), the part of it the
  // driver keeps from CUDA (nvidia-smi's total less cudaMemGetInfo's), the
  // runtime context and the BLAS library's workspace (docs/models.md).
  std::string hbm_reported_by, hbm_source;
  double hbm_driver_reserved_bytes = 0;
  std::string hbm_driver_reserved_source;
  double context_bytes = 0, blas_workspace_bytes = 0;
  std::string context_source, blas_workspace_source;
  std::vector<std::pair<int, int>> gemm_tiles;
  std::string gemm_tiles_source;
  // A tile's fixed cost in K (its main loop's pipeline fill and its
  // epilogue), per precision, and the K of the best shape the GEMM
  // efficiency was measured at: below that K a GEMM reaches the efficiency
  // times k/(k+fill) over best_k/(best_k+fill) (models/kernel/gemm.hpp);
  // 0: no fill charged.
  GemmFill gemm_fill_bf16, gemm_fill_fp8;
  std::string gemm_fill_source;
  // A saturated device at its settled clock (catalog "gemm_sustained"; 1:
  // not measured): a dense GEMM's measured sustained rate over the GEMM
  // efficiency's best-shape rate, per precision, and the share of its rate a
  // kernel timed in a short burst at the boost clock keeps (the published
  // attention curves; MSMF over MAMF on one node).
  double gemm_sustained_bf16 = 1, gemm_sustained_fp8 = 1, burst_sustained = 1;
  std::string gemm_sustained_source;
  double peak(DType d) const;
  // The power it runs at when no --power-limit is given: as deployed
  // (default_power_w), else its rated power; 0 without a power model.
  double deployed_power_w() const;
  // Sets hw's device half as the device runs at `watts` (0: its rated peak):
  // the clock the power leaves, the peak at that clock, the settled GEMM and
  // attention shares, the kernel and GEMM fractions, the memory. Every path
  // that builds a Hardware from this device (proc::resolve_hardware,
  // minblock's flat ring) calls it, so no command charges a device another
  // command does not.
  void deploy(Hardware& hw, DType dtype, double watts) const;
};

struct Interconnect {
  std::string name, display;
  double bandwidth = 0;  // bytes/s per direction
  double latency = 0;    // seconds
  std::string kind;      // nvlink | network | pcie | xgmi | ici (what a comm library uses on it)
  std::string duplex, source, latency_source;
  std::vector<Assumption> assumptions;  // assumed fields that carry a range
  // Achievable, not nominal: the fraction of `bandwidth` a point-to-point
  // transfer (p2p) and a communication library's ring collectives (bus
  // bandwidth, nccl-tests' definition) reach, from published measurements.
  double p2p_efficiency = 1, collective_efficiency = 1;
  std::string p2p_efficiency_source, collective_efficiency_source;
  // ICI only: one link's bandwidth per direction as XLA's collectives use it
  // (models/analytic/xla_collectives.hpp); 0 = not described.
  double xla_link_bandwidth = 0;
  std::string xla_link_bandwidth_source;
  // The user's own fabric as nccl-tests timed it (`ringsim hardware
  // --import-nccl-tests`, docs/own-cluster.md): at most one curve per
  // collective; the collectives model reads them (models/core/measured_curve.hpp).
  std::vector<MeasuredCurve> measured;
  // What one point-to-point transfer to a neighbour achieves, bytes/s per
  // direction: on ICI one link (xla_link_bandwidth; a neighbour is one link
  // away in the torus), else bandwidth x p2p_efficiency. Every command's ring
  // step uses this rate (run, minblock, plan, infer).
  double p2p_bandwidth() const {
    return kind == "ici" && xla_link_bandwidth > 0 ? xla_link_bandwidth
                                                   : bandwidth * p2p_efficiency;
  }
};

struct ClusterPreset {
  std::string name, gpu, platform, intra, inter, source;
  int gpus_per_node = 8;
  // Optional (docs/models.md, "Cluster fields"); the defaults are the plain
  // cluster: one NIC per GPU, rail-optimised leaves, no oversubscription, one
  // NVLink switch per node.
  int nics_per_node = 0;                // 0: one per GPU
  std::string inter_topology = "rail";  // rail | fattree
  double oversubscription = 1;          // leaf uplinks carry 1/R of the leaf's NIC bandwidth
  int nvlink_domain = 0;                // GPUs on one NVLink fabric; 0: one node
  std::vector<int> slice;               // torus: the slice's dimensions ("4x4x4"); empty: any
  bool wraparound = true;               // torus: opposite faces joined (false: a mesh)
};

struct PaperRow {
  std::string host;
  double flops, hbm_gb, bandwidth, published_min_block, published_min_seq;
};

class Catalog {
 public:
  static const Catalog& embedded();          // the built-in data (copy it to merge files)
  void merge_file(const std::string& path);  // throws InputError naming the file
  void merge_json_text(const std::string& text, const std::string& origin);
  // --set SECTION.NAME.FIELD[.FIELD...]=VALUE: one field of one entry moved
  // (docs/models.md, "Moving an assumption"): the entry is re-read with the
  // new value, so every check a catalog file gets applies, and an assumed
  // field's range is dropped (the user chose the value). Arrays of named
  // objects are addressed by name (kernels.fa2.ops.merge-out.bytes) or index.
  void set(const std::string& key, const std::string& value);
  // The keys --set moved, in order: `--explain` says "--set" for their source.
  const std::vector<std::string>& moved() const { return moved_; }
  bool moved(const std::string& key) const;

  const Device& device(const std::string& name) const;  // throws InputError listing choices
  const Interconnect& interconnect(const std::string& name) const;
  const ClusterPreset& cluster(const std::string& name) const;
  const KernelSpec& kernel(const std::string& name) const;  // --kernel
  const CommLibrary& comm_library(const std::string& name) const;
  std::vector<std::string> kernel_names() const;
  const std::vector<KernelSpec>& kernels() const { return kernels_; }
  std::vector<std::string> device_names() const;
  std::vector<std::string> interconnect_names() const;
  std::vector<std::string> cluster_names() const;
  const std::vector<Device>& devices() const { return devices_; }
  const std::vector<Interconnect>& interconnects() const { return interconnects_; }
  const std::vector<ClusterPreset>& clusters() const { return clusters_; }
  const std::vector<PaperRow>& paper_table2() const { return paper_; }
  // The ranged assumptions behind `hw`: its device's and its intra/inter
  // links', each only while `hw` still carries the catalog's value (a flag
  // such as --efficiency or --latency replaced it otherwise).
  std::vector<Assumption> assumptions(const Hardware& hw) const;
  const std::string& paper_table2_source() const { return paper_source_; }

 private:
  std::vector<Device> devices_;
  std::vector<Interconnect> interconnects_;
  std::vector<ClusterPreset> clusters_;
  std::vector<KernelSpec> kernels_;
  std::vector<CommLibrary> comm_libraries_;
  std::vector<PaperRow> paper_;
  std::string paper_source_;
  // Each entry's JSON as last merged ("devices/h100-sxm"): what a patch entry
  // ("patch": true in a --catalog file) and --set start from.
  std::map<std::string, std::string> raw_;
  std::vector<std::string> moved_;
};

// The catalog's sections a --set key or a patch entry may name.
const std::vector<std::string>& catalog_sections();

}  // namespace ringsim
