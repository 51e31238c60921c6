#pragma once
// The published numbers the seed-reproduction experiment sets ringsim's
// `ringattention-jax` beside, as the papers print them, and the model shapes
// of the seed's own codebase. Nothing here is fitted or derived: each table
// names its source.
#include <cstdint>
#include <string>
#include <vector>

namespace ringsim::exp::seed {

// A model configuration of the Ring Attention codebase (LLaMA-style, MHA,
// vocabulary 32000). 1B and 3B: Striped Attention (Brandon et al., arXiv
// 2311.09431) Table 1, "taken from the original Ring Attention codebase".
// 7B and 13B: the LLaMA shapes (the catalog's llama2-7b and llama2-13b have
// the same dimensions). 30B: LLaMA (Touvron et al., arXiv 2302.13971) Table 2
// (d_model 6656, 52 heads, 60 layers); its FFN 17920 is LLaMA's rule
// 2/3 x 4 d_model rounded up to a multiple of 256.
struct SeedModel {
  std::string name;  // "1B", "3B", ...
  int d_model, ffn, layers, heads;
};
inline const std::vector<SeedModel>& seed_models() {
  static const std::vector<SeedModel> m{{"1B", 2048, 5504, 22, 16},
                                        {"3B", 3200, 8640, 26, 32},
                                        {"7B", 4096, 11008, 32, 32},
                                        {"13B", 5120, 13824, 40, 40},
                                        {"30B", 6656, 17920, 60, 52}};
  return m;
}
constexpr int kSeedVocab = 32000;

// Ring Attention (Liu, Zaharia, Abbeel, arXiv 2310.01889) Table 3: the
// longest context in end-to-end training with FSDP (x1e3 tokens; "all of our
// results are obtained using full precision", sec. 4). Columns: vanilla,
// memory-efficient attention, memory-efficient attention and FFN (BPT), Ring
// Attention, and "Ours vs SOTA" (ring / BPT).
struct Table3Row {
  std::string system;  // as the paper names it
  std::string label;   // short, for an axis
  std::string device;  // the catalog device
  std::int64_t chips;  // devices in the system (see kSliceNote)
  std::string model;
  double vanilla_k, memeff_k, bpt_k, ring_k, ours_vs_sota;
};
// TPU slice names count TensorCores on v3 and v4 (two per chip) and chips on
// v5e (Google Cloud TPU docs, "TPU versions"): v3-512 is 256 chips, v4-1024 is
// 512 chips, v5e-256 is 256 chips.
inline const char* const kSliceNote =
    "TPU slice names count TensorCores on v3 and v4 (two per chip) and chips on v5e (Google Cloud "
    "TPU docs): TPUv3-512 = 256 chips, TPUv4-1024 = 512 chips, TPUv5e-256 = 256 chips";
inline const std::vector<Table3Row>& ring_table3() {
  static const std::vector<Table3Row> t{
      {"8x A100 NVLink", "A100 x8", "a100-80gb", 8, "3B", 4, 32, 64, 512, 8},
      {"8x A100 NVLink", "A100 x8", "a100-80gb", 8, "7B", 2, 16, 32, 256, 8},
      {"8x A100 NVLink", "A100 x8", "a100-80gb", 8, "13B", 2, 4, 16, 128, 8},
      {"32x A100 InfiniBand", "A100 x32", "a100-80gb", 32, "7B", 4, 64, 128, 4096, 32},
      {"32x A100 InfiniBand", "A100 x32", "a100-80gb", 32, "13B", 4, 32, 64, 2048, 32},
      {"TPUv3-512", "v3-512", "tpu-v3", 256, "7B", 1, 4, 8, 2048, 256},
      {"TPUv3-512", "v3-512", "tpu-v3", 256, "13B", 1, 2, 8, 1024, 128},
      {"TPUv4-1024", "v4-1024", "tpu-v4", 512, "3B", 8, 16, 32, 16384, 512},
      {"TPUv4-1024", "v4-1024", "tpu-v4", 512, "7B", 4, 8, 16, 8192, 512},
      {"TPUv4-1024", "v4-1024", "tpu-v4", 512, "13B", 4, 8, 16, 4096, 256},
      {"TPUv4-1024", "v4-1024", "tpu-v4", 512, "30B", 2, 4, 8, 2048, 256},
      {"TPUv5e-256", "v5e-256", "tpu-v5e", 256, "3B", 4, 8, 32, 4096, 128},
      {"TPUv5e-256", "v5e-256", "tpu-v5e", 256, "7B", 2, 8, 16, 2048, 128}};
  return t;
}

// Striped Attention (Brandon et al., arXiv 2311.09431): end-to-end training
// speedup of striped over ring and the paper's Theoretical Maximum Speedup
// (TMS), per model, mesh (model parallel, sequence parallel) and block
// (tokens per device = n_seq / sequence parallel). Table 3: 8 A100, mesh
// (2, 4), tiles 2048 x 4096; Table 4: 16 TPU v4, mesh (2, 8), tiles 2048 x
// 2048; Table 5: A100, 1B, meshes (1, 2), (1, 4), (1, 8).
struct StripedPoint {
  std::int64_t block;
  double tms, speedup;
};
struct StripedSeries {
  std::string table;  // "Table 3", ...
  std::string setting, device, model;
  int mp, sp;  // mesh (model parallel, sequence parallel)
  int query_chunk, key_chunk;
  std::vector<StripedPoint> points;
};
inline const std::vector<StripedSeries>& striped_tables() {
  static const std::vector<StripedSeries> t{
      {"Table 3",
       "A100",
       "a100-80gb",
       "1B",
       2,
       4,
       2048,
       4096,
       {{4096, 1.46, 0.95},
        {8192, 1.57, 1.07},
        {16384, 1.65, 1.22},
        {24576, 1.68, 1.30},
        {32768, 1.70, 1.35},
        {49152, 1.71, 1.40},
        {65536, 1.72, 1.41}}},
      {"Table 3",
       "A100",
       "a100-80gb",
       "3B",
       2,
       4,
       2048,
       4096,
       {{4096, 1.38, 0.94},
        {8192, 1.51, 1.09},
        {16384, 1.61, 1.23},
        {24576, 1.65, 1.32},
        {32768, 1.67, 1.36},
        {49152, 1.69, 1.43},
        {65536, 1.71, 1.45}}},
      {"Table 3",
       "A100",
       "a100-80gb",
       "7B",
       2,
       4,
       2048,
       4096,
       {{4096, 1.34, 0.94},
        {8192, 1.47, 1.07},
        {16384, 1.58, 1.23},
        {24576, 1.62, 1.30},
        {32768, 1.65, 1.36},
        {49152, 1.68, 1.39},
        {65536, 1.70, 1.43}}},
      {"Table 4",
       "TPU v4",
       "tpu-v4",
       "1B",
       2,
       8,
       2048,
       2048,
       {{4096, 1.54, 1.06},
        {16384, 1.76, 1.26},
        {32768, 1.81, 1.37},
        {49152, 1.83, 1.43},
        {65536, 1.84, 1.47},
        {81920, 1.85, 1.49},
        {98304, 1.85, 1.51}}},
      {"Table 4",
       "TPU v4",
       "tpu-v4",
       "3B",
       2,
       8,
       2048,
       2048,
       {{4096, 1.45, 1.09},
        {16384, 1.71, 1.36},
        {32768, 1.78, 1.50},
        {49152, 1.81, 1.57},
        {65536, 1.83, 1.60},
        {81920, 1.84, 1.63},
        {98304, 1.84, 1.65}}},
      {"Table 4",
       "TPU v4",
       "tpu-v4",
       "7B",
       2,
       8,
       2048,
       2048,
       {{4096, 1.40, 1.07},
        {16384, 1.67, 1.30},
        {32768, 1.76, 1.44},
        {49152, 1.80, 1.51},
        {65536, 1.81, 1.56},
        {81920, 1.83, 1.59}}},
      {"Table 5",
       "A100",
       "a100-80gb",
       "1B",
       1,
       2,
       2048,
       4096,
       {{4096, 1.22, 0.94}, {8192, 1.31, 1.02}, {16384, 1.38, 1.10}, {24576, 1.41, 1.14}}},
      {"Table 5",
       "A100",
       "a100-80gb",
       "1B",
       1,
       4,
       2048,
       4096,
       {{4096, 1.46, 0.92}, {8192, 1.57, 1.07}, {16384, 1.65, 1.23}, {24576, 1.68, 1.31}}},
      {"Table 5",
       "A100",
       "a100-80gb",
       "1B",
       1,
       8,
       2048,
       4096,
       {{4096, 1.67, 0.93}, {8192, 1.76, 1.11}, {16384, 1.81, 1.29}, {24576, 1.83, 1.37}}}};
  return t;
}

}  // namespace ringsim::exp::seed
