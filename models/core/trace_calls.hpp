#pragma once
// What a PyTorch profiler trace says about the kernels ringsim models: each
// attention, GEMM and NCCL call with its shape and its device time (the sum of
// the kernels its operator launched), and what could not be attributed, with
// why (docs/own-cluster.md, "Kernels from a profiler trace").
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/core/kineto_trace.hpp"
#include "models/core/measured_curve.hpp"

namespace ringsim {

struct AttentionCall {
  std::string op;      // the operator, e.g. aten::_flash_attention_forward
  std::string kernel;  // its longest kernel's name (the attention kernel itself)
  bool backward = false;
  std::string dtype;  // bf16 | fp16 | fp32
  std::int64_t batch = 0, heads = 0, kv_heads = 0, q_len = 0, k_len = 0;
  int head_dim = 0;
  bool causal = false;
  double seconds = 0;  // device time of its kernels
  bool overlapped = false;
  // Score entries the call computes: batch x heads x q x k, or the causal
  // triangle (q (q+1) / 2 per head) when q = k.
  std::uint64_t entries() const;
};

struct GemmCall {
  std::string op, kernel, dtype;
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  double seconds = 0;
  bool overlapped = false;
  double flops() const { return 2.0 * static_cast<double>(batch) * m * n * k; }
};

struct CollectiveCall {
  MeasuredKind kind = MeasuredKind::AllReduce;
  std::string kernel;
  double bytes = 0;  // nccl-tests' size convention for the collective
  int ranks = 0;
  double seconds = 0;
  double busbw() const;  // bytes/s, nccl-tests' bus bandwidth
};

// Kernels that could not be turned into a call, by reason then kernel name.
struct Unattributed {
  std::size_t count = 0;
  double seconds = 0;
};

struct TraceCalls {
  std::vector<AttentionCall> attention;
  std::vector<GemmCall> gemm;
  std::vector<CollectiveCall> collectives;
  // reason -> kernel name -> count and time
  std::map<std::string, std::map<std::string, Unattributed>> unattributed;
  std::size_t kernels = 0;
  double kernel_seconds = 0;  // all kernels' time
};

TraceCalls trace_calls(const KinetoTrace& trace);

// The kernel's short name: the function without `void`, its namespace-free
// template arguments and parameter list cut ("pytorch_flash::flash_fwd_kernel").
std::string short_kernel_name(const std::string& name);

}  // namespace ringsim
