#pragma once
// What is being run (layout, sizes, model shape) and on what (resolved hardware).
// Plain data shared by the analytic model, the simulator, the kernels' emulator
// and the planner.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/core/measured_curve.hpp"

namespace ringsim {

// Most tokens one run may hold (devices x block, or a planned context): 2^40,
// so products of two token counts stay within 2^80 and checked 64-bit math
// (models/core/checked.hpp) refuses rather than wraps.
inline constexpr std::int64_t kMaxTokens = std::int64_t{1} << 40;

enum class Layout { Ring, Striped, Zigzag, Ulysses, Allgather, Hybrid };
enum class Pass { Fwd, Bwd, FwdBwd };
enum class DType { BF16, FP16, FP32 };
enum class Platform { Flat, Nodes, Torus2D, Torus3D, FatTree };
enum class Scope { Attention, Layer };
// How layouts place packed documents (models/core/documents.hpp): `sequence`
// splits the packed sequence as one; `document` splits every document.
enum class Pack { Sequence, Document };

const std::vector<std::string>& layout_names();
const std::vector<std::string>& pass_names();
const std::vector<std::string>& dtype_names();
const std::vector<std::string>& platform_names();
const std::vector<std::string>& pack_names();
std::string to_string(Layout l);
std::string to_string(Pass p);
std::string to_string(DType d);
std::string to_string(Platform p);
std::string to_string(Pack p);
Layout parse_layout(const std::string& flag, const std::string& s);
Pass parse_pass(const std::string& flag, const std::string& s);
DType parse_dtype(const std::string& flag, const std::string& s);
Platform parse_platform(const std::string& flag, const std::string& s);
Pack parse_pack(const std::string& flag, const std::string& s);
int dtype_bytes(DType d);

struct ModelShape {
  std::string name = "custom";
  int layers = 32, d_model = 4096, heads = 32, kv_heads = 8, head_dim = 128, ffn = 14336;
  int vocab = 128256;
  // The MLP (docs/models.md, "MLP variants"): gated (swiglu, geglu: gate and
  // up projections, their product, then down) or plain (gelu, relu2: one up
  // projection, the activation, then down). ffn is the hidden width either way.
  std::string mlp = "swiglu";
  // Mixture of experts (docs/plan.md, "Mixture of experts"): every layer's
  // MLP is `experts` routed experts of width expert_ffn, of which a token
  // takes experts_per_token, plus shared_experts of the same width that every
  // token takes, and a router (D x experts). 0 experts: a dense model. For a
  // MoE model ffn is the width a token passes through, (top-k + shared) x
  // expert_ffn: what its activations, pointwise ops and FLOPs see.
  int experts = 0, experts_per_token = 0, shared_experts = 0, expert_ffn = 0;
  // Group-limited routing (DeepSeek-V2's device-limited and V3's
  // node-limited routing; config.json n_group, topk_group): the experts in
  // expert_groups equal groups, a token's experts drawn from the
  // groups_per_token groups it picks. 0: no limit.
  int expert_groups = 0, groups_per_token = 0;
  // The first dense_layers layers of a MoE model have a dense MLP of width
  // dense_ffn instead (DeepSeek-V3's first three); ffn is then the layers'
  // mean width.
  int dense_layers = 0, dense_ffn = 0;
  // Multi-head latent attention (DeepSeek-V2/V3, arXiv 2405.04434 sec. 2.1),
  // when kv_lora_rank > 0: Q through a rank q_lora_rank down projection (0:
  // none), K and V up from a shared kv_lora_rank latent, and a decoupled
  // RoPE key of qk_rope_head_dim; each head's query and key have qk_head_dim
  // (RoPE part included), its value v_head_dim. head_dim is then their mean,
  // the width at which an attention kernel does the same FLOPs (QK^T over
  // qk_head_dim, PV over v_head_dim) and a ring moves the same K + V bytes.
  int q_lora_rank = 0, kv_lora_rank = 0, qk_rope_head_dim = 0, qk_head_dim = 0, v_head_dim = 0;
  // Chunked attention (Llama 4's iRoPE; docs/plan.md, "Chunked attention"):
  // when attention_chunk > 0, a token attends (causally) only to the tokens
  // of its own chunk of attention_chunk tokens, in every layer but each
  // global_every-th one (1-based: layers 4, 8, ... for 4), which attends to
  // the whole sequence. 0: every layer global.
  int attention_chunk = 0, global_every = 0;
  std::string source;
  // Tokens per optimizer step the model was published with (0: none given),
  // plan's default batch for it (docs/plan.md, "Global batch").
  std::int64_t global_batch_tokens = 0;
  std::string global_batch_source;
};
const std::vector<ModelShape>& model_shapes();  // embedded models.json
// --layers N: the model at depth n (at least 1), keeping a MoE model's share
// of dense layers (rounded, and at most n - 1 when it had MoE layers) and the
// mean MLP width that follows from it.
void set_layers(ModelShape& s, int n);
const std::vector<std::string>& mlp_names();  // swiglu, geglu, gelu, relu2
bool mlp_gated(const ModelShape& s);

// Bytes per token per layer that the memory-bound ops move in the forward
// pass (bf16): two RMSNorms (read + write D each, 8D), RoPE on Q and K
// (4d(H + kvh)), two residual adds (12D), the MLP's activation fused (SwiGLU
// reads gate and up and writes the product, 6F; a plain one reads its input
// and writes its output, 4F). A lower bound: eager PyTorch moves more.
double pointwise_bytes_per_token(const ModelShape& s);
// Of those, the ones over the residual stream (the norms and residual adds,
// 20D): outside the tensor-parallel regions, so a TP group shards them over
// its ranks only under sequence parallelism; without it every rank runs them
// whole (Korthikanti et al. 2022, sec. 4.2.2).
double residual_stream_bytes_per_token(const ModelShape& s);
// One TP rank's share of a layer's memory-bound bytes per token, `all` of
// them over the whole shape and `residual` of those over the residual
// stream: all over tp under sequence parallelism; without it the residual
// stream's whole on every rank, the rest over tp.
double tp_rank_pointwise_bytes(double all, double residual, double tp, bool sequence_parallel);
inline bool is_moe(const ModelShape& s) {
  return s.experts > 0;
}
inline bool is_mla(const ModelShape& s) {
  return s.kv_lora_rank > 0;
}
// Layers whose MLP is the experts.
inline int moe_layers(const ModelShape& s) {
  return is_moe(s) ? s.layers - s.dense_layers : 0;
}
// Layers that attend to the whole sequence, and layers that attend inside
// their chunk (chunked attention; all global without it).
inline int global_attention_layers(const ModelShape& s) {
  if (s.attention_chunk <= 0) return s.layers;
  return s.global_every > 0 ? s.layers / s.global_every : 0;
}
inline int chunked_attention_layers(const ModelShape& s) {
  return s.layers - global_attention_layers(s);
}
// Whether layer i (0-based) attends inside its chunk: every layer but each
// global_every-th (1-based: layers 4, 8, ... for 4).
inline bool layer_attends_in_chunks(const ModelShape& s, int i) {
  return s.attention_chunk > 0 && (s.global_every <= 0 || (i + 1) % s.global_every != 0);
}
// Projections into the hidden width: 2 gated (gate, up), 1 plain.
int mlp_up_matrices(const ModelShape& s);
inline int mlp_matrices(const ModelShape& s) {
  return mlp_up_matrices(s) + 1;
}
const ModelShape& find_model(const std::string& flag, const std::string& name);

struct Workload {
  std::int64_t devices = 256;
  std::int64_t block = 4096;  // tokens per device (per ring block)
  Layout layout = Layout::Ring;
  bool causal = true;
  Pass pass = Pass::Fwd;
  DType dtype = DType::BF16;
  ModelShape shape;
  int ulysses_degree = 0;  // hybrid only: Ulysses degree (ring degree = devices / it)
  int layers = 1;          // layers this run covers
  Scope scope = Scope::Attention;
  std::int64_t batch = 1;  // sequences per device batch
  int tp = 1;  // tensor-parallel degree: GPUs of one TP group (inside one node) behind each CP rank
  bool sequence_parallel = true;  // TP with sequence parallelism (AG+RS) rather than all-reduces
  // Set by tp_rank_workload on one TP rank's share (tp 1 there): the ranks
  // the residual stream's memory-bound ops shard over, the group's tp under
  // sequence parallelism, else 1 (every rank runs them whole).
  int residual_shard = 1;
  // A mixture-of-experts model's layers (--scope layer; models/analytic/moe.hpp):
  // expert parallelism over `ep` CP ranks (each a TP group; the experts split
  // over the group's GPUs, Megatron-Core's expert TP = TP default), the
  // routing draw's seed, and the TP degree the experts split over, kept by
  // tp_rank_workload when it sets tp to 1 (0: tp).
  std::int64_t ep = 1;
  std::uint64_t routing_seed = 1;
  int expert_tp = 0;
  // Packed documents (models/core/documents.hpp): their lengths in sequence
  // order, summing to seq_len(); attention is causal within each document and
  // empty across. Empty: one document of the whole sequence.
  std::vector<std::int64_t> documents;
  Pack pack = Pack::Sequence;
  // A chunked-attention model (Llama 4): this run's layers are its chunked
  // ones (--layer-kind chunked: the chunks as the documents above), else
  // its global ones.
  bool chunked_layer = false;

  std::int64_t seq_len() const { return devices * block; }
  // Head-parallel (Ulysses) degree and sequence-ring degree; their product is devices.
  std::int64_t ulysses() const;
  std::int64_t ring_degree() const { return devices / ulysses(); }
  int local_heads() const { return static_cast<int>(shape.heads / ulysses()); }
  int local_kv_heads() const { return static_cast<int>(shape.kv_heads / ulysses()); }
};

// USP's usual choice: the largest power of two that divides devices and the KV
// heads and fits in one node, so the all-to-all stays on the fast fabric.
int auto_ulysses_degree(std::int64_t devices, int kv_heads, int gpus_per_node);

// A GEMM tile's fixed cost in K, in elements (the main loop's pipeline fill
// and the epilogue: what a tile costs whatever its K), and the K of the
// shape the device's best-shape GEMM efficiency was measured at (catalog
// gemm_fill; models/kernel/gemm.hpp says how it is charged). fill_k 0: none.
struct GemmFill {
  double fill_k = 0, best_k = 0;
  // The rate at inner dimension k over the best shape's: 1 at k >= best_k
  // (the best shape's rate is the most a GEMM reaches), less below.
  double factor(double k) const;
};

// Hardware resolved from the catalog plus overrides. Bandwidths per direction.
struct Hardware {
  std::string gpu_name = "h100-sxm", gpu_display;
  double flops = 0;            // peak FLOP/s for the workload's dtype
  double efficiency = 0;       // attention fraction of peak (roofline kernel; prior without curves)
  double gemm_efficiency = 0;  // matmul fraction of peak (projections, MLP, logits); 0: efficiency
  double hbm_bytes = 0, hbm_bandwidth = 0;
  // What the runtime takes out of hbm_bytes before a framework allocates
  // (catalog Device): the driver's reserve, the context, the BLAS workspace.
  double hbm_driver_reserved = 0, context_bytes = 0, blas_workspace_bytes = 0;
  bool tpu = false;
  Platform platform = Platform::Nodes;
  int gpus_per_node = 8;
  std::string intra_name, inter_name;
  std::string intra_kind = "nvlink", inter_kind = "network";  // link kinds (catalog "kind")
  double intra_bw = 0, intra_lat = 0;
  double inter_bw = 0, inter_lat = 0;
  // torus2d/torus3d: the slice's dimensions (empty: chosen from the device
  // count) and whether it has wrap-around links (a partial TPU slice does not:
  // the ring's closing hop then crosses the mesh, models/core/torus.hpp).
  std::vector<int> torus_dims;
  bool torus_wraparound = true;
  bool bandwidth_override = false;  // --bandwidth / --latency set every ring link
  // The cluster beyond one NIC per GPU and one NVLink switch per node (catalog
  // "clusters", docs/models.md "Cluster fields"; sim/topology.hpp builds the same):
  int nics_per_node = 0;        // nodes: NICs per node, dividing gpus_per_node; 0: one per GPU
  int nvlink_domain = 0;        // nodes: GPUs on one NVLink fabric (a multiple of gpus_per_node)
  bool inter_fattree = false;   // nodes: leaves by node (fat-tree), not one leaf per NIC rail
  double oversubscription = 1;  // nodes/fattree: leaf uplinks carry 1/R of the leaf's NIC bandwidth
  int leaf_ports = 32;          // NICs per leaf switch (and spines)
  // --overlap none: a step's transfer starts only when its compute is done, as
  // with an MPI whose shared-memory copies run on the computing core and that
  // progresses only inside MPI calls (docs/mpi.md, "Calibration"). Default:
  // the transfer runs during the compute (GPU copy engines, RDMA NICs).
  bool overlap = true;
  std::string compute_model = "roofline";
  // As deployed (docs/models.md, "Hardware as deployed"). `flops` is already
  // the peak at `power_limit_w`; clock_scale is that peak over the rated one,
  // for the rates quoted at rated power elsewhere (kernel curves, FP8 peak).
  double power_limit_w = 0;  // 0: no power model in the catalog (the rated peak)
  double clock_scale = 1;
  // A saturated device at its settled clock (catalog gemm_sustained, at most
  // 1): a dense GEMM's sustained rate over its best-shape rate, bf16 and FP8,
  // and the share of a published attention curve (a burst at the boost
  // clock) a tensor-core attention kernel keeps; on top of clock_scale.
  double gemm_throttle = 1, gemm_throttle_fp8 = 1;
  double attention_throttle = 1;
  // Achievable fraction of hbm_bandwidth for streaming kernels.
  double hbm_efficiency = 1;
  // Ring collectives' achievable bus bandwidth per link class (nominal x the
  // interconnect's collective_efficiency; intra_bw/inter_bw are what a
  // point-to-point transfer gets).
  double intra_coll_bw = 0, inter_coll_bw = 0;
  // The user's own fabric as nccl-tests timed it, per tier (the catalog
  // interconnect's "measured" curves; empty: the model above).
  std::vector<MeasuredCurve> intra_measured, inter_measured;
  // TPU ICI: one link's bandwidth per direction (the catalog's xla_link_bandwidth;
  // 0: not a TPU). xla_collectives: the closed forms time the CP transfers as
  // XLA's collectives on the torus (models/analytic/xla_collectives.hpp); the
  // planner sets it on a TPU, `run` leaves it off so its two engines agree.
  double ici_link_bw = 0;
  bool xla_collectives = false;
  int sm_count = 0;
  std::vector<std::pair<int, int>> gemm_tiles;  // the GEMM library's tiles (rows, columns)
  GemmFill gemm_fill_bf16, gemm_fill_fp8;       // a tile's fixed cost in K (catalog gemm_fill)
  double hbm_achievable() const { return hbm_bandwidth * hbm_efficiency; }

  double effective_flops() const { return flops * efficiency; }
  // FLOP/s of dense matmuls (projections, MLP, the output head).
  double gemm_flops() const {
    return flops * gemm_throttle * (gemm_efficiency > 0 ? gemm_efficiency : efficiency);
  }
  // Per-direction bandwidth and latency of the slowest hop on the ring of
  // `devices` consecutive devices (the hop that bounds every step).
  // `stride`: a device sends to the one `stride` places on (hybrid: its
  // head-parallel degree), so up to `stride` flows leave a node at once and
  // share the NICs they meet.
  double ring_bandwidth(std::int64_t devices, std::int64_t stride = 1) const;
  // nodes: GPUs behind one NIC; GPUs on one NVLink fabric (at least a node).
  int gpus_per_nic() const;
  int nvlink_group() const;
  // Whether some ring hop of `devices` devices (stride as above) goes leaf ->
  // spine -> leaf (where the oversubscription slows it).
  bool ring_crosses_spine(std::int64_t devices, std::int64_t stride = 1) const;
  double ring_latency(std::int64_t devices) const;
  // Kind of that hop's link (what a communication library runs on).
  std::string ring_link_kind(std::int64_t devices) const;
  std::string describe() const;
  // "800 TFLOP/s peak at 500 W" (the power limit where it lowers the peak).
  std::string peak_text() const;
};

// Throws InputError when the shape breaks the layout's constraints (and, with
// tp > 1, when tp does not divide the GPUs per node, the heads, the KV heads
// or the MLP width).
void validate(const Workload& w, const Hardware& hw);

// Tensor parallelism (Workload::tp): each CP rank is a TP group of tp GPUs in
// one node. What one GPU of the group runs: heads / tp query heads, kv_heads /
// tp KV heads, ffn / tp MLP columns (Megatron-LM's column/row split, Shoeybi
// et al. 2019, arXiv 1909.08053 sec. 3); d_model is not split. tp is 1 in the
// result, so the closed forms and the simulator play it as a plain CP run.
// The passes a workload runs, forward (0) then backward (1): the indices
// both engines keep their per-pass arrays by.
std::vector<int> passes_of(const Workload& w);
Workload tp_rank_workload(const Workload& w);
// The hardware as the CP ring sees it when tp GPUs of a node form one CP rank:
// gpus_per_node / tp ranks per node, and the NVLink domain and NICs per node
// divided alike (GPUs per NIC kept where it divides). Shared by `run` and the
// planner.
Hardware group_hardware(const Hardware& hw, std::int64_t tp);

}  // namespace ringsim
