#pragma once
// `ringsim profile --from-trace TRACE.json[.gz] --out FILE`: the attention,
// GEMM and NCCL calls of the user's own PyTorch profiler trace, the attention
// ones as a measured kernel profile that `--profile FILE` reads
// (docs/own-cluster.md, "Kernels from a profiler trace").
#include <string>

namespace ringsim::cli {

struct TraceImportFlags {
  std::string trace, out, gpu, catalog;
  bool json = false;
};

int import_trace(const TraceImportFlags& f);

}  // namespace ringsim::cli
