#pragma once
// Long-context inference on a cluster: a whole-model forward with tensor
// parallelism (TP) inside a node and context parallelism (CP) across nodes,
// for the prefill of a long prompt (time to first token, TTFT) and for
// decoding (time per generated token). Attention runs as a pass-KV or pass-Q
// ring (models/core/infer_work.hpp); the projections and MLP at the device's
// GEMM rate; norms, RoPE and residuals at HBM bandwidth; TP all-reduces on
// the intra-node links. Both engines time the same phases from one
// description (InferLayer): the closed forms here sum them, the SimGrid model
// (sim/infer_sim.hpp) plays them on the simulated cluster. Derivations and
// what each number assumes: docs/inference.md.
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/infer_work.hpp"
#include "models/core/workload.hpp"
#include "models/infer/moe.hpp"
#include "models/plan/memory.hpp"

namespace ringsim {

class Implementation;  // models/kernel/implementation.hpp

struct InferRequest {
  ModelShape shape;
  std::int64_t context = 0;  // tokens in the sequence after the prefill (cached + new)
  std::int64_t cached = 0;   // of those, already in the KV cache (persistent KV, multi-turn)
  std::int64_t gpus = 0;
  std::int64_t tp = 1, cp = 1;  // tp x cp == gpus (one model replica)
  Layout layout = Layout::Zigzag;
  bool auto_variant = true;
  InferVariant variant = InferVariant::PassKv;  // when !auto_variant
  std::int64_t decode_tokens = 0;  // tokens generated after the prefill (0: prefill only)
  std::int64_t batch = 1;          // sequences decoded together
  DType dtype = DType::BF16;       // weights, activations, KV cache
  // --precision fp8: the MLP's weights in FP8 and its GEMMs at the FP8 rate,
  // as Meta served Llama 3 405B (row-wise FP8 feed-forward weights).
  bool fp8_mlp = false;
  double fp8_flops = 0, fp8_gemm_efficiency = 0;  // the device's FP8 peak at the power limit
  // Decode replays each step as a CUDA graph (the host launches once): a
  // kernel then costs the device gap, not the host's dispatch.
  bool cuda_graphs = true;
  // A mixture-of-experts model's experts (models/infer/moe.hpp): expert
  // parallelism inside the TP group (1: every expert sliced over tp) or, above
  // tp, across the TP groups of ep / tp neighbouring CP ranks; and the seed of
  // the routing drawn.
  std::int64_t ep = 1;
  std::uint64_t routing_seed = 1;
};

// Throws InputError naming the flag: tp x cp != gpus, TP not dividing the
// heads (or KV heads, unless it is a multiple of them: then KV heads are
// replicated), cached > context, shards that do not divide (check_infer).
void check_request(const InferRequest& r);
// The widths a layer's attention runs at (docs/inference.md, "Multi-head
// latent attention"). Grouped-query attention: head_dim throughout. MLA
// (DeepSeek-V2/V3): the prefill up-projects each head's K and V (the MHA
// form: queries and keys of qk_head_dim, values of v_head_dim; the kernel
// at head_dim, their mean, does the same FLOPs, and a pass-KV ring moves the
// same K + V bytes); a decode step runs the absorbed form (FlashMLA, DeepSeek's
// MQA form): queries of kv_lora_rank + rope dimensions against one latent
// entry per token, outputs of kv_lora_rank.
struct InferDims {
  bool latent = false;  // MLA
  int query_dim = 0, out_dim = 0;
};
InferDims infer_dims(const ModelShape& s, bool decode);
// Elements of one token's KV-cache entry on one GPU, one layer: 2 x KV heads
// / tp x head_dim, or MLA's latent and RoPE key (whole on every TP rank: the
// latent is shared by all heads, as vLLM's and SGLang's TP attention keep it).
double decode_kv_elements_per_token(const ModelShape& s, std::int64_t tp);
// FLOPs of one (query, key) pair of one head in a decode step: 4 x head_dim;
// MLA's absorbed form 2 x (kv_lora_rank + rope) + 2 x kv_lora_rank.
double decode_flops_per_pair(const ModelShape& s);

// One GPU's share of one layer's forward, and the traffic of its phases. Both
// engines read this; nothing in it depends on the network.
struct InferLayer {
  InferWork work;  // attention on one GPU (heads / tp)
  // Per CP rank and ring step: the attention calls, plus the merge of the
  // step's partial output (pass-kv after the first step; none for pass-q,
  // whose partials are merged once they come home).
  std::vector<std::vector<double>> step_s;  // [rank][step]
  std::uint64_t ring_bytes = 0;             // sent after every step but the last
  // Pass-q (and decode with CP): the all-to-all returning each rank's N-1
  // foreign partials (the bytes one rank holds for all N ranks, alltoall_time's unit).
  std::uint64_t return_bytes = 0;
  double merge_s = 0;  // merging the N-1 returned partials (pass-q, and decode with CP)
  double dense_s = 0;  // projections + MLP (GEMM rate, or weight reads when that is slower)
  InferMoe moe;        // of dense_s, one MoE layer's experts (a MoE model's)
  // EP across CP ranks: moe.alltoall_s over the layers (their MoE share), on
  // the layer's path (both engines charge this time).
  double ep_s = 0;
  double pointwise_s = 0;
  double quantise_s = 0;       // of pointwise_s: the FP8 MLP's inputs quantised row-wise
  std::uint64_t tp_bytes = 0;  // each of the layer's two TP all-reduces, bytes per GPU
  int tp_allreduces = 2;       // after attention's output projection and after the MLP
  // One of those all-reduces on the TP group as placed (models/analytic/
  // collectives.hpp: NCCL's ring or tree over NVLink, and over every NIC of
  // the node when TP spans nodes); both engines charge this time.
  double tp_allreduce_s = 0;
  // The layer's kernels' fixed costs: the host's dispatch per kernel
  // (prefill, eager) or the device's gap per kernel (decode under CUDA
  // graphs), charged with the dense phase.
  double fixed_s = 0;
};

// The layer a prefill (decode = false) or one decode step runs; `chunked`:
// one of a chunked-attention model's (Llama 4's) chunked layers, where each
// token attends inside its chunk of attention_chunk tokens (the chunks as
// packed documents over the positions, InferWork::documents; a decode step
// reads its chunk's keys only).
InferLayer infer_layer(const InferRequest& r, const Hardware& hw, const Implementation& im,
                       InferVariant variant, bool decode, bool chunked = false);

// The closed forms' phases of one layer (seconds, one GPU).
struct InferLayerTimes {
  double attention_s = 0;     // ring steps (pass-kv/pass-q) or one step (decode)
  double compute_only_s = 0;  // the ring with free links
  double exposed_s = 0;       // attention_s - compute_only_s
  double return_s = 0;        // pass-q all-to-all / decode gather + broadcast
  double merge_s = 0;
  double dense_s = 0, pointwise_s = 0, tp_s = 0;
  double quantise_s = 0;  // of pointwise_s: the FP8 MLP's inputs quantised row-wise
  double ep_s = 0;        // EP across CP ranks: dispatch + combine, or decode's all-reduce
  double fixed_s = 0;     // of dense_s: the kernels' gaps and any host-bound wait
  InferMoe moe;           // of dense_s: one MoE layer's experts (router, shared, routed)
  double total_s = 0;
  std::vector<double> step_compute_s, step_comm_s;  // slowest rank per step; transfer per step
};
// The CP ring on the hardware as TP leaves it to CP (group_hardware), the TP
// all-reduces on the node's links, and their sum.
InferLayerTimes layer_times(const InferLayer& l, const InferRequest& r, const Hardware& hw);

// Time of one TP all-reduce of `bytes` per GPU over the tp GPUs of one model
// replica, placed tp-innermost (a node's GPUs first; TP16 and TP32 span nodes).
double tp_allreduce_seconds(std::uint64_t bytes, std::int64_t tp, const Hardware& hw);

// Kernels one layer launches: the norms, projections, RoPE, attention (one
// call per ring step), the all-reduces and the MLP's ops (docs/inference.md).
inline constexpr int kInferKernelsPerLayer = 16;

// Memory per GPU (bytes).
struct InferMemory {
  double weights = 0;       // all parameters / tp (each CP rank holds a replica)
  double kv_cache = 0;      // K and V, all layers, context / cp tokens, batch
  double activations = 0;   // the prefill's largest live tensors of one layer
  double ring_buffers = 0;  // pass-kv: two K/V blocks in flight; pass-q: partial outputs
  double overhead = 0;      // the runtime's terms, itemised in `items` with the rest
  double total = 0, hbm = 0;
  // Every term (the five above, the runtime's one by one: the driver's
  // reserve, the CUDA context, NCCL's buffers, the BLAS workspace, the
  // allocator's reserve), as the planner itemises training memory.
  std::vector<PlanMemoryItem> items;
  bool fits() const { return total <= hbm; }
};
InferMemory infer_memory(const InferRequest& r, const Hardware& hw, InferVariant variant);

struct VariantChoice {
  InferVariant variant = InferVariant::PassKv;
  bool automatic = true;
  std::string reason;         // one sentence: message sizes, the shares behind them, the times
  double ttft_s[2] = {0, 0};  // analytic, [pass-kv, pass-q]
  std::uint64_t message_bytes[2] = {0, 0};  // per ring step
  std::uint64_t layer_bytes[2] = {0, 0};    // per rank per layer, return included
};

struct InferResult {
  std::string engine = "analytic";
  VariantChoice choice;
  // Prefill (all layers): TTFT and its parts; the parts sum to the TTFT.
  double ttft_s = 0;
  double attention_s = 0, attention_exposed_s = 0, return_s = 0, merge_s = 0;
  double dense_s = 0, pointwise_s = 0, tp_s = 0, head_s = 0;
  double quantise_s = 0;  // of pointwise_s: the FP8 MLP's inputs quantised row-wise
  double ep_s = 0;        // EP across CP ranks: the dispatch and combine all-to-alls
  double launch_s = 0;    // of dense_s: kernel gaps and host dispatch beyond the device's work
  InferLayerTimes prefill_layer;  // a global attention layer's
  // A chunked-attention model's chunked layers (0 otherwise), and one's times.
  int chunked_layers = 0;
  InferLayerTimes prefill_chunked_layer, decode_chunked_layer;
  // Decode (one token per sequence at the full context).
  double decode_s_per_token = 0, decode_attention_s = 0, decode_dense_s = 0, decode_comm_s = 0,
         decode_tp_s = 0, decode_launch_s = 0;
  double decode_ep_s = 0;   // EP across CP ranks: the partial outputs' all-reduce
  double tokens_per_s = 0;  // batch / decode_s_per_token
  double generation_s = 0;  // ttft + decode_tokens x decode_s_per_token
  InferLayerTimes decode_layer;
  InferMemory memory;
  double prefill_flops = 0;  // useful model FLOPs of the prefill (all GPUs)
  double mfu = 0;            // prefill_flops / (ttft x gpus x peak)
};

// Output head for the prefill's last token / each decoded token, seconds.
double head_seconds(const InferRequest& r, const Hardware& hw, std::int64_t tokens);

// The closed forms, with the variant chosen (or the request's).
InferResult infer(const InferRequest& r, const Hardware& hw, const Implementation& im);

}  // namespace ringsim
